#include "sass/tensor_instruction_work.h"

#include <charconv>

#include "sass/opcode_family.h"

namespace ptxbench::sass {
namespace {

std::optional<int> read_dim(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v <= 0 || v > 4096) return std::nullopt;
  return v;
}

}  // namespace

std::optional<mma_shape> gmma_shape(std::string_view mnemonic) {
  auto dot = mnemonic.find('.');
  std::string_view base = mnemonic.substr(0, dot);
  bool is_gmma = false;
  for (const auto& fam : classify(base)) is_gmma = is_gmma || fam == "GMMA";
  if (!is_gmma || dot == std::string_view::npos) return std::nullopt;
  std::string_view rest = mnemonic.substr(dot + 1);
  while (!rest.empty()) {
    auto next = rest.find('.');
    std::string_view part = rest.substr(0, next);
    rest = next == std::string_view::npos ? std::string_view() : rest.substr(next + 1);
    auto x1 = part.find('x');
    auto x2 = x1 == std::string_view::npos ? x1 : part.find('x', x1 + 1);
    if (x2 == std::string_view::npos) continue;
    auto m = read_dim(part.substr(0, x1));
    auto n = read_dim(part.substr(x1 + 1, x2 - x1 - 1));
    auto k = read_dim(part.substr(x2 + 1));
    if (m && n && k) return mma_shape{*m, *n, *k};
  }
  return std::nullopt;
}

}  // namespace ptxbench::sass
