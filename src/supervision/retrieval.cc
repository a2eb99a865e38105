#include "supervision/retrieval.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_set>

#include <fmt/format.h>

#include "core/sha256.h"
#include "supervision/code_terms.h"

namespace ptxbench::supervision {
namespace {

// A fence longer than any backtick run in the code, so a kernel holding ``` cannot close it early.
std::string fenced(const std::string& code, const std::string& tag) {
  std::size_t longest = 0, run = 0;
  for (char c : code) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  std::string body = code;
  while (!body.empty() && body.back() == '\n') body.pop_back();
  return fence + tag + "\n" + body + "\n" + fence;
}

std::string indented(const std::string& text, const std::string& pad) {
  std::string out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t eol = text.find('\n', pos);
    std::string line = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    out += (out.empty() ? "" : "\n") + pad + line;
    if (eol == std::string::npos) break;
    pos = eol + 1;
  }
  return out;
}

std::string instruction_text(const instruction_note& i) {
  std::string s = fmt::format("- Instruction: {}\n", i.instruction);
  s += fmt::format("  Shape context: {}\n", i.shape_context);
  s += fmt::format("  Operand contract: {}\n", i.operand_contract);
  if (!i.required_sequence.empty()) {
    s += "  Required sequence:\n";
    for (std::size_t k = 0; k < i.required_sequence.size(); ++k) s += fmt::format("    {}. {}\n", k + 1, i.required_sequence[k]);
  }
  s += fmt::format("  Diagnostics: {}\n", i.diagnostics);
  s += "  Do not:\n";
  for (const auto& d : i.do_not_do) s += fmt::format("    - {}\n", d);
  s += "  Correct example:\n" + indented(fenced(i.correct_example, "cuda"), "    ") + "\n";
  s += "  Wrong example:\n" + indented(fenced(i.wrong_example, "cuda"), "    ") + "\n";
  return s;
}

}  // namespace

std::string retrieval_mode_name(retrieval_mode m) { return m == retrieval_mode::notes ? "notes" : "notes+kernel"; }

result<retrieval_mode> parse_retrieval_mode(const std::string& text) {
  if (text == "notes") return retrieval_mode::notes;
  if (text == "notes+kernel") return retrieval_mode::notes_and_kernel;
  return make_error(fmt::format("--retrieval {}: expected notes or notes+kernel", text));
}

status check_retrieval_options(const retrieval_options& o) {
  if (auto st = check_bm25_params(o.bm25); !st) return st;
  if (o.top_groups < 1) return make_error(fmt::format("retrieval top groups must be at least 1, got {}", o.top_groups));
  if (o.max_notes < 1) return make_error(fmt::format("retrieval note cap must be at least 1, got {}", o.max_notes));
  return ok();
}

note_corpus::note_corpus(note_set notes) : m_notes(std::move(notes)) {
  std::map<std::string, std::size_t> by_sha;
  for (std::size_t i = 0; i < m_notes.notes.size(); ++i) {
    const auto& p = m_notes.notes[i].pair;
    auto [it, added] = by_sha.try_emplace(p.wrong_sha256, m_groups.size());
    if (added) m_groups.push_back({p.wrong_sha256, {}, source_terms(p.wrong_kernel)});
    m_groups[it->second].notes.push_back(i);
    m_note_hashes.push_back(sha256_hex(to_json(m_notes.notes[i]).dump()));
  }
}

ordered_json note_retriever::corpus_record() const {
  // One text hashed whole (sha256_builder length-prefixes its parts), so the value can be recomputed
  // from docs/supervision.md's description with any sha256 tool.
  std::string text = std::string("ptxbench.retrieval-corpus/1\nterms ") + k_terms_version + "\n";
  std::size_t notes = 0;
  for (std::size_t i = 0; i < m_groups.size(); ++i) {
    text += "group " + m_corpus->groups()[m_groups[i]].wrong_sha256 + "\n";
    for (std::size_t n : m_group_notes[i]) {
      text += "note " + m_corpus->notes().notes[n].pair.key + " " + m_corpus->note_hashes()[n] + "\n";
      ++notes;
    }
  }
  return {{"sha256", sha256_hex(text)}, {"groups", m_groups.size()}, {"notes", notes}, {"terms", k_terms_version}};
}

note_retriever::note_retriever(std::shared_ptr<const note_corpus> corpus, const std::vector<bool>& allowed,
                               retrieval_options options)
    : m_corpus(std::move(corpus)), m_options(options) {
  std::vector<std::vector<std::string>> docs;
  const auto& groups = m_corpus->groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<std::size_t> notes;
    for (std::size_t n : groups[g].notes)
      if (n < allowed.size() && allowed[n]) notes.push_back(n);
    if (notes.empty()) continue;
    m_groups.push_back(g);
    m_group_notes.push_back(std::move(notes));
    docs.push_back(groups[g].terms);
  }
  m_index = std::make_unique<bm25_index>(docs, m_options.bm25);
}

