#include "harbor/environment_files.h"

#include <fmt/format.h>

#include "harbor/instruction.h"

namespace ptxbench::harbor {

std::string render_dockerfile(const task& t, const target_info& target, const export_settings& s) {
  return fmt::format(
      "# The agent's container for the PTXBench task {task} on {target} (no GPU: the GPU stages run on the PTXBench\n"
      "# service). The base image holds ptxbench {version} with suite/, packs/ and include/ under {root}; build it once\n"
      "# from a PTXBench checkout of that version:\n"
      "#   docker build -f docker/agent.Dockerfile -t {image} .\n"
      "FROM {image}\n"
      "WORKDIR /workspace\n",
      fmt::arg("task", t.name), fmt::arg("target", target.name), fmt::arg("version", s.ptxbench_version),
      fmt::arg("root", k_ptxbench_root), fmt::arg("image", s.image));
}

std::string render_compose_file() {
  return "# host.docker.internal is the host on Linux too, where a PTXBench service may listen ($PTXBENCH_SERVICE_URL).\n"
         "services:\n"
         "  main:\n"
         "    extra_hosts:\n"
         "      - \"host.docker.internal:host-gateway\"\n";
}

}  // namespace ptxbench::harbor
