// ptxbench: parses the command line, dispatches to a subcommand and maps its outcome to an exit
// code. Everything else lives in libptxbench.
#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/usage_hints.h"
#include "core/build_info.h"

using namespace ptxbench;

int main(int argc, char** argv) {
  cli::context ctx = cli::make_context();
  CLI::App app{"PTXBench: do LLM-written GPU kernels use this GPU generation's instructions, correctly and fast?",
               "ptxbench"};
  const auto self = this_build();
  app.set_version_flag("--version", fmt::format("ptxbench {} (commit {})", self.version, self.git_commit));
  app.require_subcommand(1);
  // Every option's default appears in --help (subcommands inherit this when they are added below).
  app.option_defaults()->always_capture_default();
  app.add_option("--root", ctx.root, "folder holding suite/, packs/ and include/ (env PTXBENCH_ROOT)");
  app.add_option("--cache-dir", ctx.cache_dir, "build cache folder (env PTXBENCH_CACHE)")
      ->each([&ctx](const std::string&) { ctx.cache_dir_named_by = "--cache-dir"; });
  app.add_flag("-v,--verbose", ctx.verbose, "print progress and diagnostics on stderr");
  for (const auto& c : cli::all_commands()) c.add(app, ctx);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (auto hint = cli::misspelled_command(app, args))
    return to_int(cli::report_error(*hint, exit_status::usage));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return to_int(cli::report_error(cli::parse_error_message(app, args, e), exit_status::usage));
  } catch (const std::exception& e) {
    return to_int(cli::report_error(std::string("internal error: ") + e.what(), exit_status::infra));
  }
  return to_int(ctx.exit);
}