retrieval_result note_retriever::retrieve(std::string_view failing_kernel, std::string_view error_text) const {
  std::vector<std::string> query = source_terms(failing_kernel);
  auto words = text_terms(error_text);
  query.insert(query.end(), words.begin(), words.end());
  retrieval_result r;
  r.query_terms = std::unordered_set<std::string>(query.begin(), query.end()).size();
  r.candidate_groups = m_groups.size();
  std::vector<double> scores = m_index->scores(query);
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  // Best score first; ties keep file order, so a run is reproducible.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  for (std::size_t d : order) {
    if (static_cast<int>(r.groups.size()) >= m_options.top_groups || !(scores[d] > 0)) break;
    r.groups.push_back({m_groups[d], scores[d], m_group_notes[d]});
  }
  const auto& notes = m_corpus->notes().notes;
  for (const auto& g : r.groups)
    for (std::size_t n : g.notes)
      for (std::size_t i = 0; i < notes[n].instructions.size(); ++i)
        if (static_cast<int>(r.instruction_notes.size()) < m_options.max_notes) r.instruction_notes.push_back({n, i});
  if (m_options.mode == retrieval_mode::notes_and_kernel && !r.groups.empty()) {
    // The best group's fastest fix (an unknown speedup ranks last; ties keep file order).
    std::optional<std::size_t> best;
    for (std::size_t n : r.groups.front().notes) {
      if (!best) { best = n; continue; }
      auto a = notes[n].pair.fixed_speedup, b = notes[*best].pair.fixed_speedup;
      if (a && (!b || *a > *b)) best = n;
    }
    r.fixed_kernel_note = best;
  }
  return r;
}

std::string render_retrieval(const note_corpus& corpus, const retrieval_result& r, retrieval_mode mode) {
  if (r.instruction_notes.empty() && !r.fixed_kernel_note) return "";
  const auto& notes = corpus.notes().notes;
  std::map<std::size_t, double> note_score;
  for (const auto& g : r.groups)
    for (std::size_t n : g.notes) note_score.emplace(n, g.score);
  std::string s =
      "Repair notes from earlier fixes of similar failing kernels (retrieved by the similarity of their code to your "
      "kernel and its errors; not every note may apply to your failure):\n";
  int shown = 0;
  for (std::size_t k = 0; k < r.instruction_notes.size(); ++k) {
    std::size_t n = r.instruction_notes[k].note;
    if (k == 0 || r.instruction_notes[k - 1].note != n) {
      const auto& note = notes[n];
      s += fmt::format("\nNote {} (from a kernel for {} that ended in {}; similarity {:.2f})\nSummary: {}\n", ++shown,
                       note.pair.source.task.empty() ? "another task" : note.pair.source.task,
                       note.pair.source.label.empty() ? "a failure" : note.pair.source.label, note_score[n], note.summary);
    }
    s += instruction_text(notes[n].instructions[r.instruction_notes[k].instruction]);
  }
  if (mode == retrieval_mode::notes_and_kernel && r.fixed_kernel_note) {
    const auto& p = notes[*r.fixed_kernel_note].pair;
    std::string facts = "it passed the evaluation";
    if (p.fixed_speedup) facts += fmt::format(", speedup {:.3f}x", *p.fixed_speedup);
    s += fmt::format("\nThe fixed kernel of the most similar earlier failure ({}; {}). It fixed that failure, not "
                     "necessarily yours:\n{}\n",
                     p.source.task.empty() ? "another task" : "task " + p.source.task, facts, fenced(p.fixed_kernel, "cuda"));
  }
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

ordered_json retrieval_record(const note_corpus& corpus, const retrieval_result& r, const retrieval_options& o) {
  const auto& notes = corpus.notes().notes;
  ordered_json groups = ordered_json::array();
  for (const auto& g : r.groups) {
    ordered_json keys = ordered_json::array();
    for (std::size_t n : g.notes) keys.push_back(notes[n].pair.key);
    groups.push_back({{"wrong_kernel_sha256", corpus.groups()[g.group].wrong_sha256}, {"score", g.score}, {"notes", keys}});
  }
  ordered_json shown = ordered_json::array();
  for (const auto& t : r.instruction_notes)
    shown.push_back({{"note", notes[t.note].pair.key}, {"instruction_index", t.instruction},
                     {"instruction", notes[t.note].instructions[t.instruction].instruction}});
  ordered_json fixed = nullptr;
  if (r.fixed_kernel_note) {
    const auto& p = notes[*r.fixed_kernel_note].pair;
    fixed = {{"note", p.key}, {"fixed_kernel_sha256", p.fixed_sha256}};
  }
  return {{"mode", retrieval_mode_name(o.mode)},
          {"k1", o.bm25.k1},
          {"b", o.bm25.b},
          {"top_groups", o.top_groups},
          {"max_notes", o.max_notes},
          {"query_terms", r.query_terms},
          {"candidate_groups", r.candidate_groups},
          {"groups", groups},
          {"instruction_notes", shown},
          {"fixed_kernel", fixed}};
}

}  // namespace ptxbench::supervision
