#pragma once
// The terms retrieval compares: identifiers, with comments removed. A kernel's words are its
// code identifiers plus the identifier-like words inside its string literals, because inline PTX
// lives in strings ("wgmma.mma_async.sync.aligned.m64n128k16" gives wgmma, mma_async, sync, aligned,
// m64n128k16) and the instructions are what repair notes are about. Comments never count: a comment
// naming an instruction says nothing about whether the code uses it.

#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::supervision {

/// Names the term extraction below. Recorded with every retrieval corpus (note_retriever::corpus_record),
/// so that a change to what counts as a term, which changes every score, shows in the records: bump
/// it whenever source_terms or text_terms would split any text differently.
inline constexpr const char* k_terms_version = "identifiers+string-words/1";

/// Identifiers of a C/C++/CUDA source (comments dropped, via the source gate's scanner), then the
/// identifier-like words of its string literals. The tails of numeric literals ("f" of 1.5f, "x1f"
/// of 0x1f) and escape letters ("n" of \n) are not terms.
std::vector<std::string> source_terms(std::string_view source);

/// Identifier-like words ([A-Za-z_][A-Za-z0-9_]*) of free text such as a compiler log, with the
/// same exclusions.
std::vector<std::string> text_terms(std::string_view text);

}  // namespace ptxbench::supervision
