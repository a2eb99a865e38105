#include "build/build_stage.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/json_check.h"
#include "core/process.h"
#include "core/sha256.h"

namespace ptxbench::build {
namespace fs = std::filesystem;
namespace {

constexpr const char* k_cache_version = "ptxbench-build-v1";
constexpr const char* k_object_name = "candidate.so";

std::string outcome_name(build_outcome o) {
  switch (o) {
    case build_outcome::built: return "built";
    case build_outcome::compile_error: return "compile_error";
    case build_outcome::timeout: return "timeout";
  }
  return "compile_error";
}

build_outcome parse_outcome(const std::string& s) {
  if (s == "built") return build_outcome::built;
  if (s == "timeout") return build_outcome::timeout;
  return build_outcome::compile_error;
}

bool is_cuda_source(const std::string& path) {
  auto ext = fs::path(path).extension().string();
  return ext == ".cu";
}

// Header files the candidate may include (the ABI, the knowledge pack) are part of the key, so
// editing a pack header rebuilds every candidate that could include it.
void hash_include_dirs(sha256_builder& h, const std::vector<fs::path>& dirs) {
  for (const auto& dir : dirs) {
    std::vector<fs::path> files;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_regular_file()) files.push_back(it->path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      auto content = read_file(f, 64u << 20);
      h.update(f.lexically_relative(dir).string()).update(content ? *content : std::string("<unreadable>"));
    }
  }
}

std::string random_suffix() {
  std::random_device rd;
  return fmt::format("{:x}-{:x}", static_cast<uint64_t>(rd()) << 32 | rd(), static_cast<unsigned>(::getpid()));
}

ordered_json meta_json(const build_result& r) {
  return {{"format", "ptxbench.build/1"},
          {"outcome", outcome_name(r.outcome)},
          {"key", r.key},
          {"command", r.command},
          {"nvcc_version", r.nvcc_version},
          {"compile_seconds", r.compile_seconds},
          {"log", r.log.text}};
}

result<build_result> load_entry(const fs::path& dir, const std::string& key) {
  auto text = read_text_file(dir / "meta.json", 64u << 20);
  if (!text) return text.err();
  auto j = parse_json(*text, (dir / "meta.json").string());
  if (!j) return j.err();
  build_result r;
  r.key = key;
  r.dir = dir;
  r.outcome = parse_outcome(j->value("outcome", ""));
  r.command = j->value("command", std::vector<std::string>{});
  r.nvcc_version = j->value("nvcc_version", "");
  r.compile_seconds = j->value("compile_seconds", 0.0);
  r.log = parse_compiler_log(j->value("log", ""));
  if (r.outcome == build_outcome::built) {
    r.shared_object = dir / k_object_name;
    if (!fs::exists(r.shared_object)) return make_error(fmt::format("{}: cache entry lacks {}", dir.string(), k_object_name));
    std::error_code ec;
    for (auto& e : fs::directory_iterator(dir / "cubin", ec)) r.cubins.push_back(e.path());
    std::sort(r.cubins.begin(), r.cubins.end());
  }
  return r;
}

}  // namespace

std::vector<std::string> nvcc_flags(const std::string& gencode) {
  return {"-O3", "-std=c++17", "-lineinfo", "-gencode=" + gencode, "-shared", "-Xcompiler", "-fPIC,-fvisibility=hidden",
          "--cudart", "shared", "-Xptxas", "-v"};
}

