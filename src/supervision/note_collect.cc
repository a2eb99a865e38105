#include "supervision/note_collect.h"

#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/sha256.h"
#include "suite/trace.h"
#include "core/jsonl_file.h"
#include "supervision/note_schema.h"

namespace ptxbench::supervision {
namespace fs = std::filesystem;
namespace {

constexpr const char* k_system = R"(You are an expert in NVIDIA GPU kernel programming: CUDA, inline PTX, Hopper wgmma and TMA, Blackwell tcgen05. You write repair notes.

A model wrote a kernel that failed; another wrote the fixed kernel that passed. Explain what went wrong and how the fix put it right, as notes another model can use when it makes a similar mistake. That model will not see the fixed kernel, so give short snippets as examples, never the whole kernel, and say what to do, not only what was wrong.

Reply with exactly one JSON object that fits this JSON Schema, and nothing else:
```json
{schema}
```)";

constexpr const char* k_user = R"({task}The wrong kernel:
```cuda
{wrong}
```

The feedback it received:
```
{feedback}
```

The fixed kernel (it passed the evaluation):
```cuda
{fixed}
```

Write the repair note as one JSON object.)";

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

struct done_keys {
  std::map<std::string, ordered_json> notes;  ///< key -> its pair hashes
  std::set<std::string> rejected;
};

// Reads what an earlier run wrote (a torn last line is left for the appender to cut).
result<done_keys> read_done(const fs::path& out, const fs::path& rejected) {
  done_keys d;
  std::error_code ec;
  if (fs::exists(out, ec) && fs::file_size(out, ec) > 0) {
    auto c = read_jsonl(out, k_max_notes_file_bytes);
    if (!c) return c.err();
    for (const auto& r : c->records) {
      std::string where = fmt::format("{}:{}", out.string(), r.line);
      auto n = note_from_json(r.value, where);
      if (!n) return n.err().with_context("--out holds something other than notes");
      d.notes[n->pair.key] = {{"wrong", n->pair.wrong_sha256}, {"fixed", n->pair.fixed_sha256},
                              {"seed", n->teacher.is_object() && n->teacher.contains("seed") ? n->teacher["seed"]
                                                                                               : ordered_json(nullptr)}};
    }
  }
  if (fs::exists(rejected, ec) && fs::file_size(rejected, ec) > 0) {
    auto c = read_jsonl(rejected, k_max_notes_file_bytes);
    if (!c) return c.err();
    for (const auto& r : c->records) {
      if (!r.value.is_object() || r.value.value("format", "") != k_rejection_format || !r.value.contains("key") ||
          !r.value["key"].is_string())
        return make_error(fmt::format("{}:{}: not a note rejection record", rejected.string(), r.line));
      d.rejected.insert(r.value["key"].get<std::string>());
    }
  }
  return d;
}

std::string excerpt(const std::string& s) {
  constexpr std::size_t k_max = 2000;
  return s.size() <= k_max ? s : s.substr(0, k_max) + "…";
}

}  // namespace

uint64_t teacher_seed(uint64_t base, const std::string& key) {
  std::string hex = sha256_builder().update(std::to_string(base)).update("\n").update(key).hex_digest();
  return std::stoull(hex.substr(0, 13), nullptr, 16);  // 52 bits: exact for JSON readers that use doubles
}

fs::path rejections_path(const fs::path& notes) {
  fs::path p = notes;
  std::string stem = p.stem().string();
  return p.replace_filename(stem + ".rejected.jsonl");
}

std::vector<agent::chat_message> teacher_messages(const repair_pair& p, const std::string& task_prompt) {
  std::string task = task_prompt.empty()
                         ? fmt::format("Task: {}\n\n", p.source.task)
                         : fmt::format("The task, as the model that wrote the wrong kernel saw it:\n\n{}\n\n", trimmed(task_prompt));
  return {{"system", fmt::format(k_system, fmt::arg("schema", repair_note_schema_text())), ""},
          {"user", fmt::format(k_user, fmt::arg("task", task), fmt::arg("wrong", trimmed(p.wrong_kernel)),
                               fmt::arg("feedback", trimmed(p.feedback)), fmt::arg("fixed", trimmed(p.fixed_kernel))),
           ""}};
}

result<ordered_json> reply_object(const std::string& reply) {
  std::string body;
  std::size_t fence = reply.rfind("```json");
  if (fence != std::string::npos) {
    std::size_t start = reply.find('\n', fence);
    std::size_t end = start == std::string::npos ? std::string::npos : reply.find("```", start);
    if (start != std::string::npos) body = reply.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
  } else {
    std::size_t open = reply.find('{'), close = reply.rfind('}');
    if (open == std::string::npos || close == std::string::npos || close < open)
      return make_error("the reply holds no JSON object");
    body = reply.substr(open, close - open + 1);
  }
  auto j = parse_json(body, "the reply's JSON");
  if (!j) return j.err();
  if (!j->is_object()) return make_error(fmt::format("the reply's JSON is {}, not an object", json_type_name(*j)));
  return j;
}

