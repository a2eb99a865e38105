#include "build/build_stage.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/file_lock.h"
#include "core/json_check.h"
#include "core/process.h"
#include "core/sha256.h"

namespace ptxbench::build {
namespace fs = std::filesystem;
namespace {

// v2: entries record the sha256 of every file they hold (meta.json "files"), checked on every hit.
constexpr const char* k_cache_version = "ptxbench-build-v2";
constexpr const char* k_object_name = "candidate.so";
constexpr const char* k_work_lock = ".lock";
// A build folder older than this that no live process holds is a killed build's leftover.
constexpr std::chrono::seconds k_stale_build_age{10 * 60};

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

// The files of an entry whose content the meta.json vouches for: the artifact and the cubins.
std::vector<fs::path> entry_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::exists(dir / k_object_name, ec)) files.push_back(k_object_name);
  for (auto& e : fs::directory_iterator(dir / "cubin", ec)) files.push_back(fs::path("cubin") / e.path().filename());
  std::sort(files.begin(), files.end());
  return files;
}

std::string file_sha256(const fs::path& path) {
  auto bytes = read_file(path, 1u << 30);
  return bytes ? sha256_hex(*bytes) : std::string("<unreadable>");
}

ordered_json meta_json(const build_result& r, const fs::path& dir) {
  ordered_json files = ordered_json::object();
  for (const auto& f : entry_files(dir)) files[f.string()] = file_sha256(dir / f);
  return {{"format", "ptxbench.build/2"},
          {"outcome", outcome_name(r.outcome)},
          {"key", r.key},
          {"command", r.command},
          {"nvcc_version", r.nvcc_version},
          {"compile_seconds", r.compile_seconds},
          {"files", files},
          {"log", r.log.text}};
}

// Reads a cache entry and checks that every file is the one the build wrote: a truncated or
// altered artifact (a full disk, a stray edit) is an error here, so the caller rebuilds it instead
// of failing every later check on a broken ELF file.
result<build_result> load_entry(const fs::path& dir, const std::string& key) {
  auto text = read_text_file(dir / "meta.json", 64u << 20);
  if (!text) return text.err();
  auto j = parse_json(*text, (dir / "meta.json").string());
  if (!j) return j.err();
  if (j->value("key", "") != key) return make_error(fmt::format("{}: meta.json is for another key", dir.string()));
  if (!j->contains("files") || !(*j)["files"].is_object())
    return make_error(fmt::format("{}: meta.json lists no file hashes", dir.string()));
  const auto& recorded = (*j)["files"];
  const auto present = entry_files(dir);
  if (present.size() != recorded.size())
    return make_error(fmt::format("{}: holds {} files, meta.json lists {}", dir.string(), present.size(), recorded.size()));
  for (const auto& f : present) {
    const std::string name = f.string();
    if (!recorded.contains(name) || !recorded[name].is_string() || recorded[name].get<std::string>() != file_sha256(dir / f))
      return make_error(fmt::format("{}: {} does not match its recorded sha256", dir.string(), name));
  }
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
    for (const auto& f : present)
      if (f.parent_path() == "cubin") r.cubins.push_back(dir / f);
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
  auto hit = [&]() -> std::optional<build_result> {
    if (!fs::exists(entry / "meta.json", ec)) return std::nullopt;
    auto loaded = load_entry(entry, key);
    if (!loaded) return std::nullopt;
    loaded->cache_hit = true;
    loaded->seconds = elapsed();
    return std::move(*loaded);
  };
  if (auto h = hit()) return *h;

  // One build per key at a time: a second identical build waits for the first and takes its entry
  // instead of running nvcc again. The wait is bounded (the first build's own timeout and a
  // margin); past it this build goes ahead on its own, which is still safe (the first rename wins).
  fs::create_directories(req.cache_dir / "locks", ec);
  auto key_lock = file_lock::acquire(req.cache_dir / "locks" / (key + ".lock"), req.timeout_s + 60);
  if (auto h = hit()) return *h;
  if (fs::exists(entry, ec)) fs::remove_all(entry, ec);  // damaged (bad hash, torn meta.json): rebuild it

  clean_stale_build_folders(req.cache_dir, k_stale_build_age);
  fs::path work = req.cache_dir / "tmp" / ("build-" + random_suffix());
  fs::create_directories(work / "src", ec);
  fs::create_directories(work / "keep", ec);
  if (ec) return make_error(fmt::format("cannot create build folder {}: {}", work.string(), ec.message()));
  // Held while this process builds here: a folder nobody holds is a killed build's leftover.
  auto work_lock = file_lock::acquire(work / k_work_lock, 0);
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
  if (auto st = write_file_atomic(work / "meta.json", meta_json(r, work).dump(2)); !st) return st.err();

  if (r.outcome == build_outcome::timeout) {
    // Not cached: a timeout says more about the machine's load than about the source. The folder
    // stays for its log and is cleaned as stale once this process is gone.
    r.dir = work;
    r.seconds = elapsed();
    return r;
  }
  fs::create_directories(entry.parent_path(), ec);
  fs::remove(work / k_work_lock, ec);  // the entry needs no lock; ours stays held until we return
  if (::rename(work.c_str(), entry.c_str()) != 0) {
    // Another process published the same key first (it gave up waiting for the key lock); use theirs.
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

std::vector<fs::path> clean_stale_build_folders(const fs::path& cache_dir, std::chrono::seconds older_than) {
  std::vector<fs::path> removed;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (auto it = fs::directory_iterator(cache_dir / "tmp", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const auto& path = it->path();
    if (path.filename().string().rfind("build-", 0) != 0 || !it->is_directory(ec)) continue;
    auto modified = fs::last_write_time(path, ec);
    if (ec || now - modified < older_than) continue;  // young: perhaps not locked yet
    if (file_lock::held(path / k_work_lock)) continue;  // a live build
    std::error_code rm;
    fs::remove_all(path, rm);
    if (!rm) removed.push_back(path);
  }
  return removed;
}

}  // namespace ptxbench::build
