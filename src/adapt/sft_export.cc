#include "adapt/sft_export.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "adapt/kernelgen.h"
#include "adapt/pairs.h"
#include "adapt/reason.h"
#include "adapt/staged_dir.h"
#include "adapt/stratified_cap.h"
#include "adapt/token_counter.h"
#include "core/jsonl_file.h"
#include "core/sha256.h"
#include "core/text.h"
#include "suite/trace.h"

namespace ptxbench::adapt {
namespace fs = std::filesystem;

namespace {

struct draft {
  std::string id, task, error_type;
  std::vector<prompts::chat_turn> messages;  ///< the last one without the <think> block
  std::string rationale;
  int attempts = 0;
  ordered_json metadata;
};

// The messages with the rationale in the last one.
std::vector<prompts::chat_turn> composed(const draft& d, const std::string& rationale) {
  auto m = d.messages;
  m.back().content = "<think>\n" + std::string(trim(rationale)) + "\n</think>\n" + m.back().content;
  return m;
}

// CPython's Mersenne Twister (Modules/_randommodule.c), enough for Random(seed).shuffle.
class cpython_mt {
 public:
  explicit cpython_mt(uint64_t seed) {
    std::vector<uint32_t> key{static_cast<uint32_t>(seed)};
    if (seed >> 32) key.push_back(static_cast<uint32_t>(seed >> 32));
    init_genrand(19650218u);
    std::size_t i = 1, j = 0, k = std::max<std::size_t>(624, key.size());
    for (; k; --k) {
      m_mt[i] = (m_mt[i] ^ ((m_mt[i - 1] ^ (m_mt[i - 1] >> 30)) * 1664525u)) + key[j] + static_cast<uint32_t>(j);
      ++i, ++j;
      if (i >= 624) { m_mt[0] = m_mt[623]; i = 1; }
      if (j >= key.size()) j = 0;
    }
    for (k = 623; k; --k) {
      m_mt[i] = (m_mt[i] ^ ((m_mt[i - 1] ^ (m_mt[i - 1] >> 30)) * 1566083941u)) - static_cast<uint32_t>(i);
      ++i;
      if (i >= 624) { m_mt[0] = m_mt[623]; i = 1; }
    }
    m_mt[0] = 0x80000000u;
  }
  uint32_t next() {
    static constexpr uint32_t mag01[2] = {0u, 0x9908b0dfu};
    if (m_i >= 624) {
      int kk = 0;
      uint32_t y;
      for (; kk < 624 - 397; ++kk) {
        y = (m_mt[kk] & 0x80000000u) | (m_mt[kk + 1] & 0x7fffffffu);
        m_mt[kk] = m_mt[kk + 397] ^ (y >> 1) ^ mag01[y & 1u];
      }
      for (; kk < 623; ++kk) {
        y = (m_mt[kk] & 0x80000000u) | (m_mt[kk + 1] & 0x7fffffffu);
        m_mt[kk] = m_mt[kk + (397 - 624)] ^ (y >> 1) ^ mag01[y & 1u];
      }
      y = (m_mt[623] & 0x80000000u) | (m_mt[0] & 0x7fffffffu);
      m_mt[623] = m_mt[396] ^ (y >> 1) ^ mag01[y & 1u];
      m_i = 0;
    }
    uint32_t y = m_mt[m_i++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
  }
  // random._randbelow_with_getrandbits for 1 <= n < 2^32.
  std::size_t below(std::size_t n) {
    int k = 0;
    while ((n >> k) != 0) ++k;
    for (;;) {
      std::size_t r = next() >> (32 - k);
      if (r < n) return r;
    }
  }

 private:
  void init_genrand(uint32_t s) {
    m_mt[0] = s;
    for (std::size_t i = 1; i < 624; ++i)
      m_mt[i] = 1812433253u * (m_mt[i - 1] ^ (m_mt[i - 1] >> 30)) + static_cast<uint32_t>(i);
    m_i = 624;
  }
  uint32_t m_mt[624];
  std::size_t m_i = 624;
};

// Upstream's final Fixit answer: the kernel stripped, in a fence of its own line.
std::string fenced(const std::string& code, const std::string& fence) {
  return "```" + fence + "\n" + std::string(trim(code)) + "\n```";
}

int closed_fence_lines(const std::string& text) {
  int n = 0;
  for (auto line : split_lines(text))
    if (starts_with(trim(line), "```")) ++n;
  return n;
}

struct tally {
  int in = 0, out = 0;
  ordered_json json() const { return {{"in", in}, {"out", out}}; }
};

ordered_json stats(std::vector<std::size_t> v) {
  if (v.empty()) return {{"count", 0}};
  std::sort(v.begin(), v.end());
  std::size_t total = 0;
  for (auto x : v) total += x;
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))]; };
  return {{"count", v.size()}, {"min", v.front()}, {"median", at(0.5)}, {"p90", at(0.9)}, {"max", v.back()},
          {"mean", static_cast<double>(total) / static_cast<double>(v.size())}, {"total", total}};
}

