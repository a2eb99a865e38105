#pragma once
// Finding the verdicts in what a coding agent's tools printed. An ATIF step's observation is the
// output of the agent's command or tool: `ptxbench eval --json` prints the verdict as JSON, maybe
// inside other text (mini-swe-agent wraps output in <output> tags), and `ptxbench mcp` returns it as
// structured content. Only JSON objects that say "format": "ptxbench.verdict/1" count; the text
// around them, and verdicts printed as prose, are never interpreted.

#include <cstddef>
#include <string_view>
#include <vector>

#include "core/json_check.h"

namespace ptxbench::harbor {

/// The verdict objects in `text`, in order of appearance. A verdict's "format" is its first key
/// (verdict/verdict_json.h writes it first), which is how its opening brace is found; a fragment
/// that does not parse is skipped. At most `max_found` are returned, and the work is linear in the
/// text's length whatever it holds.
std::vector<ordered_json> find_verdicts(std::string_view text, std::size_t max_found = 1000);

}  // namespace ptxbench::harbor
