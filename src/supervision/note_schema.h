#pragma once
// The repair note a teacher writes for one wrong/fixed kernel pair (upstream's note fields: a
// summary, per-instruction notes — instruction, shape context, operand contract, required sequence,
// diagnostics, what not to do, a correct and a wrong example — and tags), as a JSON Schema. The
// teacher is shown this schema; a reply that does not fit it is sent back with the complaints.

#include <string>

#include "supervision/json_schema.h"

namespace ptxbench::supervision {

/// The schema's text (JSON Schema draft 7, the subset json_schema supports).
const std::string& repair_note_schema_text();

/// The parsed schema (parsed once; the text is a constant, so this cannot fail at run time — the
/// unit tests parse it).
const json_schema& repair_note_schema();

}  // namespace ptxbench::supervision