// The editor's checkpoint: every reply the editor gave, appended and fsynced right after its call.
struct editor_checkpoint {
  fs::path path;
  std::map<std::string, std::string> replies;  ///< key() -> reply
  bool torn_tail_ignored = false;
  std::unique_ptr<jsonl_appender> appender;     ///< opened on start when the file exists, else on first use

  static std::string key(const std::string& id, const std::string& rationale_sha256, const std::string& model,
                         const std::string& prompt_sha256) {
    return id + '\0' + rationale_sha256 + '\0' + model + '\0' + prompt_sha256;
  }

  status load() {
    std::error_code ec;
    if (!fs::exists(path, ec)) return ok();
    auto contents = read_jsonl(path, std::size_t{1} << 30);
    if (!contents) return contents.err().with_context("the editor checkpoint");
    torn_tail_ignored = contents->torn_tail;  // a kill mid-append: that reply is asked again
    for (const auto& r : contents->records) {
      const auto& v = r.value;
      bool good = v.is_object() && v.value("format", "") == k_editor_checkpoint_format;
      for (const char* f : {"id", "model", "rationale_sha256", "prompt_sha256", "reply"})
        good = good && v.contains(f) && v[f].is_string();
      if (!good)
        return make_error(fmt::format("{}:{}: not an editor checkpoint record (expected format \"{}\" with id, model, "
                                      "rationale_sha256, prompt_sha256 and reply); move the file away to ask again",
                                      path.string(), r.line, k_editor_checkpoint_format));
      replies.emplace(key(v["id"], v["rationale_sha256"], v["model"], v["prompt_sha256"]), v["reply"].get<std::string>());
    }
    auto a = jsonl_appender::open(path, k_editor_checkpoint_format);  // cuts the torn tail
    if (!a) return a.err().with_context("the editor checkpoint");
    appender = std::move(*a);
    return ok();
  }

  status append(const ordered_json& record) {
    if (!appender) {
      auto a = jsonl_appender::open(path, k_editor_checkpoint_format);
      if (!a) return a.err().with_context("the editor checkpoint");
      appender = std::move(*a);
    }
    return appender->append(record);
  }
};

// What the editor made of a row it kept: the edited rationale, the row's token count with it, and the
// record for the row's metadata.
struct edited_row {
  std::string rationale;
  std::size_t tokens = 0;
  ordered_json record;
};

using row_counter = std::function<result<std::size_t>(const draft&, const std::string&)>;

// The editor over one export (upstream's Fixit stage 01): its checkpoint and its tallies.
struct editor_run {
  const export_options& o;
  editor_checkpoint checkpoint;
  int needed = 0, edited = 0, dropped = 0, tag_rows = 0, over_rows = 0, reused = 0, asked = 0, call_failed = 0;
  ordered_json call_errors = ordered_json::array();  // the first few failed calls
  static constexpr std::size_t k_call_errors_kept = 5;

