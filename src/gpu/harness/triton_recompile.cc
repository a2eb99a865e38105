#include "gpu/harness/triton_recompile.h"

#include <chrono>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/file_lock.h"
#include "core/process.h"
#include "core/sha256.h"

namespace ptxbench::gpu {
namespace fs = std::filesystem;
namespace {

/// Reads DIR/result.json; the sha256 of each cubin is computed here from the file, not taken from it.
result<recompile_result> read_result(const fs::path& dir) {
  auto text = read_text_file(dir / "result.json", 1u << 20);
  if (!text) return text.err();
  auto doc = parse_json(*text, (dir / "result.json").string());
  if (!doc) return doc.err();
  recompile_result r;
  if (doc->contains("error")) {
    r.source_problem = (*doc)["error"].is_string() ? (*doc)["error"].get<std::string>() : "the recompile failed";
    return r;
  }
  r.triton_version = doc->value("triton", "");
  for (const auto& k : doc->value("kernels", ordered_json::array())) {
    recompiled_kernel rk;
    rk.id = k.value("id", "");
    rk.name = k.value("name", "");
    std::string file = k.value("cubin", "");
    if (file.empty() || file.find('/') != std::string::npos) return make_error("the recompile named a cubin outside its folder");
    auto bytes = read_file(dir / file, 64u << 20);
    if (!bytes) return bytes.err();
    rk.sha256 = sha256_hex(*bytes);
    r.kernels.push_back(std::move(rk));
  }
  return r;
}

}  // namespace

result<recompile_result> recompile_triton_kernels(const recompile_request& q) {
  auto source = read_file(q.source, 8u << 20);
  if (!source) return source.err().with_context("the candidate's kernel.py");
  auto script = read_file(q.script, 1u << 20);
  if (!script) return script.err().with_context("the recompile script");
  ordered_json kernels = {{"kernels", q.kernels}};
  const std::string key = sha256_builder()
                              .update(*source)
                              .update("\n--kernels--\n")
                              .update(kernels.dump())
                              .update("\n--script--\n")
                              .update(*script)
                              .update("\n--python--\n")
                              .update(q.python.string())
                              .hex_digest();
  const fs::path dir = q.cache_dir / "triton-recompile" / key;
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  std::error_code ec;
  fs::create_directories(dir, ec);
  // One recompile per key at a time; a finished one is reused.
  auto lock = file_lock::acquire(dir / ".lock", q.timeout_s + 60);
  if (!lock) return make_error("another harness kept the recompile of this candidate busy");
  if (fs::exists(dir / "result.json", ec) && fs::exists(dir / "done", ec)) {
    auto cached = read_result(dir);
    if (cached) {
      cached->cache_hit = true;
      cached->seconds = seconds();
      return cached;
    }
  }
  fs::remove(dir / "result.json", ec);
  auto kernels_file = dir / "kernels.json";
  if (auto st = write_file_atomic(kernels_file, kernels.dump(1)); !st) return st.err();
  auto run = run_process({.argv = {q.python.string(), "-I", "-B", q.script.string(), "--source", q.source.string(),
                                   "--kernels", kernels_file.string(), "--out", dir.string()},
                          .timeout_s = q.timeout_s,
                          .max_output_bytes = 1u << 20,
                          .merge_stderr = true});
  if (run.timed_out) {
    recompile_result r;
    r.source_problem = fmt::format("recompiling its kernels from kernel.py did not finish within {:g} s", q.timeout_s);
    r.seconds = seconds();
    return r;
  }
  if (!run.succeeded() && run.exit_code != 2)
    return make_error(fmt::format("the Triton recompile {}: {}", describe_exit(run, q.timeout_s), run.out.substr(0, 600)));
  auto r = read_result(dir);
  if (!r) return r.err().with_context("the Triton recompile's result");
  if (run.exit_code == 2 && r->source_problem.empty()) r->source_problem = "the recompile refused kernel.py";
  if (run.succeeded() && !r->source_problem.empty())
    return make_error("the Triton recompile reported " + r->source_problem);
  if (run.succeeded()) (void)write_file_atomic(dir / "done", "ok\n");  // a source problem is not cached: it costs little
  r->seconds = seconds();
  return r;
}

}  // namespace ptxbench::gpu
