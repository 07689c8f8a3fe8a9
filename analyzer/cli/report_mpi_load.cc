// `report --mpi` in the shardscope program: the MPI code lives in its own module (report_mpi.cc, built as
// lib/shardscope/libshardscope_mpi.so beside bin/), loaded only when --mpi is given. The program itself
// needs no libmpi to start, so the relocatable package runs on a machine without MPI for everything else,
// and --mpi uses the cluster's MPI (the one the module was built against: docs/install.md).
#include <dlfcn.h>

#include <filesystem>
#include <ostream>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "analyzer/cli/report.h"

namespace shardscope::cli {
#ifdef SHARDSCOPE_MPI_BUILT_AGAINST
namespace {

namespace fs = std::filesystem;

// The module's entry (report_mpi.cc), with report_mpi's signature.
using Entry = int(const std::vector<std::string>&, const std::string&, const std::string&, std::ostream&, std::ostream&,
                  const plugins::ReadRules&, const report::Selection&, const std::string&, const metrics::MemoryGiven&);

// <the program's folder>/../lib/shardscope/: the installed layout, and the build tree's (analyzer/ and lib/).
fs::path module_path() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path bin = ec ? fs::path(".") : exe.parent_path();
  return bin / ".." / "lib" / "shardscope" / "libshardscope_mpi.so";
}

}  // namespace
#endif

int report_mpi(const std::vector<std::string>& paths, const std::string& format, const std::string& output,
               std::ostream& out, std::ostream& err, const plugins::ReadRules& rules, const report::Selection& sel,
               const std::string& files_per_process, const metrics::MemoryGiven& given) {
#ifndef SHARDSCOPE_MPI_BUILT_AGAINST
  (void)paths, (void)format, (void)output, (void)out, (void)rules, (void)sel, (void)files_per_process, (void)given;
  err << "shardscope: error: --mpi: this shardscope was built without MPI (install OpenMPI, libopenmpi-dev on Debian, "
         "and build again)\n";
  return 2;
#else
  const fs::path module = module_path().lexically_normal();
  // RTLD_GLOBAL: Open MPI's own components, which it dlopens in MPI_Init, look for libmpi's symbols globally.
  void* handle = dlopen(module.c_str(), RTLD_NOW | RTLD_GLOBAL);
  void* entry = handle ? dlsym(handle, "shardscope_report_mpi") : nullptr;
  if (!entry) {
    const char* error = handle ? nullptr : dlerror();
    std::string why = error ? error : "it has no entry point shardscope_report_mpi";
    if (why.starts_with(module.string() + ": ")) why.erase(0, module.string().size() + 2);  // named once
    err << fmt::format(
        "shardscope: error: --mpi: cannot load {} (built against {}): {}; install that MPI, or rebuild the module "
        "against this machine's (docs/install.md)\n",
        module.string(), SHARDSCOPE_MPI_BUILT_AGAINST, why);
    return 2;
  }
  // The handle stays open: MPI_Finalize has run, but Open MPI's atexit handlers may still call into it.
  return reinterpret_cast<Entry*>(entry)(paths, format, output, out, err, rules, sel, files_per_process, given);
#endif
}

}  // namespace shardscope::cli