  // The reply for this prompt: from the checkpoint, else asked once and checkpointed. A failed call
  // is a problem (the row is dropped, asked again by a re-run); an interruption is an error.
  result<std::string> reply_for(const draft& d, const rationale_prompt& prompt, std::string* problem) {
    sha256_builder prompt_hash;
    prompt_hash.update(prompt.system).update(prompt.user);
    std::string prompt_sha256 = prompt_hash.hex_digest();
    std::string rationale_sha256 = sha256_hex(d.rationale);
    std::string key = editor_checkpoint::key(d.id, rationale_sha256, o.editor_model, prompt_sha256);
    if (auto hit = checkpoint.replies.find(key); hit != checkpoint.replies.end()) {
      ++reused;
      return hit->second;
    }
    auto interrupted = [&](const char* when) {
      return make_error(fmt::format("interrupted {} the editor on row {}; run the same command again to resume (the "
                                    "edits so far are kept in {})", when, d.id, checkpoint.path.string()));
    };
    if (o.interrupted && o.interrupted()) return interrupted("before");
    ++asked;
    auto r = o.edit({d.id, prompt.system, prompt.user, d.attempts});
    if (!r) {
      if (o.interrupted && o.interrupted()) return interrupted("during");
      std::string message(trim(one_line(r.err().message)));
      ++call_failed;
      if (call_errors.size() < k_call_errors_kept) call_errors.push_back({{"id", d.id}, {"error", message}});
      std::fprintf(stderr, "warning: the editor call for row %s failed (%s); the row is dropped as editor_failed "
                   "and asked again when the same command runs again\n", d.id.c_str(), message.c_str());
      *problem = "the call failed: " + message;
      return std::string();
    }
    ordered_json line = {{"format", k_editor_checkpoint_format}, {"id", d.id}, {"model", o.editor_model},
                         {"rationale_sha256", rationale_sha256}, {"prompt_sha256", prompt_sha256},
                         {"reply_sha256", sha256_hex(*r)}, {"reply", *r}};
    if (auto st = checkpoint.append(line); !st) return st.err();
    checkpoint.replies.emplace(key, *r);
    return std::move(*r);
  }

  // Why an edit cannot replace the rationale ("" when it can); sets `tokens` to the row's count with it.
  result<std::string> judge(const draft& d, const std::string& edit, const token_counter& counter,
                            const row_counter& count_with, ordered_json& record, std::size_t& tokens) const {
    if (edit.empty()) return std::string("an empty reply");
    for (const char* m : {k_rationale_open, k_rationale_close, "<think>", "</think>"})
      if (edit.find(m) != std::string::npos) return "still contains " + std::string(m);
    for (const auto& r : counter.reserved())
      if (edit.find(r) != std::string::npos) return "contains " + r;
    auto after = count_with(d, edit);
    if (!after) return after.err().with_context(fmt::format("row {}", d.id));
    record["tokens_after"] = *after;
    if (*after > o.max_tokens) return fmt::format("still {} tokens, limit {}", *after, o.max_tokens);
    tokens = *after;
    return std::string();
  }

