#include "service/artifact_bundle.h"

#include <charconv>

#include <fmt/format.h>

namespace ptxbench::service {
namespace {

constexpr std::string_view k_magic = "ptxbench-artifact/1\n";

void put(std::string& out, std::string_view name, std::string_view bytes) {
  out += fmt::format("{} {}\n", name, bytes.size());
  out += bytes;
  out += '\n';
}

result<std::string_view> take(std::string_view& in, std::string_view name) {
  auto nl = in.find('\n');
  if (nl == std::string_view::npos) return make_error(fmt::format("artifact: part '{}' is missing", name));
  std::string_view header = in.substr(0, nl);
  auto space = header.find(' ');
  if (space == std::string_view::npos || header.substr(0, space) != name)
    return make_error(fmt::format("artifact: expected part '{}'", name));
  std::size_t size = 0;
  auto digits = header.substr(space + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), size);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return make_error(fmt::format("artifact: part '{}' has a malformed size", name));
  in.remove_prefix(nl + 1);
  if (in.size() < size + 1 || in[size] != '\n') return make_error(fmt::format("artifact: part '{}' is truncated", name));
  std::string_view bytes = in.substr(0, size);
  in.remove_prefix(size + 1);
  return bytes;
}

}  // namespace

std::string pack_artifact(const artifact_parts& parts) {
  std::string out(k_magic);
  put(out, "verdict", parts.cpu_verdict_json);
  put(out, "shared_object", parts.shared_object);
  return out;
}

result<artifact_parts> unpack_artifact(std::string_view in) {
  if (in.substr(0, k_magic.size()) != k_magic) return make_error("artifact: not a ptxbench artifact");
  in.remove_prefix(k_magic.size());
  artifact_parts parts;
  auto verdict = take(in, "verdict");
  if (!verdict) return verdict.err();
  parts.cpu_verdict_json = std::string(*verdict);
  auto so = take(in, "shared_object");
  if (!so) return so.err();
  parts.shared_object = std::string(*so);
  if (!in.empty()) return make_error("artifact: trailing bytes after the last part");
  return parts;
}

}  // namespace ptxbench::service
