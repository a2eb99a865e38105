#include "adapt/reason.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/file_lock.h"
#include "adapt/kernelgen.h"
#include "adapt/pairs.h"
#include "adapt/staged_dir.h"
#include "core/file_io.h"
#include "core/sha256.h"
#include "core/text.h"
#include "core/jsonl_file.h"
#include "suite/trace.h"

namespace ptxbench::adapt {
namespace fs = std::filesystem;

namespace {

// A reasoning source's manifest, read once, and its kind ("fixit" for a pairs directory,
// "kernelgen" for a kernels directory).
struct source_manifest {
  std::string kind;
  ordered_json manifest;
};

result<source_manifest> read_source_manifest(const fs::path& dir) {
  auto manifest_text = read_text_file(dir / "manifest.json", 256u << 20);
  if (!manifest_text)
    return make_error(fmt::format("{}: not a pairs or kernels directory (no manifest.json)", dir.string()));
  auto manifest = parse_json(*manifest_text, (dir / "manifest.json").string());
  if (!manifest) return manifest.err();
  std::string format = manifest->is_object() ? manifest->value("format", "") : "";
  if (format == k_pairs_format) return source_manifest{"fixit", std::move(*manifest)};
  if (format == k_kernelgen_format) return source_manifest{"kernelgen", std::move(*manifest)};
  return make_error(fmt::format("{}: not a pairs (`ptxbench fixit pairs`) or kernels (`ptxbench kernelgen collect`) "
                                "directory (manifest format {})", dir.string(), format.empty() ? "missing" : format));
}

}  // namespace

result<std::string> reason_source_kind(const fs::path& dir) {
  auto source = read_source_manifest(dir);
  if (!source) return source.err();
  return source->kind;
}

status check_reason_source(const fs::path& dir, const std::string& kind) {
  auto found = reason_source_kind(dir);
  if (!found) return found.err();
  if (kind.empty() || *found == kind) return ok();
  auto what = [](const std::string& k) {
    return k == "fixit" ? std::string("pairs directory (`ptxbench fixit pairs`)")
                        : std::string("kernels directory (`ptxbench kernelgen collect`)");
  };
  return make_error(fmt::format("{}: a {}; `ptxbench {} reason` takes a {}", dir.string(), what(*found), kind, what(kind)));
}

result<reason_source> load_reason_source(const fs::path& dir) {
  std::error_code ec;
  reason_source src;
  src.dir = fs::weakly_canonical(fs::absolute(dir, ec), ec).string();
  auto source = read_source_manifest(dir);
  if (!source) return source.err();
  ordered_json& manifest = source->manifest;
  if (source->kind == "fixit") {
    auto pairs = load_pairs(dir);
    if (!pairs) return pairs.err();
    src.kind = "fixit";
    src.sha256 = manifest["files"].value("pairs.jsonl", "");
    for (const auto& p : *pairs) {
      if (p.repair_prompt.empty())
        return make_error(fmt::format("{}: pair {} has no repair prompt (the directory was written before pairs kept "
                                      "it); run `ptxbench fixit pairs` again", dir.string(), p.id));
      src.items.push_back({p.id, "fixit", p.task, p.repair_system_prompt, p.repair_prompt, p.wrong.kernel,
                           p.correct.kernel});
    }
  } else {
    auto kernels = load_kernels(dir);
    if (!kernels) return kernels.err();
    src.kind = "kernelgen";
    src.sha256 = manifest["files"].value("kernels.jsonl", "");
    for (const auto& k : *kernels)
      src.items.push_back({k.id, "kernelgen", k.task, k.system_prompt, k.task_prompt, "", k.kernel});
  }
  return src;
}

void apply_teacher_sampling(agent::model_spec& model, const teacher_sampling& sampling) {
  auto set = [&](ordered_json& where, const char* key, const std::optional<double>& value) {
    if (value) where[key] = *value;
  };
  switch (model.api) {
    case agent::api_kind::openai:
    case agent::api_kind::anthropic:
      set(model.request, "temperature", sampling.temperature);
      set(model.request, "top_p", sampling.top_p);
      break;
    case agent::api_kind::gemini:
      if (!model.request.contains("generationConfig") || !model.request["generationConfig"].is_object())
        model.request["generationConfig"] = ordered_json::object();
      set(model.request["generationConfig"], "temperature", sampling.temperature);
      set(model.request["generationConfig"], "topP", sampling.top_p);
      break;
    case agent::api_kind::replay: break;
  }
}

namespace {

constexpr const char* k_plan_format = "ptxbench.reason-plan/1";

ordered_json new_row_state(const std::string& id, const std::string& teacher) {
  return {{"id", id}, {"status", "pending"}, {"teacher", teacher}, {"attempts", ordered_json::array()},
          {"rationale", nullptr}};
}

// Everything the plan must agree on for the rows on disk to answer the same question.
status check_plan(const ordered_json& have, const ordered_json& want) {
  for (const char* key : {"kind", "source_sha256", "model", "rules", "sampling", "items"}) {
    ordered_json a = have.contains(key) ? have[key] : ordered_json(nullptr);
    if (a == want[key]) continue;
    if (std::string(key) == "items") return make_error("the rows differ (a different pairs or kernels directory)");
    return make_error(fmt::format("{} is {} there but {} now", key, a.dump(), want[key].dump()));
  }
  return ok();
}

class reasoner {
 public:
  reasoner(const reason_options& o, reason_services& s, const reason_source& src) : m_o(o), m_s(s), m_src(src) {}

