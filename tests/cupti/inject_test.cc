// libshardscope_inject.so in a process with no CUDA driver (or only the stub) does nothing harmful: the
// process runs on, exits 0, and leaves no trace file behind; one line says why.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <filesystem>

#include "tests/cupti/child_env.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"
#include "tracer/cupti/device_check.h"

namespace shardscope::test {
namespace {

bool empty_or_missing(const std::filesystem::path& dir) {
  return !std::filesystem::exists(dir) || std::filesystem::is_empty(dir);
}

TEST(Inject, ExportsOnlyInitializeInjection) {
  // The tracer inside stays private: a program that links its own shardscope tracer must not bind to it.
  void* lib = dlopen(INJECT_LIB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(lib) << dlerror();
  EXPECT_TRUE(dlsym(lib, "InitializeInjection"));
  EXPECT_FALSE(dlsym(lib, "_ZN10shardscope6tracer4stopEv"));  // shardscope::tracer::stop()
  EXPECT_FALSE(dlsym(lib, "_ZN10shardscope6tracer5cupti6enableERKNS1_10GpuOptionsE"));
}

TEST(Inject, LoadsWithoutADriverAndDoesNothing) {
  if (tracer::cupti::check_device().ok) GTEST_SKIP() << "this machine has a CUDA device";
  TempDir dir;
  ScopedEnv env;
  env.set("SHARDSCOPE_OUT", (dir.path() / "out").string()).set("RANK", "5");
  RunResult r = run({INJECT_HOST, INJECT_LIB});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_EQ(r.err, "shardscope inject: no CUDA driver in this process; nothing traced\n");
  EXPECT_TRUE(empty_or_missing(dir.path() / "out"));
}

TEST(Inject, SaysSoWhenThereIsNoOutputDirectory) {
  ScopedEnv env;
  env.set("SHARDSCOPE_OUT", std::nullopt);
  RunResult r = run({INJECT_HOST, INJECT_LIB});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_NE(r.err.find("SHARDSCOPE_OUT is not set"), std::string::npos) << r.err;
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
}

TEST(Inject, CuptiFailingInsideAStubDriverLeavesTheProcessAlone) {
  if (!std::filesystem::exists(CUDA_STUB_LIBCUDA)) GTEST_SKIP() << "no stub libcuda in the toolkit";
  if (tracer::cupti::check_device().ok) GTEST_SKIP() << "this machine has a CUDA device";
  TempDir dir;
  ScopedEnv env;
  env.set("SHARDSCOPE_OUT", (dir.path() / "out").string()).set("RANK", std::nullopt).set("LOCAL_RANK", "2");
  // With libcuda loaded the library takes itself to be inside cuInit and goes on to CUPTI, which fails here.
  RunResult r = run({INJECT_HOST, INJECT_LIB, CUDA_STUB_LIBCUDA});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("shardscope tracer: CUPTI error: cupti"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPU tracing off"), std::string::npos) << r.err;
  EXPECT_TRUE(empty_or_missing(dir.path() / "out")) << "a host-only injected trace is empty and is removed";
}

}  // namespace
}  // namespace shardscope::test
