#include "agent/trajectory.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/file_io.h"

namespace ptxbench::agent {
namespace {

bool is_infra_feedback(const ordered_json& m) {
  return m.contains("extra") && m["extra"].is_object() && m["extra"].value("event", "") == "infra_error";
}

ordered_json& ptx(ordered_json& doc) { return doc["info"]["ptxbench"]; }
const ordered_json& ptx(const ordered_json& doc) { return doc["info"]["ptxbench"]; }

}  // namespace

chat_message message_from_json(const ordered_json& m) {
  chat_message c;
  c.role = m.value("role", "");
  if (m.contains("content") && m["content"].is_string()) c.content = m["content"].get<std::string>();
  if (m.contains("reasoning_content") && m["reasoning_content"].is_string())
    c.reasoning_content = m["reasoning_content"].get<std::string>();
  return c;
}

trajectory trajectory::start(const trajectory_meta& meta, ordered_json config, const prompt_pair& prompts) {
  trajectory t;
  auto& d = t.m_doc;
  d["info"]["model_stats"] = {{"instance_cost", 0.0}, {"api_calls", 0}, {"calls_without_cost", 0}};
  d["info"]["config"] = std::move(config);
  d["info"]["mini_version"] = std::string("ptxbench ") + PTXBENCH_VERSION;
  d["info"]["exit_status"] = exit_names::running;
  d["info"]["submission"] = "";
  d["info"]["ptxbench"] = {{"model", meta.model},
                           {"task", meta.task},
                           {"target", meta.target},
                           {"arch", meta.arch},
                           {"variant", meta.variant},
                           {"trajectory_index", meta.trajectory_index},
                           {"turn_limit", meta.turn_limit},
                           {"target_speedup", meta.target_speedup},
                           {"history_policy", meta.history_policy},
                           {"seed", meta.seed},
                           {"language", meta.language},
                           {"dropped_pairs", ordered_json::array()},
                           {"interruptions", ordered_json::array()}};
  d["messages"] = ordered_json::array();
  d["messages"].push_back({{"role", "system"}, {"content", prompts.system}});
  d["messages"].push_back({{"role", "user"}, {"content", prompts.user}});
  d["trajectory_format"] = k_trajectory_format;
  return t;
}

result<trajectory> trajectory::load(const std::filesystem::path& path) {
  auto text = read_text_file(path, 512u << 20);
  if (!text) return text.err();
  auto j = parse_json(*text, path.string());
  if (!j) return j.err();
  auto bad = [&](const std::string& where, const std::string& what) {
    return make_error(fmt::format("{}: {}: {}", path.string(), where, what));
  };
  if (!j->is_object() || !j->contains("info") || !(*j)["info"].is_object() || !(*j)["info"].contains("ptxbench"))
    return bad("info.ptxbench", "missing (not a PTXBench trajectory)");
  if (j->value("trajectory_format", "") != k_trajectory_format)
    return bad("trajectory_format", fmt::format("expected \"{}\"", k_trajectory_format));
  if (!j->contains("messages") || !(*j)["messages"].is_array()) return bad("messages", "expected an array");
  const auto& msgs = (*j)["messages"];
  if (msgs.size() < 2 || msgs[0].value("role", "") != "system" || msgs[1].value("role", "") != "user")
    return bad("messages", "expected a system message and a task message first");
  for (std::size_t i = 2; i < msgs.size(); ++i) {
    std::string role = msgs[i].is_object() ? msgs[i].value("role", "") : "";
    std::string where = fmt::format("messages[{}]", i);
    if (role == "exit") {
      if (i + 1 != msgs.size()) return bad(where, "the exit message must be the last");
      continue;
    }
    std::string want = i % 2 == 0 ? "assistant" : "user";
    if (role != want) return bad(where, fmt::format("expected role '{}', got '{}'", want, role));
    if (!msgs[i].contains("content") || !msgs[i]["content"].is_string()) return bad(where, "content: expected a string");
    if (want == "user") {
      int turn = static_cast<int>((i - 3) / 2);
      const auto& extra = msgs[i].contains("extra") ? msgs[i]["extra"] : ordered_json();
      if (!extra.is_object() || !extra.contains("turn") || extra["turn"] != turn)
        return bad(where, fmt::format("extra.turn: expected {}", turn));
    }
  }
  trajectory t;
  t.m_doc = std::move(*j);
  return t;
}

trajectory_meta trajectory::meta() const {
  const auto& p = ptx(m_doc);
  trajectory_meta m;
  m.model = p.value("model", "");
  m.task = p.value("task", "");
  m.target = p.value("target", "");
  m.arch = p.value("arch", "");
  m.variant = p.value("variant", "");
  m.trajectory_index = p.value("trajectory_index", 0);
  m.turn_limit = p.value("turn_limit", 0);
  m.target_speedup = p.value("target_speedup", 0.0);
  m.history_policy = p.value("history_policy", "full");
  m.seed = p.value("seed", uint64_t{0});
  m.language = p.value("language", "cuda");
  return m;
}

std::string trajectory::exit_status() const { return m_doc["info"].value("exit_status", ""); }

int trajectory::completed_turns() const {
  const auto& msgs = m_doc["messages"];
  int turns = 0;
  for (std::size_t i = 3; i < msgs.size(); i += 2) {
    if (msgs[i].value("role", "") != "user" || is_infra_feedback(msgs[i])) break;
    ++turns;
  }
  return turns;
}

bool trajectory::finished(int turn_limit) const {
  std::string s = exit_status();
  if (s == exit_names::submitted || s == exit_names::context_exceeded) return true;
  return s == exit_names::limits_exceeded && completed_turns() >= turn_limit;
}

std::optional<ordered_json> trajectory::trim_to_completed() {
  auto& msgs = m_doc["messages"];
  std::size_t keep = 2 + 2 * static_cast<std::size_t>(completed_turns());
  std::optional<ordered_json> pending;
  const bool reply_alone = msgs.size() == keep + 1;
  const bool infra_pair = msgs.size() >= keep + 2 && is_infra_feedback(msgs[keep + 1]);
  if (msgs.size() > keep && msgs[keep].value("role", "") == "assistant" && (reply_alone || infra_pair))
    pending = msgs[keep];
  while (msgs.size() > keep) msgs.erase(msgs.size() - 1);
  return pending;
}

void trajectory::append_turn(ordered_json assistant, ordered_json feedback) {
  m_doc["messages"].push_back(std::move(assistant));
  m_doc["messages"].push_back(std::move(feedback));
}

void trajectory::append_reply(ordered_json assistant) { m_doc["messages"].push_back(std::move(assistant)); }

void trajectory::append_feedback(ordered_json feedback) { m_doc["messages"].push_back(std::move(feedback)); }

void trajectory::set_exit(const std::string& status, const std::string& submission,
                          std::optional<ordered_json> exit_message) {
  m_doc["info"]["exit_status"] = status;
  m_doc["info"]["submission"] = submission;
  if (exit_message) m_doc["messages"].push_back(std::move(*exit_message));
}

void trajectory::set_turn_limit(int turn_limit) {
  ptx(m_doc)["turn_limit"] = turn_limit;
  if (m_doc["info"].contains("config") && m_doc["info"]["config"].contains("agent"))
    m_doc["info"]["config"]["agent"]["step_limit"] = turn_limit;
}

void trajectory::record_dropped_pairs(ordered_json record) { ptx(m_doc)["dropped_pairs"].push_back(std::move(record)); }

void trajectory::record_interruption(ordered_json record) { ptx(m_doc)["interruptions"].push_back(std::move(record)); }

void trajectory::set_supervision(ordered_json record) { ptx(m_doc)["supervision"] = std::move(record); }

ordered_json trajectory::supervision() const {
  const auto& p = ptx(m_doc);
  return p.is_object() && p.contains("supervision") ? p["supervision"] : ordered_json(nullptr);
}

void trajectory::begin_call(ordered_json record) {
  auto& stats = m_doc["info"]["model_stats"];
  stats["api_calls"] = stats.value("api_calls", 0) + 1;
  ptx(m_doc)["open_call"] = std::move(record);
}

void trajectory::end_call(std::optional<double> cost_usd, bool sent) {
  auto& stats = m_doc["info"]["model_stats"];
  ptx(m_doc).erase("open_call");
  if (!sent)
    stats["api_calls"] = std::max(0, stats.value("api_calls", 0) - 1);
  else if (cost_usd)
    stats["instance_cost"] = stats.value("instance_cost", 0.0) + *cost_usd;
  else
    stats["calls_without_cost"] = stats.value("calls_without_cost", 0) + 1;
}

bool trajectory::settle_lost_call(const std::string& timestamp) {
  auto& p = ptx(m_doc);
  if (!p.contains("open_call")) return false;
  ordered_json open = p["open_call"];
  p.erase("open_call");
  auto& stats = m_doc["info"]["model_stats"];
  stats["calls_without_cost"] = stats.value("calls_without_cost", 0) + 1;
  if (!p.contains("interruptions") || !p["interruptions"].is_array()) p["interruptions"] = ordered_json::array();
  p["interruptions"].push_back({{"turn", open.is_object() ? open.value("turn", -1) : -1},
                                {"kind", "lost_call"},
                                {"message", "the run stopped during this model call; the call is counted, its reply "
                                            "and cost are lost"},
                                {"started", open.is_object() ? open.value("started", "") : ""},
                                {"timestamp", timestamp}});
  return true;
}

conversation trajectory::to_conversation() const {
  const auto& msgs = m_doc["messages"];
  conversation c;
  c.system = message_from_json(msgs[0]);
  c.task = message_from_json(msgs[1]);
  int turns = completed_turns();
  for (int k = 0; k < turns; ++k)
    c.pairs.emplace_back(message_from_json(msgs[2 + 2 * k]), message_from_json(msgs[3 + 2 * k]));
  return c;
}

status trajectory::save(const std::filesystem::path& path) const { return write_file_atomic(path, dump_pretty(m_doc) + "\n"); }

}  // namespace ptxbench::agent
