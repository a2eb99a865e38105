#include "mcp/kernel_tools.h"

#include <filesystem>

#include <fmt/format.h>

#include "core/file_io.h"
#include "eval/pipeline.h"
#include "eval/triton_stages.h"
#include "mcp/tool_arguments.h"
#include "mcp/tool_result.h"
#include "verdict/verdict_json.h"

namespace ptxbench::mcp {
namespace fs = std::filesystem;
namespace {

struct kernel_text {
  std::string name;  ///< kernel.cu, kernel.py, or the file's own name
  std::string language;
  std::string content;
};

// The kernel the arguments name, or why it cannot be used (a tool error: the model can fix it).
result<kernel_text> kernel_of(const kernel_arguments& a) {
  if (a.path) {
    const std::string ext = fs::path(*a.path).extension().string();
    if (ext != ".cu" && ext != ".py")
      return make_error(fmt::format("path {}: expected a .cu (CUDA) or .py (Triton) file", *a.path));
    auto text = read_text_file(*a.path, k_max_kernel_bytes);
    if (!text) return text.err().with_context("path");
    return kernel_text{fs::path(*a.path).filename().string(), ext == ".py" ? "triton" : "cuda", std::move(*text)};
  }
  const std::string language = a.language.value_or("cuda");
  if (a.source->size() > k_max_kernel_bytes)
    return make_error(fmt::format("source: {} is more than a kernel may hold ({})", human_bytes(a.source->size()),
                                  human_bytes(k_max_kernel_bytes)));
  if (a.source->find_first_not_of(" \t\r\n") == std::string::npos)
    return make_error("source: empty; give the complete kernel file");
  if (auto st = check_text(*a.source, "source"); !st) return st.err();
  return kernel_text{language == "triton" ? "kernel.py" : "kernel.cu", language, *a.source};
}

}  // namespace

result<ordered_json> kernel_tools::call(const ordered_json& arguments, bool run_on_gpu) {
  auto a = read_kernel_arguments(arguments);
  if (!a) return a.err();
  const suite& s = *m_services.tasks;
  const std::string target_name = a->target.value_or(m_services.default_target);
  auto pair = resolve_evaluation(s, a->task, target_name, run_on_gpu);
  if (!pair) return tool_error(pair.err().message);
  auto kernel = kernel_of(*a);
  if (!kernel) return tool_error(kernel.err().message);
  if (run_on_gpu && pair->target->verification == "runtime" && m_services.gpu_ready)
    if (auto st = m_services.gpu_ready(*pair->target); !st) return tool_error(st.err().message);
  eval_request request{pair->t, pair->target,
                       kernel->language == "triton"
                           ? eval::solution_for_triton_file(kernel->name, kernel->content, *pair->t, *pair->target)
                           : eval::solution_for_kernel_file(kernel->name, kernel->content, *pair->t, *pair->target),
                       run_on_gpu};
  result<verdict> v = make_error("not evaluated");
  {
    std::lock_guard<std::mutex> lock(m_one_at_a_time);
    v = m_services.evaluator->evaluate(request);
  }
  if (!v)
    return tool_error(fmt::format("the evaluation failed (infrastructure, not the kernel): {}", v.err().message));
  return structured_result(to_json(*v), m_services.summary(*v, kernel->name), true);
}

}  // namespace ptxbench::mcp
