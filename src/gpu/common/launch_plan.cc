#include "gpu/common/launch_plan.h"

#include <fmt/format.h>

#include "gpu/common/ipc_tensor.h"

namespace ptxbench::gpu {
namespace {

constexpr std::size_t k_max_param_bytes = 4096;  // CUDA's own limit on a launch's parameters is 32 KiB in all
constexpr std::size_t k_max_steps = 4096;
constexpr std::size_t k_max_kernels = 256;

}  // namespace

result<std::vector<uint8_t>> plan_bytes_from_hex(const std::string& text, const std::string& where) {
  if (text.size() % 2 != 0 || text.size() / 2 > k_max_param_bytes)
    return make_error(where + ": parameter bytes must be an even number of hex digits, at most 8 KiB of them");
  auto bytes = bytes_from_hex(text);
  if (!bytes) return make_error(where + ": parameter bytes are not lower-case hex");
  return bytes;
}

namespace {

ordered_json dims(const std::array<unsigned, 3>& d) { return ordered_json::array({d[0], d[1], d[2]}); }

}  // namespace

result<std::array<unsigned, 3>> plan_dims_from_json(const ordered_json& j, const std::string& where) {
  if (!j.is_array() || j.size() != 3) return make_error(where + ": expected three dimensions");
  std::array<unsigned, 3> d{};
  for (int i = 0; i < 3; ++i) {
    // is_number_integer: a parsed document holds these as unsigned, one built in code as int.
    if (!j[i].is_number_integer() || j[i].get<int64_t>() < 1 || j[i].get<int64_t>() > (int64_t{1} << 31))
      return make_error(where + ": dimensions are whole numbers from 1 to 2^31");
    d[i] = static_cast<unsigned>(j[i].get<uint64_t>());
  }
  return d;
}

ordered_json to_json(const launch_plan& p) {
  ordered_json kernels = ordered_json::array();
  for (const auto& k : p.kernels)
    kernels.push_back({{"name", k.name},
                       {"cubin", k.cubin.string()},
                       {"cubin_sha256", k.cubin_sha256},
                       {"block", dims(k.block)},
                       {"shared_bytes", k.shared_bytes},
                       {"cluster", dims(k.cluster)},
                       {"cooperative", k.cooperative}});
  ordered_json steps = ordered_json::array();
  for (const auto& s : p.steps) {
    if (s.k == plan_step::kind::memset) {
      steps.push_back({{"memset", {{"tensor", s.tensor}, {"offset", s.offset}, {"value", s.value},
                                   {"element_size", s.element_size}, {"count", s.count}}}});
      continue;
    }
    ordered_json params = ordered_json::array();
    for (const auto& a : s.params) {
      if (a.k == plan_param::kind::tensor) params.push_back({{"tensor", a.tensor}, {"offset", a.offset}});
      else params.push_back({{"bytes", bytes_hex(a.bytes.data(), a.bytes.size())}});
    }
    steps.push_back({{"launch", {{"kernel", s.kernel}, {"grid", dims(s.grid)}, {"params", params}}}});
  }
  return {{"format", "ptxbench.launch-plan/1"}, {"tensors", p.tensors}, {"kernels", kernels}, {"steps", steps}};
}

result<launch_plan> launch_plan_from_json(const ordered_json& j) {
  if (!j.is_object() || j.value("format", "") != "ptxbench.launch-plan/1")
    return make_error("not a launch plan (expected \"format\": \"ptxbench.launch-plan/1\")");
  try {
    launch_plan p;
    p.tensors = j.at("tensors").get<int>();
    if (p.tensors < 0 || p.tensors > 64) return make_error("launch plan: tensors must be 0..64");
    const auto& ks = j.at("kernels");
    if (!ks.is_array() || ks.size() > k_max_kernels) return make_error("launch plan: kernels must be a list of at most 256");
    for (std::size_t i = 0; i < ks.size(); ++i) {
      std::string where = fmt::format("launch plan kernels[{}]", i);
      const auto& kj = ks[i];
      plan_kernel k;
      k.name = kj.at("name").get<std::string>();
      if (k.name.empty() || k.name.size() > 1024) return make_error(where + ": a kernel name of 1 to 1024 characters");
      k.cubin = kj.at("cubin").get<std::string>();
      k.cubin_sha256 = kj.at("cubin_sha256").get<std::string>();
      auto block = plan_dims_from_json(kj.at("block"), where + ".block");
      if (!block) return block.err();
      k.block = *block;
      if (uint64_t threads = uint64_t{k.block[0]} * k.block[1] * k.block[2]; threads > 1024)
        return make_error(where + ": more than 1024 threads per block");
      k.shared_bytes = kj.at("shared_bytes").get<unsigned>();
      auto cluster = plan_dims_from_json(kj.at("cluster"), where + ".cluster");
      if (!cluster) return cluster.err();
      k.cluster = *cluster;
      k.cooperative = kj.at("cooperative").get<bool>();
      p.kernels.push_back(std::move(k));
    }
    const auto& ss = j.at("steps");
    if (!ss.is_array() || ss.size() > k_max_steps) return make_error("launch plan: steps must be a list of at most 4096");
    for (std::size_t i = 0; i < ss.size(); ++i) {
      std::string where = fmt::format("launch plan steps[{}]", i);
      const auto& sj = ss[i];
      plan_step s;
      if (sj.contains("memset")) {
        const auto& m = sj["memset"];
        s.k = plan_step::kind::memset;
        s.tensor = m.at("tensor").get<int>();
        s.offset = m.at("offset").get<int64_t>();
        s.value = m.at("value").get<uint32_t>();
        s.element_size = m.at("element_size").get<int>();
        s.count = m.at("count").get<uint64_t>();
        if (s.tensor < 0 || s.tensor >= p.tensors || s.offset < 0)
          return make_error(where + ": a memset of a tensor the call does not pass");
        if (s.element_size != 1 && s.element_size != 2 && s.element_size != 4)
          return make_error(where + ": a memset element is 1, 2 or 4 bytes");
        p.steps.push_back(std::move(s));
        continue;
      }
      const auto& l = sj.at("launch");
      s.kernel = l.at("kernel").get<int>();
      if (s.kernel < 0 || s.kernel >= static_cast<int>(p.kernels.size()))
        return make_error(where + ": launches a kernel the plan does not hold");
      auto grid = plan_dims_from_json(l.at("grid"), where + ".grid");
      if (!grid) return grid.err();
      s.grid = *grid;
      for (const auto& aj : l.at("params")) {
        plan_param a;
        if (aj.contains("tensor")) {
          a.k = plan_param::kind::tensor;
          a.tensor = aj.at("tensor").get<int>();
          a.offset = aj.at("offset").get<int64_t>();
          if (a.tensor < 0 || a.tensor >= p.tensors || a.offset < 0)
            return make_error(where + ": a pointer into a tensor the call does not pass");
        } else {
          auto bytes = plan_bytes_from_hex(aj.at("bytes").get<std::string>(), where);
          if (!bytes) return bytes.err();
          a.bytes = std::move(*bytes);
          if (a.bytes.empty()) return make_error(where + ": an empty parameter");
        }
        s.params.push_back(std::move(a));
      }
      if (s.params.size() > 512) return make_error(where + ": more than 512 parameters");
      p.steps.push_back(std::move(s));
    }
    return p;
  } catch (const std::exception& e) {
    return make_error(std::string("malformed launch plan: ") + e.what());
  }
}

std::string plan_difference(const launch_plan& a, const launch_plan& b) {
  if (a.tensors != b.tensors) return fmt::format("the calls pass {} and {} tensors", a.tensors, b.tensors);
  if (a.kernels.size() != b.kernels.size())
    return fmt::format("{} kernels in one capture, {} in the other", a.kernels.size(), b.kernels.size());
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    const auto &x = a.kernels[i], &y = b.kernels[i];
    if (x.name != y.name || x.cubin_sha256 != y.cubin_sha256)
      return fmt::format("kernel {} is {} in one capture and {} in the other", i, x.name, y.name);
    if (x.block != y.block || x.shared_bytes != y.shared_bytes || x.cluster != y.cluster || x.cooperative != y.cooperative)
      return fmt::format("kernel {} ({}) is configured differently", i, x.name);
  }
  if (a.steps.size() != b.steps.size())
    return fmt::format("{} steps in one capture, {} in the other", a.steps.size(), b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    const auto &x = a.steps[i], &y = b.steps[i];
    if (x.k != y.k) return fmt::format("step {} is a launch in one capture and a memset in the other", i);
    if (x.k == plan_step::kind::memset) {
      if (x.tensor != y.tensor || x.offset != y.offset || x.value != y.value || x.element_size != y.element_size ||
          x.count != y.count)
        return fmt::format("step {} (a memset) differs", i);
      continue;
    }
    if (x.kernel != y.kernel) return fmt::format("step {} launches kernel {} in one capture and {} in the other", i, x.kernel, y.kernel);
    if (x.grid != y.grid) return fmt::format("step {} ({}) has another grid", i, a.kernels[x.kernel].name);
    if (x.params.size() != y.params.size()) return fmt::format("step {} passes another number of parameters", i);
    for (std::size_t p = 0; p < x.params.size(); ++p) {
      const auto &u = x.params[p], &v = y.params[p];
      if (u.k != v.k || u.tensor != v.tensor || u.offset != v.offset || u.bytes != v.bytes)
        return fmt::format("step {} ({}) parameter {} differs: it depends on the inputs or on the call", i,
                           a.kernels[x.kernel].name, p);
    }
  }
  return "";
}

}  // namespace ptxbench::gpu
