#include "core/tuned_choice.h"

#include <exception>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/file_lock.h"

namespace ptxbench {
namespace {

constexpr std::size_t k_max_file_bytes = 1u << 20;

std::string file_name_of(const std::string& key) {
  std::string name = key;
  for (char& c : name) {
    const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                       c == '_' || c == '-';
    if (!plain) c = '_';
  }
  return name;
}

// One look at the file: its text (to tell later whether it changed) and whether `use` took it.
struct look {
  std::optional<std::string> text;  // nullopt: no file
  bool used = false;
  std::string why_not;
};

look look_at(const std::filesystem::path& path, const std::string& key,
             const std::function<status(const ordered_json&)>& use, ordered_json& taken) {
  look out;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    out.why_not = "nothing remembered yet";
    return out;
  }
  auto text = read_file(path, k_max_file_bytes);
  if (!text) {
    out.text = std::string();
    out.why_not = "the remembered choice is unreadable: " + text.err().message;
    return out;
  }
  out.text = *text;
  auto parsed = parse_json(*text, path.string());
  if (!parsed || !parsed->is_object()) {
    out.why_not = "the remembered choice is unreadable: " +
                  (parsed ? std::string("not a JSON object") : parsed.err().message);
    return out;
  }
  const ordered_json& j = *parsed;
  if (!j.contains("key") || !j["key"].is_string() || j["key"].get<std::string>() != key) {
    out.why_not = fmt::format("{} remembers another key ({}), not {}", path.string(),
                              j.contains("key") ? j["key"].dump() : "none", key);
    return out;
  }
  status usable = make_error("");
  try {
    usable = use(j);
  } catch (const std::exception& e) {
    usable = make_error(e.what());
  }
  if (!usable) {
    out.why_not = "the remembered choice is unusable: " + usable.err().message;
    return out;
  }
  out.used = true;
  taken = j;
  return out;
}

}  // namespace

std::filesystem::path tuned_choice_path(const std::filesystem::path& cache_dir, const std::string& key) {
  return cache_dir / "baselines" / (file_name_of(key) + ".json");
}

std::filesystem::path tuned_choice_lock_path(const std::filesystem::path& cache_dir, const std::string& key) {
  return cache_dir / "locks" / ("baseline-" + file_name_of(key) + ".lock");
}

result<tuned_choice> remember_tuned_choice(const std::filesystem::path& cache_dir, const std::string& key,
                                           const std::function<status(const ordered_json&)>& use,
                                           const std::function<result<ordered_json>()>& tune, double lock_wait_s) {
  tuned_choice out;
  auto tune_now = [&]() -> result<ordered_json> {
    try {
      auto tuned = tune();
      if (tuned && !tuned->is_object()) return make_error("the tuned choice is not a JSON object");
      return tuned;
    } catch (const std::exception& e) {
      return make_error(e.what());
    }
  };
  if (cache_dir.empty()) {
    auto tuned = tune_now();
    if (!tuned) return tuned.err();
    out.choice = std::move(*tuned);
    out.why_tuned = "no cache folder";
    return out;
  }
  out.path = tuned_choice_path(cache_dir, key);

  look first = look_at(out.path, key, use, out.choice);
  if (first.used) {
    out.from_cache = true;
    return out;
  }

  // One tuning per key at a time, and a second look once it is ours: another process may have
  // tuned it while this one waited.
  std::error_code ec;
  std::filesystem::create_directories(cache_dir / "locks", ec);
  auto lock = file_lock::acquire(tuned_choice_lock_path(cache_dir, key), lock_wait_s);
  out.why_tuned = first.why_not;
  if (!lock) out.why_tuned += fmt::format(" (tuned without the lock: {})", lock.err().message);
  if (lock) {
    // Only worth another try when the file changed: `use` already refused what it held.
    look second;
    second.why_not = first.why_not;
    std::optional<std::string> now;
    if (auto text = read_file(out.path, k_max_file_bytes)) now = *text;
    if (now.has_value() && now != first.text) second = look_at(out.path, key, use, out.choice);
    if (second.used) {
      out.from_cache = true;
      out.why_tuned.clear();
      return out;
    }
    out.why_tuned = second.why_not;
    out.stale = first.text.has_value() || now.has_value();
  } else {
    out.stale = first.text.has_value();
  }

  auto tuned = tune_now();
  if (!tuned) return tuned.err();
  ordered_json stored{{"key", key}};
  for (const auto& [field, value] : tuned->items())
    if (field != "key") stored[field] = value;
  out.choice = std::move(stored);
  if (status written = write_file_atomic(out.path, out.choice.dump(2) + "\n"); !written)
    out.why_tuned += fmt::format(" (not remembered: {})", written.err().message);
  return out;
}

}  // namespace ptxbench
