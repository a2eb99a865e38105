#pragma once
// environment/ of an exported Harbor task: the agent's container. Its Dockerfile starts from the
// PTXBench agent image (docker/agent.Dockerfile: the ptxbench binary with suite/, packs/ and the ABI
// header under /opt/ptxbench, python3 for the verifier; no CUDA, no GPU), and docker-compose.yaml
// lets the container reach a service on the host as host.docker.internal.

#include <string>

#include "harbor/task_folder.h"

namespace ptxbench::harbor {

std::string render_dockerfile(const task& t, const target_info& target, const export_settings& settings);
std::string render_compose_file();

}  // namespace ptxbench::harbor
