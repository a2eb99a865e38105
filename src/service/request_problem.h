#pragma once
// Why the HTTP API refuses a request, in upstream's two shapes (FlashInfer-Bench's serve app is
// FastAPI): a request that does not match the endpoint's schema (not JSON, a missing or mistyped
// field, a value out of range) is 422 with a list of field problems {loc, msg, type}; a well-formed
// request that cannot be served (unknown definition, binary source, a limit) is 400 with one line.
// Both bodies are {"detail": ...}.

#include <string>
#include <vector>

#include "core/json_check.h"

namespace ptxbench::service {

/// One entry of a 422 body: where (["body", "solution", "author"], ["query", "timeout"]), what is
/// wrong (one line) and pydantic's name for the kind of problem ("missing", "greater_than", ...).
struct field_problem {
  ordered_json loc = ordered_json::array();
  std::string msg;
  std::string type;
};

struct request_refusal {
  int status = 400;                   ///< 400 or 422
  std::string detail;                 ///< 400: the one line
  std::vector<field_problem> fields;  ///< 422: at least one

  static request_refusal bad_request(std::string detail);
  static request_refusal invalid(std::vector<field_problem> fields);
  static request_refusal invalid(field_problem field);
  /// One line for people and logs: the 400 detail, or the first field problem as "loc: msg".
  [[nodiscard]] std::string one_line() const;
  /// {"detail": "..."} or {"detail": [{"type", "loc", "msg"}, ...]}.
  [[nodiscard]] ordered_json body() const;
};

/// ["body", "solution", "sources", 0, "path"] for the JSON path "solution.sources[0].path" under `root`.
ordered_json location_of(const std::string& json_path, const std::string& root = "body");

/// A strict JSON reader's error (core/json_check.h: "PATH: MESSAGE", "(and N more)" after the first
/// when there were several) as the field problem of its first entry under `root`: "missing" for an
/// absent required field, "value_error" for the rest.
field_problem field_problem_of(const error& e, const std::string& root = "body");

/// A body that is not JSON (pydantic's json_invalid, at the byte where parsing stopped).
field_problem invalid_json(const std::string& text);

/// A body that is JSON but not an object where the endpoint reads one.
field_problem not_an_object();

}  // namespace ptxbench::service
