#include "baselines/cudnn_sdpa_request.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "baselines/cudnn_sdpa.h"

namespace ptxbench::gpu {
namespace {

const char* type_name(dtype t) {
  switch (t) {
    case dtype::bfloat16: return "bfloat16";
    case dtype::float32: return "float32";
    case dtype::float16: return "float16";
    default: return "another dtype";
  }
}

result<int64_t> axis(const baseline_request& request, const char* name) {
  auto it = request.axes.find(name);
  if (it == request.axes.end()) {
    return make_error(fmt::format("{}: axis '{}' missing (the cuDNN attention baselines need B, H, S, D)",
                                  request.kind, name));
  }
  if (it->second <= 0) return make_error(fmt::format("{}: axis '{}' = {} must be positive", request.kind, name, it->second));
  return it->second;
}

// `role` is "input" or "output"; the message is only formatted on failure (run() calls this too).
status check_tensor(const std::string& kind, const char* role, std::size_t index, const device_tensor& t,
                    const tensor_expectation& want) {
  if (t.type != want.type || t.shape != want.shape) {
    return make_error(fmt::format("{}: {} {} ({}): expected {} [{}], got {} [{}]", kind, role, index, want.name,
                                  type_name(want.type), fmt::join(want.shape, ", "), type_name(t.type),
                                  fmt::join(t.shape, ", ")));
  }
  if (t.data == nullptr) {
    return make_error(fmt::format("{}: {} {} ({}): null data pointer", kind, role, index, want.name));
  }
  return ok();
}

}  // namespace

result<cudnn::sdpa_problem> sdpa_problem_from_request(const baseline_request& request) {
  cudnn::sdpa_problem p;
  for (auto [name, field] : {std::pair{"B", &p.b}, {"H", &p.h}, {"S", &p.s}, {"D", &p.d}}) {
    result<int64_t> value = axis(request, name);
    if (!value) return value.err();
    *field = *value;
  }
  const ordered_json& options = request.options;
  const std::string where = request.kind + ": baseline_options";
  if (!options.is_object()) return make_error(where + ": expected an object with 'causal'");
  for (const auto& [key, value] : options.items()) {
    if (key != "causal" && key != "scale") {
      return make_error(fmt::format("{}: unknown field '{}' (expected causal, scale)", where, key));
    }
  }
  if (!options.contains("causal") || !options["causal"].is_boolean()) {
    return make_error(where + ".causal: missing or not a boolean (expected true or false)");
  }
  p.causal = options["causal"].get<bool>();
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)));
  if (options.contains("scale")) {
    const ordered_json& scale = options["scale"];
    if (scale.is_number() && scale.get<double>() > 0.0) {
      p.scale = scale.get<float>();
    } else if (!(scale.is_string() && scale.get<std::string>() == "1/sqrt(D)")) {
      return make_error(where + ".scale: expected \"1/sqrt(D)\" or a positive number");
    }
  }
  return p;
}

std::vector<tensor_expectation> expected_inputs(cudnn::sdpa_direction direction, const cudnn::sdpa_problem& p) {
  const std::vector<int64_t> bhsd{p.b, p.h, p.s, p.d};
  const std::vector<int64_t> bhs{p.b, p.h, p.s};
  if (direction == cudnn::sdpa_direction::forward) {
    return {{"Q", dtype::bfloat16, bhsd}, {"K", dtype::bfloat16, bhsd}, {"V", dtype::bfloat16, bhsd}};
  }
  return {{"Q", dtype::bfloat16, bhsd}, {"K", dtype::bfloat16, bhsd},  {"V", dtype::bfloat16, bhsd},
          {"O", dtype::bfloat16, bhsd}, {"dO", dtype::bfloat16, bhsd}, {"L", dtype::float32, bhs}};
}

std::vector<tensor_expectation> expected_outputs(cudnn::sdpa_direction direction, const cudnn::sdpa_problem& p) {
  const std::vector<int64_t> bhsd{p.b, p.h, p.s, p.d};
  if (direction == cudnn::sdpa_direction::forward) {
    return {{"O", dtype::bfloat16, bhsd}, {"LSE", dtype::float32, {p.b, p.h, p.s}}};
  }
  return {{"dQ", dtype::bfloat16, bhsd}, {"dK", dtype::bfloat16, bhsd}, {"dV", dtype::bfloat16, bhsd}};
}

result<std::vector<void*>> checked_pointers(const std::string& kind, cudnn::sdpa_direction direction,
                                            const cudnn::sdpa_problem& problem,
                                            const std::vector<device_tensor>& inputs,
                                            const std::vector<device_tensor>& outputs) {
  std::vector<void*> pointers;
  const auto want_in = expected_inputs(direction, problem);
  const auto want_out = expected_outputs(direction, problem);
  if (inputs.size() != want_in.size() || outputs.size() != want_out.size()) {
    return make_error(fmt::format("{}: expected {} inputs and {} outputs, got {} and {}", kind, want_in.size(),
                                  want_out.size(), inputs.size(), outputs.size()));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (status s = check_tensor(kind, "input", i, inputs[i], want_in[i]); !s) return s.err();
    pointers.push_back(inputs[i].data);
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (status s = check_tensor(kind, "output", i, outputs[i], want_out[i]); !s) return s.err();
    pointers.push_back(outputs[i].data);
  }
  return pointers;
}

}  // namespace ptxbench::gpu
