#include "harbor/task_toml.h"

#include <fmt/format.h>

namespace ptxbench::harbor {

std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) out += fmt::format("\\u{:04X}", c);
        else out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

namespace {

std::string toml_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + toml_string(items[i]);
  return out + "]";
}

// Harbor resolves ${VAR:-default} from the host's environment when it starts the container.
std::string env_table(const std::string& header, const export_settings& s) {
  return fmt::format("[{}]\nPTXBENCH_SERVICE_URL = {}\nPTXBENCH_SERVICE_TOKEN = {}\n", header,
                     toml_string("${PTXBENCH_SERVICE_URL:-" + s.service_url + "}"),
                     toml_string("${PTXBENCH_SERVICE_TOKEN:-}"));
}

}  // namespace

std::string render_task_toml(const task& t, const target_info& target, const export_settings& s) {
  const std::string families = fmt::format("{}", fmt::join(target.required_families, " or "));
  const std::string description =
      fmt::format("Write a CUDA kernel for the PTXBench task {} ({}) on the {} ({}) that executes {} instructions; "
                  "it is evaluated against {} through a PTXBench service",
                  t.name, t.def.op_type, target.gpu_name, target.arch, families,
                  t.baseline.empty() ? std::string("the reference") : t.baseline);
  std::vector<std::string> keywords = {"ptxbench", "cuda", t.problem, target.name, target.arch};
  std::string out;
  out += fmt::format(
      "# Harbor task: PTXBench task {} on {} (prompt variant {}), written by `ptxbench tasks export --format harbor`\n"
      "# (ptxbench {}). docs/coding-agents.md in PTXBench describes every file of this folder.\n",
      t.name, target.name, s.variant, s.ptxbench_version);
  out += "schema_version = \"1.1\"\n\n";
  out += "[task]\n";
  out += fmt::format("name = {}\n", toml_string("ptxbench/" + t.name));
  out += fmt::format("description = {}\n", toml_string(description));
  out += "authors = []\n";
  out += fmt::format("keywords = {}\n\n", toml_list(keywords));
  out += "[metadata]\n";
  out += "category = \"gpu-kernel-optimization\"\n";
  out += "difficulty = \"hard\"\n";
  out += fmt::format("ptxbench_version = {}\n", toml_string(s.ptxbench_version));
  out += fmt::format("ptxbench_task = {}\n", toml_string(t.name));
  out += fmt::format("ptxbench_target = {}\n", toml_string(target.name));
  out += fmt::format("ptxbench_variant = {}\n", toml_string(s.variant));
  out += fmt::format("ptxbench_problem = {}\n", toml_string(t.problem));
  out += fmt::format("ptxbench_baseline = {}\n", toml_string(t.baseline));
  out += fmt::format("ptxbench_workload = {}\n", toml_string(t.wl.uuid));
  out += fmt::format("required_families = {}\n\n", toml_list(target.required_families));
  out += fmt::format("[agent]\ntimeout_sec = {:.1f}\n\n", s.agent_timeout_s);
  // The verifier waits for one evaluation through the service's queue (GPU stages included).
  out += fmt::format("[verifier]\ntimeout_sec = {:.1f}\n\n", s.verifier_timeout_s);
  out += env_table("verifier.env", s) + "\n";
  // No GPU in the agent's container: the GPU stages run on the service's GPU workers.
  out += "[environment]\nbuild_timeout_sec = 1200.0\ncpus = 2\nmemory_mb = 4096\nstorage_mb = 10240\ngpus = 0\n\n";
  out += env_table("environment.env", s);
  return out;
}

}  // namespace ptxbench::harbor
