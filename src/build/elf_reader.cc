#include "build/elf_reader.h"

#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "core/file_io.h"

namespace ptxbench::build {
namespace {

constexpr uint32_t k_sht_strtab = 3, k_sht_dynamic = 6, k_sht_nobits = 8, k_sht_dynsym = 11;
constexpr uint8_t k_stt_object = 1;
constexpr int64_t k_dt_null = 0, k_dt_needed = 1, k_dt_rpath = 15, k_dt_runpath = 29;

struct section {
  uint32_t type = 0;
  uint64_t offset = 0, size = 0, entsize = 0;
  uint32_t link = 0;
  uint64_t addr = 0;
};

class reader {
 public:
  explicit reader(const std::string& b) : m_b(b) {}
  bool fits(uint64_t off, uint64_t len) const { return off <= m_b.size() && len <= m_b.size() - off; }
  template <typename T>
  T get(uint64_t off) const {
    T v{};
    std::memcpy(&v, m_b.data() + off, sizeof(T));
    return v;
  }
  // A NUL-terminated string inside [base, base+size).
  std::string str(const section& s, uint64_t index) const {
    if (index >= s.size) return {};
    uint64_t start = s.offset + index;
    uint64_t end = start;
    while (end < s.offset + s.size && end < m_b.size() && m_b[end] != '\0') ++end;
    return m_b.substr(start, end - start);
  }

 private:
  const std::string& m_b;
};

// The section table of a 64-bit little-endian ELF file, every section bounds-checked.
result<std::vector<section>> read_sections(const std::string& bytes) {
  reader r(bytes);
  if (!r.fits(0, 64) || std::memcmp(bytes.data(), "\x7f" "ELF", 4) != 0) return make_error("not an ELF file");
  if (bytes[4] != 2 || bytes[5] != 1) return make_error("not a 64-bit little-endian ELF file");
  uint64_t shoff = r.get<uint64_t>(0x28);
  uint16_t shentsize = r.get<uint16_t>(0x3A), shnum = r.get<uint16_t>(0x3C);
  if (shentsize != 64 || !r.fits(shoff, uint64_t{shnum} * 64)) return make_error("malformed ELF section table");
  std::vector<section> sections(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    uint64_t base = shoff + uint64_t{i} * 64;
    sections[i] = {r.get<uint32_t>(base + 4), r.get<uint64_t>(base + 24), r.get<uint64_t>(base + 32),
                   r.get<uint64_t>(base + 56), r.get<uint32_t>(base + 40), r.get<uint64_t>(base + 16)};
    if (sections[i].type != k_sht_nobits && !r.fits(sections[i].offset, sections[i].size))
      return make_error("malformed ELF: a section lies outside the file");
  }
  return sections;
}

}  // namespace

result<elf_dynamic_info> parse_elf_dynamic(const std::string& bytes) {
  reader r(bytes);
  auto table = read_sections(bytes);
  if (!table) return table.err();
  const std::vector<section>& sections = *table;
  auto strtab_of = [&](const section& s) -> const section* {
    if (s.link >= sections.size() || sections[s.link].type != k_sht_strtab) return nullptr;
    return &sections[s.link];
  };
  elf_dynamic_info info;
  bool have_dynamic = false;
  for (const auto& s : sections) {
    if (s.type == k_sht_dynamic) {
      const section* strs = strtab_of(s);
      if (!strs) return make_error("malformed ELF: .dynamic has no string table");
      have_dynamic = true;
      for (uint64_t off = s.offset; off + 16 <= s.offset + s.size; off += 16) {
        auto tag = r.get<int64_t>(off);
        auto val = r.get<uint64_t>(off + 8);
        if (tag == k_dt_null) break;
        if (tag == k_dt_needed) info.needed.push_back(r.str(*strs, val));
        if (tag == k_dt_rpath || tag == k_dt_runpath) info.runpath.push_back(r.str(*strs, val));
      }
    } else if (s.type == k_sht_dynsym) {
      const section* strs = strtab_of(s);
      if (!strs || s.entsize != 24) return make_error("malformed ELF: bad .dynsym");
      for (uint64_t off = s.offset + 24; off + 24 <= s.offset + s.size; off += 24) {  // entry 0 is null
        std::string name = r.str(*strs, r.get<uint32_t>(off));
        auto st_info = r.get<uint8_t>(off + 4);
        auto shndx = r.get<uint16_t>(off + 6);
        int binding = st_info >> 4;
        if (name.empty()) continue;
        if (shndx == 0) info.undefined.push_back({name, binding == 2});
        else if (binding == 1 || binding == 2) info.defined.push_back(name);
      }
    }
  }
  if (!have_dynamic) return make_error("ELF file has no dynamic section (not a shared object)");
  return info;
}

result<std::optional<std::string>> read_exported_object(const std::string& bytes, const std::string& name,
                                                        std::size_t max_size) {
  reader r(bytes);
  auto table = read_sections(bytes);
  if (!table) return table.err();
  const std::vector<section>& sections = *table;
  for (const auto& s : sections) {
    if (s.type != k_sht_dynsym) continue;
    if (s.link >= sections.size() || sections[s.link].type != k_sht_strtab || s.entsize != 24)
      return make_error("malformed ELF: bad .dynsym");
    for (uint64_t off = s.offset + 24; off + 24 <= s.offset + s.size; off += 24) {
      if (r.str(sections[s.link], r.get<uint32_t>(off)) != name) continue;
      auto st_info = r.get<uint8_t>(off + 4);
      auto shndx = r.get<uint16_t>(off + 6);
      auto value = r.get<uint64_t>(off + 8), size = r.get<uint64_t>(off + 16);
      if ((st_info & 0xF) != k_stt_object || shndx == 0 || shndx >= sections.size()) return std::optional<std::string>{};
      const section& home = sections[shndx];
      if (size > max_size || home.type == k_sht_nobits || value < home.addr || value - home.addr > home.size ||
          size > home.size - (value - home.addr))
        return make_error(fmt::format("malformed ELF: {} lies outside its section", name));
      return std::optional<std::string>(bytes.substr(home.offset + (value - home.addr), size));
    }
  }
  return std::optional<std::string>{};
}

result<elf_dynamic_info> read_elf_dynamic(const std::filesystem::path& path) {
  auto bytes = read_file(path, 1u << 30);
  if (!bytes) return bytes.err();
  auto info = parse_elf_dynamic(*bytes);
  if (!info) return info.err().with_context(path.string());
  return info;
}

}  // namespace ptxbench::build
