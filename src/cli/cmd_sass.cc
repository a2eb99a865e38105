// `ptxbench sass FILE [--target h200 | --families GMMA,TMA] [--ncu report.csv] [--json]`: the static
// SASS check of a built artifact (or a saved cuobjdump/nvdisasm listing) and, given an Nsight Compute
// CSV, which families executed with predicate-on threads. Exit 0 when a required family is present
// (and executed, with --ncu), 4 when not, 3 when the disassembler is missing here, 2 on bad input.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "core/file_io.h"
#include "core/input_stream.h"
#include "sass/disassembler.h"
#include "sass/ncu_report.h"
#include "sass/static_check.h"
#include "suite/task.h"
#include "suite/unknown_target.h"

namespace ptxbench::cli {
namespace {

struct sass_options {
  std::string file, target = "h200", ncu;
  double wait_s = 30;
  std::vector<std::string> families;
  bool json = false;
};

std::string family_counts_text(const sass::family_counts& c) {
  std::string out;
  for (const auto& [f, n] : c) out += fmt::format("{}{}={}", out.empty() ? "" : " ", f, n);
  return out.empty() ? "-" : out;
}

bool is_elf(const std::string& bytes) { return bytes.size() >= 4 && bytes.compare(0, 4, "\x7f" "ELF") == 0; }

// The disassembly text: a saved listing is used as it is; an ELF object goes through cuobjdump
// (which needs a file: an object that came through a pipe is written to the cache's tmp/ first).
result<std::string> sass_text(const context& ctx, const sass_options& o, exit_status& code) {
  code = exit_status::usage;
  auto bytes = read_input(o.file, 256u << 20, o.wait_s);
  if (!bytes) return bytes.err();
  if (!is_elf(*bytes)) {
    if (auto st = check_text(*bytes, o.file == "-" ? "standard input" : o.file); !st) return st.err();
    return bytes;
  }
  std::filesystem::path object = o.file;
  std::optional<std::filesystem::path> temporary;
  if (std::error_code ec; o.file == "-" || !std::filesystem::is_regular_file(o.file, ec)) {
    temporary = ctx.cache_dir / "tmp" / fmt::format("sass-input-{}.bin", ::getpid());
    if (auto st = write_file_atomic(*temporary, *bytes); !st) {
      code = exit_status::infra;
      return st.err();
    }
    object = *temporary;
  }
  sass::disassembler_options d_opts;
  d_opts.cuda_root = ctx.cuda_root;
  auto d = sass::disassemble(object, d_opts);
  if (temporary) std::filesystem::remove(*temporary);
  if (d.state == sass::disassembly_state::tool_missing) code = exit_status::infra;
  if (d.state == sass::disassembly_state::tool_failed) code = exit_status::infra;
  if (!d.ok())
    return make_error(d.state == sass::disassembly_state::tool_missing ? d.message + "; deferred to the GPU host"
                                                                       : d.message);
  return std::move(d.text);
}

ordered_json static_json(const sass::static_check_result& r) {
  ordered_json kernels = ordered_json::array();
  for (const auto& k : r.kernels)
    kernels.push_back({{"name", k.name}, {"demangled", k.demangled}, {"arch", k.arch},
                       {"format", sass::format_name(k.format)}, {"instructions", k.instructions},
                       {"families", k.families}});
  return {{"required_families", r.required_families}, {"required_present", r.required_present},
          {"total", r.total}, {"kernels", kernels}, {"reason", r.reason}};
}

ordered_json dynamic_json(const sass::ncu_profile& p) {
  ordered_json kernels = ordered_json::array();
  for (const auto& k : p.kernels)
    kernels.push_back({{"id", k.id}, {"name", k.name}, {"family_pred_on", k.family_pred_on},
                       {"family_inst_executed", k.family_inst_executed}});
  return {{"format", sass::ncu_format_name(p.format)}, {"kernels", kernels}};
}

exit_status run_sass(const context& ctx, sass_options o) {
  std::string arch;
  if (o.families.empty()) {
    auto s = load_suite(ctx.suite_dir());
    if (!s) return report_error(s.err().message, exit_status::usage);
    const target_info* t = s->find_target(o.target);
    if (!t) {
      return report_error(unknown_target_message(*s, o.target),
                          exit_status::usage);
    }
    o.families = t->required_families;
    arch = t->arch;
  }
  exit_status code = exit_status::usage;
  auto text = sass_text(ctx, o, code);
  if (!text) return report_error(text.err().message, code);
  auto fns = sass::parse_sass(*text);
  if (!fns) return report_error(fns.err().with_context(o.file).message, exit_status::usage);
  auto st = sass::static_check(*fns, {o.families, arch});
  if (!st) return report_error(st.err().message, exit_status::usage);
  bool ok = st->required_present;
  std::optional<sass::ncu_profile> profile;
  std::vector<std::string> ran;
  if (!o.ncu.empty()) {
    auto csv = read_input(o.ncu, 256u << 20, o.wait_s);
    if (!csv) return report_error(csv.err().message, exit_status::usage);
    if (auto st = check_text(*csv, o.ncu); !st) return report_error(st.err().message, exit_status::usage);
    auto p = sass::parse_ncu_csv(*csv);
    if (!p) return report_error(p.err().with_context(o.ncu).message, exit_status::usage);
    profile = std::move(*p);
    for (const auto& k : profile->kernels)
      for (const auto& f : o.families)
        if (k.executed(f)) ran.push_back(fmt::format("{} in {}", f, k.name));
    ok = ok && !ran.empty();
  }
  if (o.json) {
    ordered_json out = {{"file", o.file}, {"static", static_json(*st)}};
    if (profile) out["dynamic"] = dynamic_json(*profile);
    out["target_instructions_ok"] = ok;
    std::puts(out.dump(2).c_str());
    return ok ? exit_status::ok : exit_status::not_target_correct;
  }
  fmt::print("{:<48} {:<9} {:>6}  {}\n", "KERNEL (static SASS)", "FORMAT", "INSTR", "FAMILIES");
  for (const auto& k : st->kernels)
    fmt::print("{:<48} {:<9} {:>6}  {}\n", k.demangled, sass::format_name(k.format), k.instructions,
               family_counts_text(k.families));
  fmt::print("static: {}\n", st->reason);
  if (profile) {
    fmt::print("\n{:<48} {}\n", "KERNEL (ncu, predicate-on thread instructions)", "FAMILIES");
    for (const auto& k : profile->kernels) fmt::print("{:<48} {}\n", k.name, family_counts_text(k.family_pred_on));
    std::string wanted;
    for (const auto& f : o.families) wanted += (wanted.empty() ? "" : " or ") + f;
    std::string list;
    for (const auto& r : ran) list += (list.empty() ? "" : "; ") + r;
    fmt::print("dynamic: {}\n", ran.empty() ? "no " + wanted + " instruction executed with an active predicate"
                                            : "executed " + list);
  }
  return ok ? exit_status::ok : exit_status::not_target_correct;
}

}  // namespace

void add_sass_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("sass", "static SASS check of a built kernel; with --ncu, which families executed");
  auto o = std::make_shared<sass_options>();
  cmd->add_option("file", o->file, "a .so, .cubin or executable (run through cuobjdump -sass), or a saved "
                                   "cuobjdump/nvdisasm listing; '-' (or /dev/stdin, a pipe, a FIFO) reads a stream")
      ->required();
  cmd->add_option("--target", o->target, "target whose required families and arch apply");
  cmd->add_option("--families", o->families, "required families instead of the target's, e.g. GMMA,TMA")
      ->delimiter(',')
      ->default_str("");
  cmd->add_option("--ncu", o->ncu, "Nsight Compute CSV (per-opcode details or source page) of a run");
  cmd->add_flag("--json", o->json, "machine-readable output");
  cmd->add_option("--wait", o->wait_s, "seconds to wait for data from a stream before giving up")
      ->check(positive_number(3600, "seconds"));
  cmd->callback([&ctx, o]() { ctx.exit = run_sass(ctx, *o); });
}

}  // namespace ptxbench::cli
