#pragma once
// Note collection (`ptxbench notes collect`, docs/supervision.md): each wrong/fixed pair is shown to a
// teacher model, which writes a structured repair note (note_schema.h). A reply that does not fit
// the schema is sent back with the complaints, up to a bounded number of attempts; a pair whose
// attempts all fail is recorded as rejected. Notes and rejections are appended to JSON Lines files
// with fsync after each record, keyed by the pair, so a kill -9 at any moment loses at most the pair
// in flight and the same command resumes without repeating a finished pair.

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "agent/provider.h"
#include "core/exit_status.h"
#include "core/result.h"
#include "supervision/repair_note.h"

namespace ptxbench::supervision {

inline constexpr const char* k_rejection_format = "ptxbench.repair-note-rejection/1";
inline constexpr const char* k_note_prompt_version = "repair-note/1";

struct collect_options {
  std::filesystem::path out;   ///< NOTES.jsonl; rejections go to NOTES.rejected.jsonl beside it
  int max_attempts = 3;        ///< teacher replies per pair: the first and up to two corrections
  int parallel = 4;            ///< pairs in flight
  std::string teacher;         ///< the teacher model's name, recorded in every note
  bool retry_rejected = false; ///< ask again for pairs a previous run rejected
  uint64_t seed = 0;           ///< base of every pair's teacher seed (teacher_seed), recorded per note
};

struct collect_services {
  agent::provider* teacher = nullptr;            ///< thread-safe
  const std::atomic<bool>* interrupt = nullptr;  ///< Ctrl-C: finish the pairs in flight, start no more
  std::FILE* log = nullptr;                      ///< one line per pair; null: quiet
};

struct collect_outcome {
  exit_status status = exit_status::ok;
  std::string message;       ///< one line for a stop (what stopped it, how to resume)
  int pairs = 0;
  int already_done = 0;      ///< notes found in the file
  int already_rejected = 0;  ///< rejections found (skipped unless retry_rejected)
  int written = 0;
  int rejected = 0;
  int teacher_calls = 0;
};

/// The seed of a pair's teacher calls: 52 bits of sha256(base, key), so it depends on the pair and
/// not on the order pairs are collected in (attempt k sends seed + k). Sent where the teacher's model
/// config enables seeds (`send_seed`), recorded as the note's teacher.seed either way.
uint64_t teacher_seed(uint64_t base, const std::string& key);

/// Path of the rejections file for a notes file ("NOTES.rejected.jsonl").
std::filesystem::path rejections_path(const std::filesystem::path& notes);

/// The teacher's first messages for a pair: the system message (the role and the schema) and the
/// user message (the task prompt the student saw, the wrong kernel, its feedback, the fixed kernel).
std::vector<agent::chat_message> teacher_messages(const repair_pair& p, const std::string& task_prompt);

/// Takes the JSON object out of a teacher reply: the last ```json block, else the text from the first
/// '{' to the last '}'. Fails with a one-line reason.
result<ordered_json> reply_object(const std::string& reply);

/// Collects notes for every pair not yet done. Fails only for bad input (an existing output that is
/// not a notes file, or one written for other pairs under the same keys); API failures stop the run
/// with exit_status::infra in the outcome.
result<collect_outcome> collect_notes(const std::vector<repair_pair>& pairs, const std::vector<std::string>& task_prompts,
                                      const collect_options& options, collect_services& services);

}  // namespace ptxbench::supervision
