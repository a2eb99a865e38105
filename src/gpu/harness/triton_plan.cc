#include "gpu/harness/triton_plan.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace ptxbench::gpu {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t k_max_nodes = 4096;

uint64_t u64_of(const std::vector<uint8_t>& b) {
  uint64_t v = 0;
  std::memcpy(&v, b.data(), std::min<std::size_t>(8, b.size()));
  return v;
}

bool all_zero(const std::vector<uint8_t>& b) {
  return std::all_of(b.begin(), b.end(), [](uint8_t x) { return x == 0; });
}

/// Which tensor holds address `p` (and where in it), or -1.
std::pair<int, int64_t> locate(uint64_t p, const std::vector<uint64_t>& ptrs, const std::vector<uint64_t>& bytes) {
  for (std::size_t t = 0; t < ptrs.size() && t < bytes.size(); ++t)
    if (p >= ptrs[t] && p < ptrs[t] + std::max<uint64_t>(bytes[t], 1)) return {static_cast<int>(t), static_cast<int64_t>(p - ptrs[t])};
  return {-1, 0};
}

}  // namespace

std::string unreplayable_parameter(const std::vector<std::string>& param_types) {
  for (std::size_t i = 0; i < param_types.size(); ++i) {
    const std::string& type = param_types[i];
    if ((!type.empty() && type[0] == '*') || triton_scalar_bytes(type) > 0) continue;
    std::string why = type.rfind("tensordesc", 0) == 0 || type == "nvTmaDesc"
                          ? "host tensor descriptors are not supported: the descriptor holds the capture process's "
                            "addresses, which a plan cannot rebind to the task's tensors"
                          : "only pointers and scalars can be bound";
    return fmt::format("signature parameter {} has type {}, which cannot be replayed ({})", i, type, why);
  }
  return "";
}

int triton_scalar_bytes(const std::string& type) {
  if (type == "i1" || type == "i8" || type == "u8" || type == "u1") return type == "i1" || type == "u1" ? 4 : 1;
  if (type == "i16" || type == "u16") return 2;
  if (type == "i32" || type == "u32" || type == "fp32" || type == "f32" || type == "fp16" || type == "bf16") return 4;
  if (type == "i64" || type == "u64" || type == "fp64") return 8;
  return 0;
}

result<triton_capture> triton_capture_from_json(const ordered_json& j, const fs::path& scratch) {
  if (!j.is_object() || j.value("format", "") != "ptxbench.triton-capture/1")
    return make_error("not a Triton capture (expected \"format\": \"ptxbench.triton-capture/1\")");
  try {
    triton_capture c;
    for (const auto& t : j.at("tensors")) c.tensor_ptrs.push_back(t.at("ptr").get<uint64_t>());
    c.nodes = j.at("nodes");
    if (!c.nodes.is_array() || c.nodes.size() > k_max_nodes)
      return make_error(fmt::format("the capture recorded {} GPU operations (at most {})", c.nodes.size(), k_max_nodes));
    const auto& ks = j.at("kernels");
    if (!ks.is_array() || ks.size() > 256) return make_error("the capture lists more than 256 compiled kernels");
    const fs::path root = fs::weakly_canonical(scratch);
    for (const auto& kj : ks) {
      captured_kernel k;
      k.function = kj.at("function").get<std::string>();
      k.name = kj.at("name").get<std::string>();
      k.jit = kj.at("jit").get<std::string>();
      fs::path cubin = fs::weakly_canonical(root / kj.at("cubin").get<std::string>());
      auto rel = cubin.lexically_relative(root);
      if (rel.empty() || *rel.begin() == "..") return make_error("a captured cubin lies outside the capture's folder");
      k.cubin = cubin;
      for (const auto& t : kj.at("param_types")) k.param_types.push_back(t.get<std::string>());
      k.hints = kj.at("hints");
      if (!k.hints.is_object()) return make_error("a captured kernel's compile hints are not an object");
      c.kernels.push_back(std::move(k));
    }
    return c;
  } catch (const std::exception& e) {
    return make_error(std::string("malformed Triton capture: ") + e.what());
  }
}