  // A row whose rationale has leftover tags or whose rendering (n tokens) is over the limit, edited
  // once: the edited row, or nullopt when it is dropped (editor_failed).
  result<std::optional<edited_row>> edit(const draft& d, bool tags, bool over, std::size_t n,
                                         const token_counter& counter, const row_counter& count_with) {
    ++needed;
    if (tags) ++tag_rows;
    if (over) ++over_rows;
    auto fixed = count_with(d, "x");
    if (!fixed) return fixed.err().with_context(fmt::format("row {}", d.id));
    // The length asked for: the same, or (over the limit) what the limit leaves less the headroom, in
    // characters at the rationale's own characters per token.
    std::size_t reasoning_tokens = std::max<std::size_t>(1, n > *fixed ? n - *fixed : 0);
    std::size_t len = utf8_length(d.rationale);
    std::size_t max_chars = len;
    bool room = true;
    if (over) {
      std::size_t used = *fixed + k_editor_safety_tokens;
      room = o.max_tokens > used;
      std::size_t available = room ? o.max_tokens - used : 0;
      double per_token = static_cast<double>(len) / static_cast<double>(reasoning_tokens);
      std::size_t max_tok = std::min(reasoning_tokens, available);
      max_chars = std::max<std::size_t>(1, std::min(len, static_cast<std::size_t>(static_cast<double>(max_tok) * per_token)));
    }
    std::size_t min_chars = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(static_cast<double>(max_chars) * k_editor_min_ratio)));
    ordered_json record = {{"issues", ordered_json::array()}, {"model", o.editor_model}, {"chars_before", len},
                           {"tokens_before", n}, {"asked_chars", {min_chars, max_chars}}};
    if (tags) record["issues"].push_back("reasoning_tags");
    if (over) record["issues"].push_back("over_max_tokens");
    auto drop = [&] {
      ++dropped;
      return std::optional<edited_row>();
    };
    if (!room) return drop();  // the prompt and kernel alone leave no room under the limit
    if (!o.edit)
      return make_error(fmt::format("row {} needs the editor ({}) but no editor model is set; name one "
                                    "(--editor-model) or pass --no-editor to drop such rows",
                                    d.id, record["issues"].dump()));
    std::string problem;
    auto reply = reply_for(d, make_editor_prompt(d.rationale, {tags, over}, min_chars, max_chars), &problem);
    if (!reply) return reply.err();
    if (!problem.empty()) return drop();
    std::string candidate = read_editor_reply(*reply);
    record["reply_sha256"] = sha256_hex(*reply);
    std::size_t tokens = n;
    auto why = judge(d, candidate, counter, count_with, record, tokens);
    if (!why) return why.err();
    if (!why->empty()) return drop();
    ++edited;
    record["chars_after"] = utf8_length(candidate);
    return std::optional<edited_row>(edited_row{std::move(candidate), tokens, std::move(record)});
  }

  [[nodiscard]] ordered_json manifest(bool enabled) const {
    return {{"enabled", enabled}, {"model", enabled ? ordered_json(o.editor_model) : ordered_json(nullptr)},
            {"rows_needing_edit", needed}, {"edited", edited}, {"dropped", dropped},
            {"asked", asked}, {"reused", reused}, {"call_failed", call_failed},
            {"call_errors", call_errors},
            {"checkpoint", enabled ? ordered_json(checkpoint.path.string()) : ordered_json(nullptr)},
            {"checkpoint_torn_tail_ignored", checkpoint.torn_tail_ignored},
            {"issues", {{"reasoning_tags", tag_rows}, {"over_max_tokens", over_rows}}},
            {"safety_tokens", k_editor_safety_tokens}, {"min_target_ratio", k_editor_min_ratio}};
  }
};

}  // namespace

fs::path editor_checkpoint_path(const fs::path& out) {
  fs::path base = out;
  while (!base.has_filename() && base.has_parent_path() && base != base.parent_path()) base = base.parent_path();
  base += ".editor.jsonl";
  return base;
}

std::vector<std::size_t> python_shuffle_permutation(std::size_t n, uint64_t seed) {
  std::vector<std::size_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = i;
  cpython_mt mt(seed);
  for (std::size_t i = n; i-- > 1;) std::swap(p[i], p[mt.below(i + 1)]);
  return p;
}

std::string validate_sft_row(const ordered_json& row, const std::string& format) {
  if (!row.is_object()) return "not an object";
  for (const auto& [k, v] : row.items())
    if (k != "id" && k != "messages" && k != "metadata") return "unknown field " + k;
  if (!row.contains("id") || !row["id"].is_string() || row["id"].get<std::string>().empty()) return "no id";
  if (!row.contains("metadata") || !row["metadata"].is_object()) return "no metadata object";
  if (!row.contains("messages") || !row["messages"].is_array()) return "no messages";
  const auto& m = row["messages"];
  std::vector<std::string> roles = format == "fixit" ? std::vector<std::string>{"system", "user", "assistant", "user", "assistant"}
                                                     : std::vector<std::string>{"system", "user", "assistant"};
  if (m.size() != roles.size()) return fmt::format("{} messages, expected {}", m.size(), roles.size());
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (!m[i].is_object() || m[i].value("role", "") != roles[i]) return fmt::format("messages[{}]: role is not {}", i, roles[i]);
    if (!m[i].contains("content") || !m[i]["content"].is_string()) return fmt::format("messages[{}]: no content", i);
    if (i > 0 && std::string(trim(m[i]["content"].get<std::string>())).empty()) return fmt::format("messages[{}]: empty", i);
    int want = i + 1 == m.size() ? 1 : 0;
    if (m[i].value("step_loss_mask", -1) != want) return fmt::format("messages[{}]: step_loss_mask is not {}", i, want);
    for (const auto& [k, v] : m[i].items())
      if (k != "role" && k != "content" && k != "step_loss_mask") return fmt::format("messages[{}]: unknown field {}", i, k);
  }
  std::string last = m.back()["content"].get<std::string>();
  if (!starts_with(last, "<think>\n")) return "the last message does not open with <think>";
  auto close = last.find("</think>");
  if (close == std::string::npos) return "the last message never closes <think>";
  if (last.find("<think>", 1) != std::string::npos && last.find("<think>", 1) < close) return "a nested <think>";
  if (closed_fence_lines(last.substr(close)) < 2) return "no closed code fence after </think>";
  return "";
}

