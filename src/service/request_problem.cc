#include "service/request_problem.h"

#include <fmt/format.h>

#include "core/text.h"

namespace ptxbench::service {

request_refusal request_refusal::bad_request(std::string detail) {
  return {400, ptxbench::one_line(std::move(detail)), {}};
}

request_refusal request_refusal::invalid(std::vector<field_problem> fields) { return {422, "", std::move(fields)}; }

request_refusal request_refusal::invalid(field_problem field) {
  return invalid(std::vector<field_problem>{std::move(field)});
}

std::string request_refusal::one_line() const {
  if (status != 422 || fields.empty()) return detail;
  std::string where;
  for (const auto& part : fields.front().loc) where += (where.empty() ? "" : ".") + (part.is_string() ? part.get<std::string>() : part.dump());
  std::string out = fmt::format("{}: {}", where, fields.front().msg);
  if (fields.size() > 1) out += fmt::format(" (and {} more)", fields.size() - 1);
  return out;
}

ordered_json request_refusal::body() const {
  if (status != 422) return {{"detail", detail}};
  ordered_json list = ordered_json::array();
  for (const auto& f : fields) list.push_back({{"type", f.type}, {"loc", f.loc}, {"msg", f.msg}});
  return {{"detail", list}};
}

ordered_json location_of(const std::string& json_path, const std::string& root) {
  ordered_json loc = ordered_json::array({root});
  std::string part;
  auto flush = [&] {
    if (!part.empty()) loc.push_back(part);
    part.clear();
  };
  for (std::size_t i = 0; i < json_path.size(); ++i) {
    char c = json_path[i];
    if (c == '.') {
      flush();
    } else if (c == '[') {
      flush();
      auto close = json_path.find(']', i);
      if (close == std::string::npos) break;
      std::string digits = json_path.substr(i + 1, close - i - 1);
      bool numeric = !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
      if (numeric) loc.push_back(std::stoll(digits));
      else loc.push_back(digits);
      i = close;
    } else {
      part += c;
    }
  }
  flush();
  return loc;
}

field_problem field_problem_of(const error& e, const std::string& root) {
  // json_errors writes "PATH: MESSAGE"; its paths ("solution.sources[0].path") never hold ": ".
  std::string text = e.message;
  if (auto more = text.rfind(" (and "); more != std::string::npos && text.back() == ')') text.erase(more);
  auto colon = text.find(": ");
  std::string path = colon == std::string::npos ? "" : text.substr(0, colon);
  std::string message = colon == std::string::npos ? text : text.substr(colon + 2);
  // json_errors' words for a required field that is absent or null (core/json_check.cc).
  const bool missing = message == "missing required field";
  return {location_of(path, root), missing ? "Field required" : message, missing ? "missing" : "value_error"};
}

field_problem invalid_json(const std::string& text) {
  std::size_t at = text.size();
  try {
    auto parsed = ordered_json::parse(text);  // only for the position of the error
    (void)parsed;
  } catch (const ordered_json::parse_error& e) {
    at = e.byte > 0 ? e.byte - 1 : 0;
  }
  return {ordered_json::array({"body", at}), "JSON decode error", "json_invalid"};
}

field_problem not_an_object() {
  return {ordered_json::array({"body"}), "Input should be a valid dictionary or object to extract fields from",
          "model_attributes_type"};
}

}  // namespace ptxbench::service
