// The pipeline behind the evaluator interface: runs the CPU half of each (already resolved) request
// and, in eval mode, the GPU half (several candidates of one task share one trusted harness).
#include <fmt/format.h>

#include "eval/gpu_stage.h"
#include "eval/pipeline.h"
#include "eval/pipeline_halves.h"
#include "eval/triton_stages.h"
#include "suite/trace.h"

namespace ptxbench::eval {
namespace {

class pipeline_evaluator final : public evaluator {
 public:
  explicit pipeline_evaluator(pipeline_config config) : m_config(std::move(config)) {}

  result<verdict> evaluate(const eval_request& request) override { return std::move(evaluate_batch({request}).front()); }

  std::vector<result<verdict>> evaluate_batch(const std::vector<eval_request>& requests) override {
    std::vector<result<verdict>> out;
    struct pending {
      std::size_t index;
      build::build_result built;
    };
    std::vector<pending> gpu;
    std::vector<verdict> verdicts(requests.size());
    std::vector<bool> on_gpu(requests.size(), false);
    for (std::size_t i = 0; i < requests.size(); ++i) {
      auto half = run_cpu_half(requests[i], m_config);
      if (!half) {
        out.push_back(half.err());
        continue;
      }
      verdicts[i] = std::move(half->v);
      out.push_back(verdicts[i]);  // placeholder; replaced below
      if (half->built) {
        on_gpu[i] = true;
        gpu.push_back({i, std::move(*half->built)});
      }
    }
    // One harness per task (and target) for the candidates that reached the GPU stages.
    for (std::size_t a = 0; a < gpu.size();) {
      const eval_request& first = requests[gpu[a].index];
      std::size_t b = a;
      std::vector<gpu_candidate> group;
      while (b < gpu.size() && requests[gpu[b].index].t == first.t && requests[gpu[b].index].target == first.target) {
        const solution& candidate = requests[gpu[b].index].candidate;
        group.push_back({&gpu[b].built, candidate.entry_symbol(), &verdicts[gpu[b].index],
                         is_triton(candidate) ? "triton" : "cuda"});
        ++b;
      }
      if (auto st = run_gpu_stages(*first.t, *first.target, group, m_config); !st)
        for (std::size_t k = a; k < b; ++k) out[gpu[k].index] = st.err().with_context("GPU stages");
      a = b;
    }
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (!out[i].ok()) continue;
      if (verdicts[i].outcome() == eval_outcome::infra_error) {
        out[i] = make_error(verdicts[i].decided.message);
        continue;
      }
      if (on_gpu[i]) finish_verdict(verdicts[i], requests[i], m_config);  // the CPU half finished the others
      out[i] = std::move(verdicts[i]);
    }
    return out;
  }

 private:
  pipeline_config m_config;
};

}  // namespace

std::unique_ptr<evaluator> make_pipeline_evaluator(const pipeline_config& config) {
  return std::make_unique<pipeline_evaluator>(config);
}

}  // namespace ptxbench::eval
