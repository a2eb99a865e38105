#pragma once
// A small JSON Schema (draft 7) validator for the fixed schemas PTXBench owns (the repair-note
// schema a teacher's reply must fit). The schema text is the one source of truth: it is shown to
// the teacher, printed by `ptxbench notes schema`, and enforced here. Written here rather than
// taken from valijson (libvalijson-dev) because Debian's package pulls in 97 packages (Qt, Poco,
// MySQL) for its adapters; the subset below is all our schemas use, and a schema that uses any
// other keyword is refused when it is loaded, so a schema can never be enforced only in part.
//
// Supported: type (one name), properties, required, additionalProperties (boolean), items (one
// schema), minItems, maxItems, minLength, maxLength (in UTF-8 code points), enum; the annotations
// $schema, $id, title, description and examples are ignored.

#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::supervision {

class json_schema {
 public:
  /// Parses and checks a schema; fails for invalid JSON or an unsupported keyword (naming its path).
  static result<json_schema> parse(const std::string& text);

  /// Validates a document: every complaint names the JSON path ("instruction_notes[1].diagnostics").
  [[nodiscard]] status validate(const ordered_json& document) const;
  /// Every complaint, one per line's worth (for telling a teacher all that is wrong at once).
  [[nodiscard]] std::vector<std::string> problems(const ordered_json& document) const;

  [[nodiscard]] const ordered_json& json() const { return m_schema; }

 private:
  ordered_json m_schema;
};

}  // namespace ptxbench::supervision