result<launch_plan> plan_from_capture(const triton_capture& c, const std::vector<uint64_t>& tensor_bytes,
                                      const std::map<fs::path, std::string>& cubin_sha256) {
  if (c.tensor_ptrs.size() != tensor_bytes.size())
    return make_error(fmt::format("the capture names {} tensors, the call passes {}", c.tensor_ptrs.size(), tensor_bytes.size()));
  launch_plan plan;
  plan.tensors = static_cast<int>(tensor_bytes.size());
  // One plan kernel per (function, configuration), numbered in order of first launch.
  std::map<std::string, int> kernel_index;
  try {
    for (std::size_t n = 0; n < c.nodes.size(); ++n) {
      const auto& node = c.nodes[n];
      std::string where = fmt::format("GPU operation {}", n);
      std::string kind = node.at("kind").get<std::string>();
      if (kind == "memset") {
        plan_step s;
        s.k = plan_step::kind::memset;
        auto [t, off] = locate(node.at("dst").get<uint64_t>(), c.tensor_ptrs, tensor_bytes);
        if (t < 0) return make_error(where + ": a memset of memory that is none of the task's tensors");
        s.tensor = t;
        s.offset = off;
        s.value = node.at("value").get<uint32_t>();
        s.element_size = node.at("element_size").get<int>();
        uint64_t width = node.at("width").get<uint64_t>(), height = node.at("height").get<uint64_t>();
        uint64_t pitch = node.at("pitch").get<uint64_t>();
        if (s.element_size != 1 && s.element_size != 2 && s.element_size != 4)
          return make_error(where + ": a memset of elements other than 1, 2 or 4 bytes");
        if (height > 1 && pitch != width * static_cast<uint64_t>(s.element_size))
          return make_error(where + ": a strided (2D) memset");
        s.count = width * std::max<uint64_t>(height, 1);
        if (static_cast<uint64_t>(off) + s.count * static_cast<uint64_t>(s.element_size) > tensor_bytes[t])
          return make_error(where + ": a memset past the end of a tensor");
        plan.steps.push_back(std::move(s));
        continue;
      }
      if (kind != "kernel")
        return make_error(where + ": a " + kind + " node (only kernel launches and memsets can be replayed: no copies, "
                          "host callbacks, events or allocations in run())");
      const std::string function = node.at("function").get<std::string>();
      const std::string name = node.at("name").get<std::string>();
      auto ck = std::find_if(c.kernels.begin(), c.kernels.end(), [&](const captured_kernel& k) { return k.function == function; });
      if (ck == c.kernels.end())
        return make_error(fmt::format("a kernel the candidate did not compile ran: {} (only @triton.jit kernels of kernel.py "
                                      "may run; no torch operations or other libraries on the GPU)", name));
      if (ck->name != name)
        return make_error(fmt::format("{}: the capture's kernel list names it {}", where, ck->name));
      auto sha = cubin_sha256.find(ck->cubin);
      if (sha == cubin_sha256.end()) return make_error(fmt::format("{}: the cubin of {} was not read", where, name));
      plan_kernel pk;
      pk.name = name;
      pk.cubin = ck->cubin;
      pk.cubin_sha256 = sha->second;
      auto block = plan_dims_from_json(node.at("block"), where + " block");
      if (!block) return block.err();
      pk.block = *block;
      pk.shared_bytes = node.at("shared_bytes").get<unsigned>();
      auto cluster = plan_dims_from_json(node.at("cluster"), where + " cluster");
      if (!cluster) return cluster.err();
      pk.cluster = *cluster;
      pk.cooperative = node.at("cooperative").get<bool>();
      const std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", pk.cubin_sha256, pk.name, pk.block[0], pk.block[1],
                                          pk.block[2], pk.shared_bytes, pk.cluster[0] * 1000000 + pk.cluster[1] * 1000 + pk.cluster[2],
                                          pk.cooperative, function);
      auto [it, fresh] = kernel_index.emplace(key, static_cast<int>(plan.kernels.size()));
      if (fresh) plan.kernels.push_back(pk);
      plan_step s;
      s.k = plan_step::kind::launch;
      s.kernel = it->second;
      auto grid = plan_dims_from_json(node.at("grid"), where + " grid");
      if (!grid) return grid.err();
      s.grid = *grid;
      const auto& params = node.at("params");
      // A parameter type the replay cannot bind is the specific reason, so it is named before the
      // count is compared: Triton's launcher expands a host tensor descriptor into a CUtensorMap plus
      // its shape and strides, so such a launch never has as many parameters as its signature.
      if (auto problem = unreplayable_parameter(ck->param_types); !problem.empty())
        return make_error(fmt::format("{} ({}): {}", where, name, problem));
      // The signature's non-constexpr parameters, then Triton's hidden scratch pointers (one or two,
      // by version), which the launcher appends.
      std::vector<std::string> types = ck->param_types;
      if (params.is_array() && params.size() > types.size() && params.size() - types.size() <= 2)
        types.resize(params.size(), "scratch");
      if (!params.is_array() || params.size() != types.size())
        return make_error(fmt::format("{} ({}): {} parameters launched, {} in its Triton signature", where, name,
                                      params.is_array() ? params.size() : 0, ck->param_types.size()));
      for (std::size_t p = 0; p < params.size(); ++p) {
        std::string pwhere = fmt::format("{} ({}) parameter {}", where, name, p);
        if (!params[p].is_string()) return make_error(pwhere + ": parameter bytes must be a hex string");
        auto bytes = plan_bytes_from_hex(params[p].get<std::string>(), pwhere);
        if (!bytes) return bytes.err();
        const std::string& type = types[p];
        plan_param a;
        if (type == "scratch") {
          if (!all_zero(*bytes))
            return make_error(pwhere + ": the kernel needs Triton's scratch memory (device-side tensor descriptors, "
                              "profiling): not supported by the replay");
          a.bytes = std::move(*bytes);
        } else if (!type.empty() && type[0] == '*') {
          if (bytes->size() != 8) return make_error(pwhere + ": a pointer that is not 8 bytes");
          uint64_t value = u64_of(*bytes);
          if (value == 0) {
            a.bytes = std::move(*bytes);
          } else {
            auto [t, off] = locate(value, c.tensor_ptrs, tensor_bytes);
            if (t < 0)
              return make_error(pwhere + ": a pointer outside the task's tensors (memory run() allocated itself, or "
                                "another process's, cannot be replayed)");
            a.k = plan_param::kind::tensor;
            a.tensor = t;
            a.offset = off;
          }
        } else if (int size = triton_scalar_bytes(type); size > 0) {
          if (static_cast<int>(bytes->size()) != size)
            return make_error(fmt::format("{}: a {} passed as {} bytes", pwhere, type, bytes->size()));
          a.bytes = std::move(*bytes);
        } else {
          return make_error(fmt::format("{}: parameter type {} cannot be replayed", pwhere, type));  // not reached
        }
        s.params.push_back(std::move(a));
      }
      plan.steps.push_back(std::move(s));
    }
  } catch (const std::exception& e) {
    return make_error(std::string("malformed Triton capture: ") + e.what());
  }
  if (plan.steps.empty()) return make_error("run() put no work on the GPU (nothing was captured on its stream)");
  // The function handle made plan kernels of one capture distinct; equal plans compare by hash.
  return plan;
}

std::vector<const captured_kernel*> kernels_to_recompile(const triton_capture& c, const launch_plan& p,
                                                         const std::map<fs::path, std::string>& cubin_sha256) {
  std::vector<const captured_kernel*> out;
  std::vector<std::string> seen;
  for (const auto& pk : p.kernels) {
    if (std::find(seen.begin(), seen.end(), pk.cubin_sha256) != seen.end()) continue;
    for (const auto& k : c.kernels) {
      auto sha = cubin_sha256.find(k.cubin);
      if (sha != cubin_sha256.end() && sha->second == pk.cubin_sha256) {
        out.push_back(&k);
        seen.push_back(pk.cubin_sha256);
        break;
      }
    }
  }
  return out;
}

}  // namespace ptxbench::gpu
