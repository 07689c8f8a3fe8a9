// The shardscope command line. Subcommands live in their own files; this one only wires them to CLI11.
#include <CLI/CLI.hpp>

#include <iostream>

#include "analyzer/cli/inspect.h"
#include "analyzer/cli/launch.h"

int main(int argc, char** argv) {
  CLI::App app{"shardscope: profiling and diagnostics for sharded data-parallel training (DDP, ZeRO, FSDP)"};
  app.set_version_flag("--version", "shardscope " SHARDSCOPE_VERSION);
  app.require_subcommand(1);

  std::vector<std::string> files;
  std::string format = "text";
  CLI::App* inspect = app.add_subcommand("inspect", "Show each trace file's metadata, tracks, event counts, span and truncation");
  inspect->add_option("FILE", files, "Trace files (.json or .json.gz)")->required();
  inspect->add_option("--format", format, "Output format")->check(CLI::IsMember({"text", "json"}));

  shardscope::cli::LaunchOptions lo;
  CLI::App* launch = app.add_subcommand("launch", "Start N local ranks with the torchrun variables: shardscope launch -n N -- PROGRAM ARGS...");
  launch->add_option("-n,--nproc", lo.ranks, "Ranks to start")->required()->check(CLI::Range(1, 1024));
  launch->add_option("--master-port", lo.master_port, "MASTER_PORT (default: a free port)")->check(CLI::Range(1, 65535));
  launch->add_option("PROGRAM", lo.command, "The program and its arguments, after --")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and usage
    return 2;
  }

  if (*inspect) return shardscope::cli::inspect(files, format == "json", std::cout, std::cerr);
  if (*launch) return shardscope::cli::launch(lo);
  return 2;
}
