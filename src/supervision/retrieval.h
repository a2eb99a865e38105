#pragma once
// Retrieval of repair notes at feedback time (upstream's note feedback, docs/supervision.md): the
// notes are grouped by their wrong kernel (several notes may come from one wrong kernel), each
// group's wrong kernel is one BM25 document of its comment-stripped identifiers, and the query is
// the failing kernel's identifiers plus the words of its error text. The best `top_groups` groups
// with a positive score give their instruction notes, best group first, up to `max_notes`; in
// notes+kernel mode the best group's fixed kernel is shown in full as well.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_check.h"
#include "supervision/bm25.h"
#include "supervision/repair_note.h"

namespace ptxbench::supervision {

enum class retrieval_mode { notes, notes_and_kernel };

/// "notes" | "notes+kernel"
std::string retrieval_mode_name(retrieval_mode m);
result<retrieval_mode> parse_retrieval_mode(const std::string& text);

struct retrieval_options {
  retrieval_mode mode = retrieval_mode::notes;
  bm25_params bm25;       ///< upstream: k1 = 1.5, b = 0.75
  int top_groups = 3;     ///< wrong-kernel groups taken
  int max_notes = 8;      ///< instruction notes shown at most
};

/// Fails for k1/b out of range or non-positive counts.
status check_retrieval_options(const retrieval_options& o);

/// The notes grouped by wrong kernel, each group's terms computed once; shared by every trajectory.
class note_corpus {
 public:
  explicit note_corpus(note_set notes);

  struct group {
    std::string wrong_sha256;
    std::vector<std::size_t> notes;  ///< indices into notes(), in file order
    std::vector<std::string> terms;  ///< source_terms of the wrong kernel
  };

  [[nodiscard]] const note_set& notes() const { return m_notes; }
  [[nodiscard]] const std::vector<group>& groups() const { return m_groups; }
  /// sha256 of each note's notes-file record (to_json(note).dump()), parallel to notes().notes.
  [[nodiscard]] const std::vector<std::string>& note_hashes() const { return m_note_hashes; }

 private:
  note_set m_notes;
  std::vector<group> m_groups;  ///< in order of first appearance
  std::vector<std::string> m_note_hashes;
};

struct retrieved_group {
  std::size_t group = 0;  ///< index into note_corpus::groups()
  double score = 0;
  std::vector<std::size_t> notes;  ///< its allowed notes (indices into the note set), in file order
};

struct taken_note {
  std::size_t note = 0;         ///< index into the note set
  std::size_t instruction = 0;  ///< index into its instructions
};

struct retrieval_result {
  std::size_t query_terms = 0;             ///< distinct terms of the query
  std::size_t candidate_groups = 0;        ///< groups the ranking saw (after exclusions)
  std::vector<retrieved_group> groups;     ///< best first; score > 0 only
  std::vector<taken_note> instruction_notes;
  std::optional<std::size_t> fixed_kernel_note;  ///< notes+kernel: whose fixed kernel is shown
};

/// Ranks over the allowed notes of a corpus (a group is the allowed notes of one wrong kernel; one
/// with none allowed does not exist for this retriever, not even in the BM25 statistics).
class note_retriever {
 public:
  note_retriever(std::shared_ptr<const note_corpus> corpus, const std::vector<bool>& allowed, retrieval_options options);

  [[nodiscard]] retrieval_result retrieve(std::string_view failing_kernel, std::string_view error_text) const;
  [[nodiscard]] const note_corpus& corpus() const { return *m_corpus; }
  [[nodiscard]] const retrieval_options& options() const { return m_options; }
  /// The corpus this retriever ranks, after exclusions: {"sha256", "groups", "notes", "terms"}.
  /// sha256 covers, in order, the term extraction's version, every allowed group's wrong-kernel
  /// sha256 and every allowed note's key and record hash (docs/supervision.md, "Reproducibility"):
  /// two trajectories with the same corpus sha256, parameters and query retrieve the same notes
  /// with the same scores.
  [[nodiscard]] ordered_json corpus_record() const;

 private:
  std::shared_ptr<const note_corpus> m_corpus;
  retrieval_options m_options;
  std::vector<std::size_t> m_groups;                   ///< corpus groups with an allowed note
  std::vector<std::vector<std::size_t>> m_group_notes;  ///< their allowed notes
  std::unique_ptr<bm25_index> m_index;
};

/// The text appended to the feedback ("" when nothing was retrieved).
std::string render_retrieval(const note_corpus& corpus, const retrieval_result& r, retrieval_mode mode);

/// What a turn records: mode, parameters, the groups with their scores and notes, the instruction
/// notes shown, the fixed kernel shown.
ordered_json retrieval_record(const note_corpus& corpus, const retrieval_result& r, const retrieval_options& o);

}  // namespace ptxbench::supervision
