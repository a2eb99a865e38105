#include "cli/target_choice.h"

#include <fmt/format.h>

#include "cli/gpu_presence.h"
#include "eval/local_gpu.h"

namespace ptxbench::cli {

result<std::string> choose_target(const suite& s, const target_question& q) {
  if (!q.given.empty()) {
    const target_info* named = s.find_target(q.given);
    if (!named || !q.on_local_gpu || named->verification != "runtime") return q.given;
    if (auto why = missing_gpu()) return q.given;  // the caller says there is no GPU, in its own words
    if (auto st = eval::check_target_for_device(s, *named, q.device, q.harness); !st) return st.err();
    return q.given;
  }
  if (missing_gpu()) return std::string(k_cpu_default_target);
  auto here = eval::local_target(s, q.device, q.harness);
  if (here) return (*here)->name;
  if (!q.on_local_gpu) return std::string(k_cpu_default_target);  // check: the CPU stages need no answer
  return make_error(fmt::format("cannot tell which target GPU {} is ({}); pass --target", q.device, here.err().message));
}

}  // namespace ptxbench::cli
