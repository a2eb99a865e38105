// ptxbench: parses the command line, dispatches to a subcommand and maps its outcome to an exit
// code. Everything else lives in libptxbench.
#include <cstdio>
#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "core/build_info.h"
#include "suite/task.h"

using namespace ptxbench;

int main(int argc, char** argv) {
  cli::context ctx = cli::make_context();
  CLI::App app{"PTXBench: do LLM-written GPU kernels use this GPU generation's instructions, correctly and fast?",
               "ptxbench"};
  const auto self = this_build();
  app.set_version_flag("--version", fmt::format("ptxbench {} (commit {})", self.version, self.git_commit));
  app.require_subcommand(1);
  app.add_option("--root", ctx.root, "folder holding suite/, packs/ and include/ (env PTXBENCH_ROOT)");
  app.add_option("--cache-dir", ctx.cache_dir, "build cache folder (env PTXBENCH_CACHE)");
  app.add_flag("-v,--verbose", ctx.verbose, "print progress and diagnostics on stderr");
  for (const auto& c : cli::all_commands()) c.add(app, ctx);
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto& c : cli::all_commands()) names.push_back(c.name);
    std::string first = argv[1];
    if (std::find(names.begin(), names.end(), first) == names.end())
      return to_int(cli::report_error(
          unknown_name_message("command", first, names, "`ptxbench --help` lists them"), exit_status::usage));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return to_int(cli::report_error(e.what(), exit_status::usage));
  } catch (const std::exception& e) {
    return to_int(cli::report_error(std::string("internal error: ") + e.what(), exit_status::infra));
  }
  return to_int(ctx.exit);
}
