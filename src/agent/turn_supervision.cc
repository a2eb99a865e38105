#include "agent/turn_supervision.h"

#include <fmt/format.h>

namespace ptxbench::agent {
namespace {

std::string first_difference(const ordered_json& have, const ordered_json& want, const std::string& path) {
  if (have == want) return "";
  if (have.is_object() && want.is_object()) {
    for (const auto& [key, value] : want.items()) {
      ordered_json other = have.contains(key) ? have[key] : ordered_json(nullptr);
      if (auto d = first_difference(other, value, path + "." + key); !d.empty()) return d;
    }
    for (const auto& [key, value] : have.items())
      if (!want.contains(key)) return first_difference(value, nullptr, path + "." + key);
    return "";
  }
  std::string a = have.dump(), b = want.dump();
  constexpr std::size_t k_max = 80;
  if (a.size() > k_max) a = a.substr(0, k_max) + "…";
  if (b.size() > k_max) b = b.substr(0, k_max) + "…";
  return fmt::format("{} is {} in the file but {} now", path, a, b);
}

// The arm a supervision record names: a trajectory's record carries it; a sweep plan's record
// (guidance and notes settings) implies it as run_supervision::arm builds it (guidance arm, then
// the notes' retrieval mode, joined by '+').
std::string arm_of(const ordered_json& s) {
  if (!s.is_object()) return "base";
  if (s.contains("arm") && s["arm"].is_string()) return s["arm"].get<std::string>();
  std::string a;
  if (s.contains("guidance") && s["guidance"].is_object()) a = s["guidance"].value("arm", "");
  if (s.contains("notes") && s["notes"].is_object()) {
    std::string mode = s["notes"].value("mode", "");
    if (!mode.empty()) a += (a.empty() ? "" : "+") + mode;
  }
  return a.empty() ? "base" : a;
}

}  // namespace

std::string supervision_mismatch(const ordered_json& have, const ordered_json& want) {
  if (have.is_null() && want.is_null()) return "";
  if (have.is_null())
    return fmt::format("the file was written without supervision but this run uses arm '{}'", arm_of(want));
  if (want.is_null())
    return fmt::format("the file was written under supervision arm '{}' but this run uses none", arm_of(have));
  // The arm is derived from the rest: name the file or setting that differs, when one does.
  if (have.is_object() && want.is_object()) {
    ordered_json a = have, b = want;
    a.erase("arm");
    b.erase("arm");
    if (auto d = first_difference(a, b, "supervision"); !d.empty()) return d;
  }
  return first_difference(have, want, "supervision");
}

}  // namespace ptxbench::agent
