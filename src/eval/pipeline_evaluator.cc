// The pipeline behind the evaluator interface: runs the CPU half of each (already resolved) request
// and, in eval mode, the GPU half in a long-lived harness session per task (eval/session_pool.h), the
// same driver the service's GPU workers use. The sessions outlive a call, so an agent's later turns
// on the same task reuse the set-up harness.
#include <fmt/format.h>

#include "eval/pipeline.h"
#include "eval/pipeline_halves.h"
#include "eval/session_pool.h"
#include "eval/triton_stages.h"

namespace ptxbench::eval {
namespace {

class pipeline_evaluator final : public evaluator {
 public:
  explicit pipeline_evaluator(pipeline_config config) : m_config(std::move(config)) {}

  result<verdict> evaluate(const eval_request& request) override {
    auto half = run_cpu_half(request, m_config);
    if (!half) return half.err();
    if (!half->built) return std::move(half->v);  // the CPU half finished it
    gpu_candidate c{&*half->built, request.candidate.entry_symbol(), &half->v,
                    is_triton(request.candidate) ? "triton" : "cuda"};
    if (auto st = m_sessions.evaluate(*request.t, *request.target, m_config, c); !st)
      return st.err().with_context("GPU stages");
    finish_verdict(half->v, request, m_config);
    return std::move(half->v);
  }

 private:
  pipeline_config m_config;
  session_pool m_sessions;
};

}  // namespace

std::unique_ptr<evaluator> make_pipeline_evaluator(const pipeline_config& config) {
  return std::make_unique<pipeline_evaluator>(config);
}

}  // namespace ptxbench::eval