result<ordered_json> export_sft(const export_options& o, const fs::path& out) {
  if (o.format != "fixit" && o.format != "kernelgen")
    return make_error(fmt::format("--format {}: expected fixit or kernelgen", o.format));
  if (o.kernel_fence != "cpp" && o.kernel_fence != "cuda")
    return make_error(fmt::format("--kernel-fence {}: expected cpp or cuda", o.kernel_fence));
  if (o.reasoning_dirs.empty()) return make_error("no reasoning directory given");
  auto staged = staged_dir::create(out);
  if (!staged) return staged.err();
  auto counter = token_counter::open(o.tokenizer, o.chat_template, o.cl100k_candidates);
  if (!counter) return counter.err();

  std::vector<draft> drafts;
  std::map<std::string, int> dropped;
  std::map<std::string, tally> per_definition, per_type;
  ordered_json inputs = ordered_json::array();
  std::set<std::string> ids;
  for (const auto& dir : o.reasoning_dirs) {
    auto set = load_reasoning(dir);
    if (!set) return set.err();
    if (set->kind != o.format)
      return make_error(fmt::format("{} holds {} rationales, not {} (--format)", dir.string(), set->kind, o.format));
    auto source_manifest = read_manifest(set->source_dir, o.format == "fixit" ? k_pairs_format : k_kernelgen_format,
                                         o.format == "fixit" ? "pairs" : "kernels");
    if (!source_manifest) return source_manifest.err().with_context(fmt::format("{} (its source)", dir.string()));
    std::string rows_file = o.format == "fixit" ? "pairs.jsonl" : "kernels.jsonl";
    if ((*source_manifest)["files"].value(rows_file, "") != set->source_sha256)
      return make_error(fmt::format("{}: its source {} changed after the rationales were written", dir.string(), set->source_dir));
    inputs.push_back({{"reasoning_dir", set->dir}, {"reasoning_sha256", set->manifest["files"].value("reasoning.jsonl", "")},
                      {"reasoner", set->teacher}, {"source_dir", set->source_dir}, {"source_sha256", set->source_sha256}});
    auto add = [&](draft d, const std::string& id) {
      per_definition[d.task].in += 1;
      if (!d.error_type.empty()) per_type[d.error_type].in += 1;
      auto it = set->rows.find(id);
      if (it == set->rows.end()) {
        dropped["no_rationale"] += 1;
        return;
      }
      if (!ids.insert(d.id).second) {
        dropped["duplicate_id"] += 1;
        return;
      }
      d.metadata["reasoner"] = set->teacher;
      d.metadata["rationale_attempts"] = it->second.attempts;
      d.metadata["reasoning_dir"] = set->dir;
      d.rationale = it->second.rationale;
      d.attempts = it->second.attempts;
      drafts.push_back(std::move(d));
    };
    if (o.format == "fixit") {
      auto pairs = load_pairs(set->source_dir);
      if (!pairs) return pairs.err();
      for (const auto& p : *pairs) {
        draft d;
        d.id = p.id;
        d.task = p.task;
        d.error_type = error_type_name(p.type);
        d.messages = {{"system", p.system_prompt}, {"user", p.task_prompt}, {"assistant", p.wrong.reply},
                      {"user", p.wrong.feedback}, {"assistant", "\n" + fenced(p.correct.kernel, o.kernel_fence)}};
        d.metadata = {{"format", "fixit"}, {"task", p.task}, {"target", p.target}, {"arch", p.arch},
                      {"variant", p.variant}, {"error_type", d.error_type}, {"label", p.label},
                      {"pair_id", p.id}, {"pairs_dir", set->source_dir},
                      {"wrong", {{"mined_id", p.wrong.mined_id}, {"model", p.wrong.model},
                                 {"trajectory", p.wrong.trajectory}, {"turn", p.wrong.turn},
                                 {"kernel_sha256", p.json["wrong"].value("kernel_sha256", "")}}},
                      {"correct", {{"model", p.correct.model}, {"trajectory", p.correct.trajectory},
                                   {"turn", p.correct.turn}, {"kernel_sha256", p.json["correct"].value("kernel_sha256", "")},
                                   {"target_correct", p.correct.target_correct},
                                   {"speedup", p.correct.speedup ? ordered_json(*p.correct.speedup) : ordered_json(nullptr)}}}};
        add(std::move(d), p.id);
      }
    } else {
      auto kernels = load_kernels(set->source_dir);
      if (!kernels) return kernels.err();
      for (const auto& k : *kernels) {
        draft d;
        d.id = k.id;
        d.task = k.task;
        d.messages = {{"system", k.system_prompt}, {"user", k.task_prompt}, {"assistant", std::string(trim(k.reply))}};
        d.metadata = {{"format", "kernelgen"}, {"task", k.task}, {"target", k.target}, {"arch", k.arch},
                      {"variant", k.variant}, {"kernel_id", k.id}, {"kernels_dir", set->source_dir},
                      {"answer", {{"model", k.model}, {"trajectory", k.trajectory}, {"turn", k.turn},
                                  {"kernel_sha256", k.json.value("kernel_sha256", "")},
                                  {"target_correct", k.target_correct},
                                  {"speedup", k.speedup ? ordered_json(*k.speedup) : ordered_json(nullptr)}}}};
        if (k.reply.find("<think>") != std::string::npos || k.reply.find("</think>") != std::string::npos) {
          per_definition[d.task].in += 1;
          dropped["answer_contains_think"] += 1;
          continue;
        }
        if (closed_fence_lines(k.reply) < 2) {
          per_definition[d.task].in += 1;
          dropped["answer_without_closed_fence"] += 1;
          continue;
        }
        add(std::move(d), k.id);
      }
    }
  }
  int rows_in = 0;
  for (const auto& [k, v] : per_definition) rows_in += v.in;
  // Measure, edit, filter, validate.
  const bool editing = o.editor.value_or(o.format == "fixit");
  editor_run editor{o};
  editor.checkpoint.path = editor_checkpoint_path(out);
  if (editing)
    if (auto st = editor.checkpoint.load(); !st) return st.err();
  auto count_with = [&](const draft& d, const std::string& rationale) -> result<std::size_t> {
    auto m = composed(d, rationale);
    if (o.normalize) m = prompts::template_contents(counter->template_kind(), m);
    return counter->count(m);
  };
  std::vector<std::pair<std::string, std::string>> lines;  // (id, json line)
  std::vector<std::size_t> tokens_kept, tokens_all, chars_kept;
  for (auto& d : drafts) {
    std::string reserved;
    for (const auto& m : composed(d, d.rationale))
      for (const auto& r : counter->reserved())
        if (reserved.empty() && m.content.find(r) != std::string::npos) reserved = r;
    if (!reserved.empty()) {
      dropped["reserved_marker_in_text"] += 1;
      continue;
    }
    // Upstream measured the row with the tags taken out (the editor removes them anyway).
    bool tags = has_reasoning_tags(d.rationale);
    std::string measured = without_reasoning_tags(d.rationale);
    if (measured.empty()) measured = "I will repair the kernel.";
    auto n = count_with(d, tags ? measured : d.rationale);
    if (!n) return n.err().with_context(fmt::format("row {}", d.id));
    bool over = *n > o.max_tokens;
    if ((tags || over) && !editing) {
      tokens_all.push_back(*n);
      dropped[tags ? "reasoning_tags_in_rationale" : "over_max_tokens"] += 1;
      continue;
    }
    if (tags || over) {
      auto kept = editor.edit(d, tags, over, *n, *counter, count_with);
      if (!kept) return kept.err();
      if (!*kept) {
        tokens_all.push_back(*n);
        dropped["editor_failed"] += 1;
        continue;
      }
      n = (*kept)->tokens;
      d.rationale = std::move((*kept)->rationale);
      d.metadata["editor"] = std::move((*kept)->record);
    }
    tokens_all.push_back(*n);
    d.messages = composed(d, d.rationale);
    if (o.normalize) d.messages = prompts::template_contents(counter->template_kind(), d.messages);
    ordered_json messages = ordered_json::array();
    std::size_t chars = 0;
    ordered_json per_message_chars = ordered_json::array();
    for (std::size_t i = 0; i < d.messages.size(); ++i) {
      messages.push_back({{"role", d.messages[i].role}, {"content", d.messages[i].content},
                          {"step_loss_mask", i + 1 == d.messages.size() ? 1 : 0}});
      std::size_t n_chars = utf8_length(d.messages[i].content);
      chars += n_chars;
      per_message_chars.push_back(n_chars);
    }
    d.metadata["tokens"] = *n;
    d.metadata["chars"] = per_message_chars;
    ordered_json row = {{"id", d.id}, {"messages", messages}, {"metadata", d.metadata}};
    if (auto problem = validate_sft_row(row, o.format); !problem.empty())
      return make_error(fmt::format("internal: row {} would be invalid: {}", d.id, problem));
    per_definition[d.task].out += 1;
    if (!d.error_type.empty()) per_type[d.error_type].out += 1;
    tokens_kept.push_back(*n);
    chars_kept.push_back(chars);
    lines.emplace_back(d.id, row.dump());
  }
  if (lines.empty()) {
    std::string why;
    for (const auto& [k, v] : dropped) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", v, k);
    return make_error(fmt::format("no row left to export: {} in, dropped {}", rows_in, why.empty() ? "none" : why));
  }
  if (o.interrupted && o.interrupted())
    return make_error(fmt::format("interrupted; nothing written; run the same command again to resume (the edits so far "
                                  "are kept in {})", editor.checkpoint.path.string()));
  std::sort(lines.begin(), lines.end());
  std::string text;
  if (o.shuffle_seed) {
    for (auto i : python_shuffle_permutation(lines.size(), *o.shuffle_seed)) text += lines[i].second + "\n";
  } else {
    for (const auto& [k, l] : lines) text += l + "\n";
  }
  if (auto w = staged->write("sft.jsonl", text); !w) return w.err();
  auto tallies = [](const std::map<std::string, tally>& m) {
    ordered_json j = ordered_json::object();
    for (const auto& [k, v] : m) j[k] = v.json();
    return j;
  };
  ordered_json d = ordered_json::object();
  for (const auto& [k, v] : dropped) d[k] = v;
  ordered_json tc = counter->description();
  tc["max_tokens"] = o.max_tokens;
  ordered_json manifest = {
      {"format", k_sft_export_format},
      {"created", utc_timestamp()},
      {"ptxbench_version", PTXBENCH_VERSION},
      {"argv", o.argv},
      {"row_format", o.format},
      {"roles", o.format == "fixit" ? ordered_json::array({"system", "user", "assistant", "user", "assistant"})
                                    : ordered_json::array({"system", "user", "assistant"})},
      {"loss_mask", o.format == "fixit" ? ordered_json::array({0, 0, 0, 0, 1}) : ordered_json::array({0, 0, 1})},
      {"recipe", o.recipe},
      {"kernel_fence", o.kernel_fence},
      {"normalize_with_chat_template", o.normalize},
      {"length_unit", "characters are Unicode code points"},
      {"inputs", inputs},
      {"token_count", tc},
      {"order", o.shuffle_seed ? ordered_json({{"sorted_by", "id"}, {"shuffle", "python random.Random(seed).shuffle"},
                                               {"shuffle_seed", *o.shuffle_seed}})
                               : ordered_json("by id")},
      {"editor", editor.manifest(editing)},
      {"counts", {{"in", rows_in}, {"out", lines.size()}, {"dropped", d},
                  {"per_definition", tallies(per_definition)}, {"per_error_type", tallies(per_type)}}},
      {"length_stats", {{"tokens_exported", stats(tokens_kept)}, {"tokens_measured", stats(tokens_all)},
                        {"chars_exported", stats(chars_kept)}}}};
  if (auto c = staged->commit(manifest); !c) return c.err();
  return manifest;
}

}  // namespace ptxbench::adapt
