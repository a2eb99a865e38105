#pragma once
// What a CPU worker hands a GPU worker, as one content-addressed blob in the job store: the verdict
// so far (the CPU stages' records) and the built shared object. The store names it by its sha256 and
// the GPU worker checks the hash before it unpacks anything (service/worker_loop.h).
//
// Format (our own: two named byte strings need no archive library):
//   "ptxbench-artifact/1\n" then, per part, "<name> <size>\n" <size bytes> "\n".

#include <string>
#include <string_view>

#include "core/result.h"

namespace ptxbench::service {

struct artifact_parts {
  std::string cpu_verdict_json;  ///< ptxbench.verdict/1 holding the CPU stages
  std::string shared_object;     ///< the candidate .so exactly as built
};

std::string pack_artifact(const artifact_parts& parts);
result<artifact_parts> unpack_artifact(std::string_view bytes);

}  // namespace ptxbench::service