result<build_result> build_candidate(const build_request& req, const toolchain& tc) {
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

  std::vector<std::string> sources_cu;
  for (const auto& s : req.sources)
    if (is_cuda_source(s.path)) sources_cu.push_back(s.path);
  if (sources_cu.empty()) return make_error("no .cu source to compile");

  // The command, with paths relative to the build folder so it is the same for every build.
  std::vector<std::string> cmd = {"nvcc"};
  for (auto& f : nvcc_flags(req.gencode)) cmd.push_back(f);
  // nvcc runs inside src/ so its diagnostics name files as the candidate wrote them ("kernel.cu(4)").
  cmd.insert(cmd.end(), {"--keep", "--keep-dir", "../keep", "-I", "."});
  for (const auto& inc : req.include_dirs) cmd.insert(cmd.end(), {"-I", inc.string()});
  for (const auto& s : sources_cu) cmd.push_back(s);
  cmd.insert(cmd.end(), {"-o", std::string("../") + k_object_name, "-L", (tc.cuda_root / "lib64" / "stubs").string(),
                         "-lcuda"});

  sha256_builder h;
  h.update(k_cache_version).update(tc.nvcc_version);
  for (const auto& a : cmd) h.update(a);
  for (const auto& s : req.sources) h.update(s.path).update(s.content);
  hash_include_dirs(h, req.include_dirs);
  std::string key = h.hex_digest();

  fs::path entry = req.cache_dir / "builds" / key;
  std::error_code ec;
  if (fs::exists(entry / "meta.json", ec)) {
    auto hit = load_entry(entry, key);
    if (hit) {
      hit->cache_hit = true;
      hit->seconds = elapsed();
      return hit;
    }
    fs::remove_all(entry, ec);  // a damaged entry: rebuild below and replace it
  }

  fs::path work = req.cache_dir / "tmp" / ("build-" + random_suffix());
  fs::create_directories(work / "src", ec);
  fs::create_directories(work / "keep", ec);
  if (ec) return make_error(fmt::format("cannot create build folder {}: {}", work.string(), ec.message()));
  for (const auto& s : req.sources)
    if (auto st = write_file_atomic(work / "src" / s.path, s.content); !st) return st.err();

  std::vector<std::string> argv = cmd;
  argv[0] = tc.nvcc.string();
  auto run = run_process({.argv = argv, .env_overrides = {{"TMPDIR", (work / "keep").string()}}, .cwd = work / "src",
                          .timeout_s = req.timeout_s, .merge_stderr = true});
  if (!run.started) return make_error("could not run nvcc: " + run.start_error);

  build_result r;
  r.key = key;
  r.command = cmd;
  r.nvcc_version = tc.nvcc_version;
  r.compile_seconds = run.wall_s;
  std::string text = run.out;
  if (run.timed_out) {
    text += fmt::format("\nptxbench: compilation timed out after {:g} s and was stopped\n", req.timeout_s);
    r.outcome = build_outcome::timeout;
  } else {
    r.outcome = run.exit_code == 0 && fs::exists(work / k_object_name) ? build_outcome::built
                                                                      : build_outcome::compile_error;
  }
  r.log = parse_compiler_log(text);

  // Keep the device code (for disassembly) and drop the bulky intermediates.
  fs::create_directories(work / "cubin", ec);
  for (auto& e : fs::directory_iterator(work / "keep", ec))
    if (e.path().extension() == ".cubin") fs::rename(e.path(), work / "cubin" / e.path().filename(), ec);
  fs::remove_all(work / "keep", ec);
  if (auto st = write_file_atomic(work / "meta.json", meta_json(r).dump(2)); !st) return st.err();

  if (r.outcome == build_outcome::timeout) {
    // Not cached: a timeout says more about the machine's load than about the source.
    r.dir = work;
    r.seconds = elapsed();
    return r;
  }
  fs::create_directories(entry.parent_path(), ec);
  if (::rename(work.c_str(), entry.c_str()) != 0) {
    // Another process published the same key first; use theirs (same inputs, same output).
    fs::remove_all(work, ec);
    auto theirs = load_entry(entry, key);
    if (!theirs) return theirs.err();
    theirs->seconds = elapsed();
    return theirs;
  }
  auto mine = load_entry(entry, key);
  if (!mine) return mine.err();
  mine->seconds = elapsed();
  return mine;
}

}  // namespace ptxbench::build