  void run() {
    std::vector<std::thread> workers;
    int n = std::max(1, std::min<int>(m_o.parallel, static_cast<int>(m_src.items.size())));
    for (int w = 0; w < n; ++w) workers.emplace_back([this] { work(); });
    for (auto& w : workers) w.join();
  }

  exit_status end_status() const { return m_status; }
  const std::string& message() const { return m_message; }

 private:
  fs::path row_file(const std::string& id) const { return m_o.out_dir / "rows" / (id + ".json"); }

  void stop(exit_status st, const std::string& msg) {
    std::lock_guard lock(m_mutex);
    if (m_status == exit_status::ok) {
      m_status = st;
      m_message = msg;
    }
    m_stop = true;
  }

  bool stopping() {
    if (m_s.interrupt && m_s.interrupt->load()) stop(exit_status::interrupted, "interrupted");
    return m_stop.load();
  }

  void log(const std::string& line) {
    if (m_o.quiet || !m_s.log) return;
    std::lock_guard lock(m_mutex);
    std::fprintf(m_s.log, "%s\n", line.c_str());
  }

  void work() {
    while (!stopping()) {
      std::size_t i = m_next.fetch_add(1);
      if (i >= m_src.items.size()) return;
      if (auto st = reason_one(m_src.items[i]); !st) stop(exit_status::usage, st.err().message);
    }
  }

  status save(const ordered_json& state) {
    return write_file_atomic(row_file(state["id"].get<std::string>()), dump_pretty(state) + "\n");
  }

  status reason_one(const reason_item& item) {
    ordered_json state = new_row_state(item.id, m_s.model->name);
    std::error_code ec;
    if (fs::exists(row_file(item.id), ec)) {
      auto text = read_text_file(row_file(item.id), 1u << 30);
      if (!text) return text.err();
      auto j = parse_json(*text, row_file(item.id).string());
      if (!j) return j.err();
      state = std::move(*j);
    }
    bool asked = false;
    while (state["status"] == "pending") {
      if (stopping()) return ok();
      asked = true;
      int attempt = static_cast<int>(state["attempts"].size()) + 1;
      if (attempt > m_o.rules.max_attempts) {
        state["status"] = "failed";
        break;
      }
      std::vector<std::string> previous;
      if (!state["attempts"].empty())
        for (const auto& p : state["attempts"].back()["problems"]) previous.push_back(p.get<std::string>());
      auto prompt = make_rationale_prompt(item, m_o.rules, previous);
      agent::completion_request req;
      req.messages = {{"system", prompt.system, ""}, {"user", prompt.user, ""}};
      req.turn = attempt - 1;  // a replay teacher answers attempt k with its k-th reply
      agent::call_result r = m_s.teacher->complete(req);
      ordered_json record = {{"attempt", attempt}, {"timestamp", utc_timestamp()}};
      if (!r.ok()) {
        const auto& f = r.failure;
        if (f.kind == agent::failure_kind::context_overflow) {
          record["problems"] = ordered_json::array({"context_overflow: " + f.message});
          state["attempts"].push_back(record);
          state["status"] = "failed";
          break;
        }
        if (f.kind == agent::failure_kind::cancelled) {
          stop(exit_status::interrupted, "interrupted");
          return ok();
        }
        std::string what = f.kind == agent::failure_kind::auth ? "the API refused the key" : "model API failure";
        stop(exit_status::infra, fmt::format("{} on row {}: {}", what, item.id, f.message));
        return ok();
      }
      const auto& c = *r.reply;
      auto check = check_rationale(c.content, item, m_o.rules);
      record["problems"] = check.problems;
      record["reply_chars"] = utf8_length(c.content);
      record["rationale_chars"] = check.chars;
      record["reply_sha256"] = sha256_hex(c.content);
      record["finish_reason"] = c.finish_reason;
      record["usage"] = agent::to_json(c.usage);
      record["latency_s"] = c.latency_s;
      record["cost"] = c.cost_usd ? ordered_json(*c.cost_usd) : ordered_json(nullptr);
      record["http_attempts"] = c.attempts.size();
      state["attempts"].push_back(record);
      state["last_reply"] = c.content;
      if (!c.reasoning_content.empty()) state["teacher_reasoning"] = c.reasoning_content;
      if (check.rationale) {
        state["status"] = "done";
        state["rationale"] = *check.rationale;
      } else if (attempt >= m_o.rules.max_attempts) {
        state["status"] = "failed";
      }
      if (auto st = save(state); !st) return st;
    }
    if (!asked) return ok();  // finished in an earlier run
    if (auto st = save(state); !st) return st;
    log(fmt::format("{}: {} after {} attempt(s)", item.id, state["status"].get<std::string>(), state["attempts"].size()));
    return ok();
  }

