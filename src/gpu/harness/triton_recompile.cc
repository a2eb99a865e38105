#include "gpu/harness/triton_recompile.h"

#include <signal.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/file_lock.h"
#include "core/process.h"
#include "core/sha256.h"
#include "sandbox/runner_integration.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/violation_reporter.h"

namespace ptxbench::gpu {
namespace fs = std::filesystem;
namespace {

/// Reads OUT/result.json; the sha256 of each cubin is computed here from the file, not taken from it.
result<recompile_result> read_result(const fs::path& dir) {
  auto text = read_text_file(dir / "result.json", 1u << 20);
  if (!text) return text.err();
  auto doc = parse_json(*text, (dir / "result.json").string());
  if (!doc) return doc.err();
  recompile_result r;
  r.sandbox = doc->value("sandbox", ordered_json{{"applied", nullptr}, {"reason", "the recompile sent no report"}});
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

/// The result's error line, for an infrastructure message ("" when there is none).
std::string reported_error(const fs::path& out) {
  auto r = read_result(out);
  return r ? r->source_problem : "";
}

}  // namespace

ordered_json recompile_sandbox_policy(const recompile_request& q, const fs::path& out_dir) {
  auto policy = sandbox::policy_for_runner(out_dir, q.source, {});
  policy.limits.cpu_seconds = q.cpu_limit_s;
  policy.limits.data_bytes = q.memory_limit_bytes;
  return {{"sandbox", sandbox::to_json(policy)}};
}

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
                              .update(q.sandbox ? "\n--sandboxed--\n" : "\n--unconfined--\n")
                              .hex_digest();
  const fs::path dir = q.cache_dir / "triton-recompile" / key;
  // The recompile's only writable folder: the lock, the inputs and the "done" mark stay outside it.
  const fs::path out = dir / "out";
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  std::error_code ec;
  fs::create_directories(dir, ec);
  // One recompile per key at a time; a finished one is reused.
  auto lock = file_lock::acquire(dir / ".lock", q.timeout_s + 60);
  if (!lock) return make_error("the recompile of this candidate: " + lock.err().message);
  if (fs::exists(out / "result.json", ec) && fs::exists(dir / "done", ec)) {
    auto cached = read_result(out);
    if (cached) {
      cached->cache_hit = true;
      cached->seconds = seconds();
      return cached;
    }
  }
  fs::remove(dir / "done", ec);
  fs::remove_all(out, ec);
  fs::create_directories(out, ec);
  if (ec) return make_error(fmt::format("creating {}: {}", out.string(), ec.message()));
  auto kernels_file = dir / "kernels.json";
  if (auto st = write_file_atomic(kernels_file, kernels.dump(1)); !st) return st.err();
  std::vector<std::string> argv = {q.python.string(), "-I", "-B", q.script.string(), "--source", q.source.string(),
                                   "--kernels", kernels_file.string(), "--out", fs::weakly_canonical(out).string()};
  if (q.sandbox) {
    auto policy_file = dir / "sandbox.json";
    if (auto st = write_file_atomic(policy_file, recompile_sandbox_policy(q, fs::weakly_canonical(out)).dump(1)); !st)
      return st.err();
    argv.insert(argv.end(), {"--helper", q.helper.string(), "--sandbox", policy_file.string()});
  } else {
    argv.push_back("--no-sandbox");
  }
  // TMPDIR: Triton's temporary .ptx and .cubin files, inside the folder the recompile may write.
  auto run = run_process({.argv = argv,
                          .env_overrides = {{"TMPDIR", fs::weakly_canonical(out).string()}},
                          .timeout_s = q.timeout_s,
                          .max_output_bytes = 1u << 20,
                          .merge_stderr = true});
  recompile_result limited;
  limited.seconds = seconds();
  if (run.timed_out) {
    limited.source_problem = fmt::format("recompiling its kernels from kernel.py did not finish within {:g} s", q.timeout_s);
    return limited;
  }
  if (run.signal == SIGXCPU) {
    limited.source_problem = fmt::format("recompiling its kernels from kernel.py used more than {} s of CPU time",
                                         q.cpu_limit_s);
    return limited;
  }
  // The sandbox stopping the recompile is never the candidate's verdict: the process runs Triton on
  // source reduced to what runs no Python, so a violation is a bootstrap the GPU host's Triton
  // outgrew — or an attack on Triton's compiler, which someone must look at either way.
  auto violation = sandbox::find_violation(run.out);
  if (violation || run.signal == SIGSYS || (run.signal == 0 && run.exit_code == sandbox::violation_exit_code))
    return make_error(fmt::format("the Triton recompile was stopped by its sandbox ({}): {}",
                                  violation.value_or(describe_exit(run, q.timeout_s)), run.out.substr(0, 600)));
  if (!run.succeeded() && run.exit_code != 2) {
    std::string why = reported_error(out);
    return make_error(fmt::format("the Triton recompile {}: {}", describe_exit(run, q.timeout_s),
                                  why.empty() ? run.out.substr(0, 600) : why));
  }
  auto r = read_result(out);
  if (!r) return r.err().with_context("the Triton recompile's result");
  if (run.exit_code == 2 && r->source_problem.empty()) r->source_problem = "the recompile refused kernel.py";
  if (run.succeeded() && !r->source_problem.empty())
    return make_error("the Triton recompile reported " + r->source_problem);
  if (q.sandbox && r->sandbox.value("applied", ordered_json(nullptr)) != true)
    return make_error("the Triton recompile ran without its sandbox (it reported " + r->sandbox.dump() + ")");
  if (run.succeeded()) (void)write_file_atomic(dir / "done", "ok\n");  // a source problem is not cached: it costs little
  r->seconds = seconds();
  return r;
}

result<ordered_json> check_provenance(const launch_plan& plan, const std::vector<recompiled_kernel>& recompiled,
                                      const std::map<std::string, std::string>& jit_of) {
  ordered_json records = ordered_json::array();
  for (const auto& pk : plan.kernels) {
    auto jit = jit_of.find(pk.cubin_sha256);
    const std::string fn = jit == jit_of.end() ? std::string("?") : jit->second;
    auto same = std::find_if(recompiled.begin(), recompiled.end(),
                             [&](const recompiled_kernel& rk) { return rk.id == pk.cubin_sha256; });
    if (same == recompiled.end() || same->sha256 != pk.cubin_sha256)
      return make_error(fmt::format(
          "kernel provenance: kernel {} ({}) that ran is not what kernel.py compiles to (captured cubin {}, recompiled {})",
          pk.name, fn, pk.cubin_sha256.substr(0, 12),
          same == recompiled.end() ? std::string("none") : same->sha256.substr(0, 12)));
    if (same->name != pk.name)
      return make_error(fmt::format(
          "kernel provenance: the plan launches {}, but the cubin kernel.py compiles to for it ({}, {}) defines {} "
          "(a capture that names one kernel's cubin for another)",
          pk.name, fn, pk.cubin_sha256.substr(0, 12), same->name.empty() ? std::string("no entry") : same->name));
    records.push_back({{"kernel", pk.name}, {"jit", fn}, {"cubin_sha256", pk.cubin_sha256}});
  }
  return records;
}

}  // namespace ptxbench::gpu
