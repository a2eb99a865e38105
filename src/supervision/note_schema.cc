#include "supervision/note_schema.h"

#include <cstdlib>

namespace ptxbench::supervision {
namespace {

// Lengths are bounds on what is useful inside a feedback message (at most 8 instruction notes are
// shown per failed turn), not on what a teacher could say.
constexpr const char* k_schema = R"json({
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "ptxbench.repair-note/1#note",
  "title": "PTXBench repair note",
  "description": "What a wrong kernel got wrong and how its fix put it right, written so that a model facing a similar failure can use it without seeing the fixed kernel.",
  "type": "object",
  "additionalProperties": false,
  "required": ["summary", "instruction_notes", "tags"],
  "properties": {
    "summary": {
      "type": "string", "minLength": 1, "maxLength": 1500,
      "description": "Two to five sentences: what the failure was, its root cause, and what the fix changed."
    },
    "instruction_notes": {
      "type": "array", "minItems": 1, "maxItems": 8,
      "description": "One entry per instruction (PTX or CUDA construct) whose misuse caused the failure or whose correct use the fix needed.",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["instruction", "shape_context", "correct_example", "wrong_example", "operand_contract",
                     "required_sequence", "diagnostics", "do_not_do"],
        "properties": {
          "instruction": {"type": "string", "minLength": 1, "maxLength": 200,
                          "description": "The instruction or construct, e.g. wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
          "shape_context": {"type": "string", "minLength": 1, "maxLength": 1000,
                            "description": "Tile shapes, layouts, dtypes and problem sizes in which the note holds."},
          "correct_example": {"type": "string", "minLength": 1, "maxLength": 4000,
                              "description": "A short correct use (a few lines, not the whole fixed kernel)."},
          "wrong_example": {"type": "string", "minLength": 1, "maxLength": 4000,
                            "description": "The wrong use as the failing kernel had it (a few lines)."},
          "operand_contract": {"type": "string", "minLength": 1, "maxLength": 2000,
                               "description": "What each operand must be: registers, descriptors, alignment, swizzle, state spaces."},
          "required_sequence": {"type": "array", "maxItems": 16,
                                "items": {"type": "string", "minLength": 1, "maxLength": 500},
                                "description": "The ordered steps the instruction needs (fences, barriers, commits, waits); empty when none."},
          "diagnostics": {"type": "string", "minLength": 1, "maxLength": 1500,
                          "description": "How this mistake shows up: compiler messages, error classes, symptoms in the output."},
          "do_not_do": {"type": "array", "minItems": 1, "maxItems": 12,
                        "items": {"type": "string", "minLength": 1, "maxLength": 500},
                        "description": "Mistakes to avoid, one per entry."}
        }
      }
    },
    "tags": {
      "type": "array", "minItems": 1, "maxItems": 12,
      "items": {"type": "string", "minLength": 1, "maxLength": 40},
      "description": "Short lowercase labels: instruction families, error classes, problem families (e.g. wgmma, tma, compile_error, gemm)."
    }
  }
})json";

}  // namespace

const std::string& repair_note_schema_text() {
  static const std::string text = k_schema;
  return text;
}

const json_schema& repair_note_schema() {
  static const json_schema schema = [] {
    auto s = json_schema::parse(repair_note_schema_text());
    if (!s) std::abort();  // a constant of this file; SupervisionSchema.ParsesAndRejects keeps it valid
    return std::move(*s);
  }();
  return schema;
}

}  // namespace ptxbench::supervision