  const reason_options& m_o;
  reason_services& m_s;
  const reason_source& m_src;
  std::atomic<std::size_t> m_next{0};
  std::atomic<bool> m_stop{false};
  std::mutex m_mutex;
  exit_status m_status = exit_status::ok;
  std::string m_message;
};

}  // namespace

result<reason_outcome> run_reasoning(const reason_options& o, reason_services& s) {
  if (auto st = check_reason_source(o.source_dir, o.kind); !st) return st.err();
  auto src = load_reason_source(o.source_dir);
  if (!src) return src.err();
  auto lock = file_lock::hold_directory(o.out_dir, ".reason.lock", "ptxbench ... reason");
  if (!lock) return lock.err();
  ordered_json ids = ordered_json::array();
  for (const auto& item : src->items) ids.push_back(item.id);
  ordered_json plan = {{"format", k_plan_format},     {"created", utc_timestamp()},
                       {"ptxbench_version", PTXBENCH_VERSION}, {"argv", o.argv},
                       {"kind", src->kind},           {"source_dir", src->dir},
                       {"source_sha256", src->sha256}, {"model", s.model->name},
                       {"model_config", agent::to_json(*s.model)}, {"rules", to_json(o.rules)},
                       {"sampling", to_json(o.sampling)}, {"items", ids}};
  auto plan_path = o.out_dir / "plan.json";
  std::error_code ec;
  if (fs::exists(plan_path, ec)) {
    auto text = read_text_file(plan_path, 64u << 20);
    if (!text) return text.err();
    auto have = parse_json(*text, plan_path.string());
    if (!have) return have.err();
    if (!have->is_object() || have->value("format", "") != k_plan_format)
      return make_error(fmt::format("{}: not a reasoning directory; choose a new --out", o.out_dir.string()));
    if (auto c = check_plan(*have, plan); !c)
      return make_error(fmt::format("{} was written for a different run: {}; re-run the same command to resume, or "
                                    "choose a new --out", plan_path.string(), c.err().message));
    plan["created"] = (*have)["created"];
  } else if (fs::exists(o.out_dir, ec) && !fs::is_empty(o.out_dir, ec)) {
    bool only_lock = true;
    for (const auto& e : fs::directory_iterator(o.out_dir, ec))
      if (e.path().filename() != ".reason.lock") only_lock = false;
    if (!only_lock)
      return make_error(fmt::format("{} exists and is not a reasoning directory; choose a new --out", o.out_dir.string()));
  }
  if (fs::exists(o.out_dir / "manifest.json", ec)) {  // finished in an earlier run with this very plan
    auto done = read_manifest(o.out_dir, k_reasoning_format, "reasoning");
    if (!done) return done.err();
    reason_outcome out;
    out.manifest = *done;
    out.done = (*done)["counts"].value("done", 0);
    out.failed = (*done)["counts"].value("failed", 0);
    return out;
  }
  if (auto w = write_file_atomic(plan_path, dump_pretty(plan) + "\n"); !w) return w.err();
  fs::create_directories(o.out_dir / "rows", ec);

  reasoner r(o, s, *src);
  r.run();

  // Tally from the files alone, so the counts are right after any number of kills and resumes.
  reason_outcome out;
  out.status = r.end_status();
  out.message = r.message();
  std::string lines;
  std::map<std::string, int> problems, histogram;
  int attempts_total = 0;
  ordered_json failed = ordered_json::array();
  for (const auto& item : src->items) {
    auto text = read_text_file(o.out_dir / "rows" / (item.id + ".json"), 1u << 30);
    if (!text) {
      ++out.pending;
      continue;
    }
    auto st = parse_json(*text, item.id);
    if (!st) return st.err();
    const auto& row = *st;
    std::string status = row.value("status", "pending");
    int n = static_cast<int>(row["attempts"].size());
    attempts_total += n;
    for (const auto& a : row["attempts"])
      for (const auto& p : a["problems"]) problems[problem_kind(p.get<std::string>())] += 1;
    if (status == "done") {
      ++out.done;
      histogram[std::to_string(n)] += 1;
      lines += ordered_json({{"id", item.id}, {"kind", src->kind}, {"rationale", row["rationale"]},
                             {"chars", utf8_length(row["rationale"].get<std::string>())},
                             {"teacher", row.value("teacher", "")}, {"attempts", n}})
                   .dump() + "\n";
    } else if (status == "failed") {
      ++out.failed;
      failed.push_back(item.id);
    } else {
      ++out.pending;
    }
  }
  if (out.pending > 0) {
    if (out.status == exit_status::ok) {
      out.status = exit_status::infra;
      out.message = fmt::format("{} rows still pending", out.pending);
    }
    out.message += "; finished rows are saved: re-run the same command to resume";
    return out;
  }
  auto to_obj = [](const std::map<std::string, int>& m) {
    ordered_json j = ordered_json::object();
    for (const auto& [k, v] : m) j[k] = v;
    return j;
  };
  if (auto w = write_file_atomic(o.out_dir / "reasoning.jsonl", lines); !w) return w.err();
  out.manifest = {{"format", k_reasoning_format},
                  {"created", utc_timestamp()},
                  {"ptxbench_version", PTXBENCH_VERSION},
                  {"argv", o.argv},
                  {"kind", src->kind},
                  {"source_dir", src->dir},
                  {"source_sha256", src->sha256},
                  {"model", s.model->name},
                  {"rules", to_json(o.rules)},
                  {"sampling", to_json(o.sampling)},
                  {"counts", {{"items", src->items.size()}, {"done", out.done}, {"failed", out.failed},
                              {"failed_ids", failed}, {"attempts", attempts_total},
                              {"attempts_per_done_row", to_obj(histogram)}, {"problems", to_obj(problems)}}},
                  {"files", {{"reasoning.jsonl", sha256_hex(lines)}}}};
  if (auto w = write_file_atomic(o.out_dir / "manifest.json", dump_pretty(out.manifest) + "\n"); !w) return w.err();
  out.status = exit_status::ok;
  out.message.clear();
  return out;
}

result<reasoning_set> load_reasoning(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir / "manifest.json", ec) && fs::exists(dir / "plan.json", ec))
    return make_error(fmt::format("{}: the reasoning has not finished (no manifest.json); re-run its command to "
                                  "resume it", dir.string()));
  auto staged = read_staged_rows(dir, k_reasoning_format, "`ptxbench fixit reason` / `kernelgen reason`", "reasoning.jsonl");
  if (!staged) return staged.err();
  const ordered_json& manifest = staged->manifest;
  reasoning_set set;
  set.dir = dir.string();
  set.kind = manifest.value("kind", "");
  set.source_dir = manifest.value("source_dir", "");
  set.source_sha256 = manifest.value("source_sha256", "");
  set.teacher = manifest.value("model", "");
  set.manifest = manifest;
  for (const auto& j : staged->rows) {
    reasoning_row r;
    r.id = j.value("id", "");
    r.rationale = j.value("rationale", "");
    r.teacher = j.value("teacher", "");
    r.attempts = j.value("attempts", 0);
    if (r.id.empty() || r.rationale.empty())
      return make_error(fmt::format("{}: a row without id or rationale", (dir / "reasoning.jsonl").string()));
    set.rows[r.id] = std::move(r);
  }
  if (auto counts = manifest.find("counts"); counts != manifest.end() && counts->contains("failed_ids"))
    for (const auto& id : (*counts)["failed_ids"]) set.failed.push_back(id.get<std::string>());
  return set;
}

}  // namespace ptxbench::adapt
