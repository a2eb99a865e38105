#pragma once
// Finding the kernel in a model's reply. Upstream accepted only ```cpp fences; models write
// ```cuda, ```cu and ```c++ just as often, or leave the fence untagged. The last *valid* block
// wins (it exports the entry point and defines a kernel), because models often show fragments first.

#include <cstddef>
#include <optional>
#include <string>

namespace ptxbench::agent {

struct extracted_code {
  std::string code;
  std::string fence_tag;     ///< "cuda", "cpp", "" (untagged) ...
  int block_index = 0;       ///< 0-based among the reply's fenced blocks
  int blocks_found = 0;
  bool valid = false;        ///< contains PTXBENCH_EXPORT and a __global__ kernel
  bool unterminated = false; ///< the reply ended inside this block (cut off at the token limit?)
};

struct extraction {
  std::optional<extracted_code> code;
  std::string problem;  ///< why nothing was taken, one line, when !code
};

/// Extracts the kernel source from a reply. `<think>…</think>` regions are ignored. Accepted fences
/// for language "cuda": ``` or ~~~ tagged cpp, c++, cuda, cu, cxx or cuh, or untagged when the block
/// contains __global__; valid = PTXBENCH_EXPORT and a __global__ kernel. For language "triton":
/// tagged python, py, python3 or triton, or untagged when the block contains @triton.jit; valid =
/// a @triton.jit function and a top-level `def run(`. When no block is valid, the last accepted
/// block is taken anyway (valid = false) so the build can tell the model what is missing. Blocks
/// over max_code_bytes are refused with a reason.
extraction extract_kernel(const std::string& reply, std::size_t max_code_bytes = 512u << 10,
                          const std::string& language = "cuda");

/// The reply without its `<think>…</think>` regions (each opening tag up to the first closing tag
/// after it; an unclosed tag and what follows it are kept: it may be all the reply there is).
std::string strip_think(const std::string& reply);

}  // namespace ptxbench::agent