result<collect_outcome> collect_notes(const std::vector<repair_pair>& pairs, const std::vector<std::string>& task_prompts,
                                      const collect_options& o, collect_services& s) {
  const fs::path rejected_path = rejections_path(o.out);
  auto done = read_done(o.out, rejected_path);
  if (!done) return done.err();
  collect_outcome out;
  out.pairs = static_cast<int>(pairs.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& p = pairs[i];
    if (auto it = done->notes.find(p.key); it != done->notes.end()) {
      if ((*it).second["wrong"] != p.wrong_sha256 || (*it).second["fixed"] != p.fixed_sha256)
        return make_error(fmt::format("{}: the note for pair '{}' was written for other kernels (the pairs changed); "
                                      "collect into a new --out",
                                      o.out.string(), p.key));
      // A note written under another --seed: finishing the file with this one would mix two settings.
      const auto& seed = (*it).second["seed"];
      if (!seed.is_null() && seed != teacher_seed(o.seed, p.key))
        return make_error(fmt::format("{}: the note for pair '{}' was written with another --seed (teacher.seed {}); "
                                      "resume with the same --seed or collect into a new --out",
                                      o.out.string(), p.key, seed.dump()));
      ++out.already_done;
      continue;
    }
    if (done->rejected.count(p.key) && !o.retry_rejected) {
      ++out.already_rejected;
      continue;
    }
    todo.push_back(i);
  }
  auto notes = jsonl_appender::open(o.out, k_note_format);
  if (!notes) return notes.err();
  auto rejections = jsonl_appender::open(rejected_path, k_rejection_format);
  if (!rejections) return rejections.err();

  std::mutex m;
  std::size_t next = 0;
  std::atomic<bool> stop{false};
  auto halt = [&](exit_status st, const std::string& msg) {
    std::lock_guard lock(m);
    if (out.status == exit_status::ok) {
      out.status = st;
      out.message = msg;
    }
    stop = true;
  };
  auto log = [&](const std::string& line) {
    if (!s.log) return;
    std::lock_guard lock(m);
    std::fprintf(s.log, "ptxbench: %s\n", line.c_str());
  };
  auto worker = [&] {
    while (true) {
      if (s.interrupt && s.interrupt->load()) halt(exit_status::interrupted, "interrupted");
      if (stop) return;
      std::size_t i;
      {
        std::lock_guard lock(m);
        if (next >= todo.size()) return;
        i = todo[next++];
      }
      const repair_pair& p = pairs[i];
      auto messages = teacher_messages(p, i < task_prompts.size() ? task_prompts[i] : std::string());
      ordered_json attempts = ordered_json::array();
      bool written = false;
      const uint64_t seed = teacher_seed(o.seed, p.key);
      for (int attempt = 0; attempt < o.max_attempts; ++attempt) {
        agent::call_result r = s.teacher->complete({messages, attempt, seed + static_cast<uint64_t>(attempt)});
        {
          std::lock_guard lock(m);
          ++out.teacher_calls;
        }
        if (!r.ok()) {
          const auto& f = r.failure;
          if (f.kind == agent::failure_kind::context_overflow) {
            attempts.push_back({{"attempt", attempt}, {"problems", {"the prompt does not fit the teacher's context window: " + f.message}}});
            break;
          }
          if (f.kind == agent::failure_kind::cancelled) return halt(exit_status::interrupted, "interrupted");
          return halt(exit_status::infra, fmt::format("teacher failed on pair {}: {}", p.key, f.message));
        }
        const std::string& reply = r.reply->content;
        std::vector<std::string> problems;
        auto obj = reply_object(reply);
        if (!obj) problems.push_back(obj.err().message);
        else problems = repair_note_schema().problems(*obj);
        if (problems.empty()) {
          ordered_json teacher = {{"model", o.teacher}, {"attempts", attempt + 1}, {"prompt_version", k_note_prompt_version},
                                  {"seed", seed}, {"timestamp", utc_timestamp()}};
          auto note = make_note(p, *obj, teacher);
          if (!note) { problems.push_back(note.err().message); }
          else {
            if (auto st = (*notes)->append(to_json(*note)); !st) return halt(exit_status::infra, st.err().message);
            written = true;
            break;
          }
        }
        attempts.push_back({{"attempt", attempt}, {"problems", problems}, {"reply_excerpt", excerpt(reply)}});
        std::string complaint = "Your reply does not fit the schema:\n";
        for (const auto& pr : problems) complaint += "- " + pr + "\n";
        complaint += "Reply with only the corrected JSON object.";
        messages.push_back({"assistant", reply, ""});
        messages.push_back({"user", complaint, ""});
      }
      if (written) {
        {
          std::lock_guard lock(m);
          ++out.written;
        }
        log(fmt::format("note written for {}", p.key));
        continue;
      }
      ordered_json rec = {{"format", k_rejection_format}, {"key", p.key}, {"teacher", o.teacher}, {"seed", seed},
                          {"wrong_kernel_sha256", p.wrong_sha256}, {"fixed_kernel_sha256", p.fixed_sha256},
                          {"attempts", attempts}, {"timestamp", utc_timestamp()}};
      if (auto st = (*rejections)->append(rec); !st) return halt(exit_status::infra, st.err().message);
      {
        std::lock_guard lock(m);
        ++out.rejected;
      }
      log(fmt::format("no valid note for {} after {} attempts (recorded in {})", p.key, attempts.size(),
                      rejected_path.string()));
    }
  };
  std::vector<std::thread> workers;
  int n = std::max(1, std::min<int>(o.parallel, static_cast<int>(todo.size())));
  for (int w = 0; w < n; ++w) workers.emplace_back(worker);
  for (auto& w : workers) w.join();
  if (out.status != exit_status::ok) out.message += "; finished notes are saved: run the same command again to resume";
  return out;
}

}  // namespace ptxbench::supervision
