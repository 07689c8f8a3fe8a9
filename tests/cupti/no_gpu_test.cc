// No GPU, no harm: with no driver, with the toolkit's stub driver, and with CUPTI failing, a program that asks
// for GPU tracing gets host tracing, one line on stderr saying why, and exit code 0.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/cupti/child_env.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"
#include "tracer/cupti/device_check.h"
#include "tracer/format/keys.h"
#include "tracer/format/reader.h"

namespace shardscope::test {
namespace {

// Runs the child into a fresh file; checks what every fallback shares; returns its stderr.
std::string run_host_only(const std::filesystem::path& file) {
  RunResult r = run({GPU_TRACE_CHILD, file.string()});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "gpu=0\n");
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("GPU tracing off, host tracing only"), std::string::npos) << r.err;
  trace::TraceFile f = trace::read_trace(file);
  EXPECT_FALSE(f.truncated);
  int steps = 0;
  for (const auto& e : f.events) steps += e.ph == 'X' && e.name == "host step";
  EXPECT_EQ(steps, 10);
  EXPECT_EQ(f.shardscope[keys::kGpuTracing][keys::kGpuBackend], keys::kGpuBackendNone);
  EXPECT_EQ(
      f.shardscope[keys::kGpuTracing][keys::kGpuReason].get<std::string>() + "; GPU tracing off, host tracing only\n",
      r.err.substr(r.err.find(": ") + 2));
  return r.err;
}

TEST(NoGpu, NoDriverMeansHostTracingAndOneLine) {
  if (tracer::cupti::check_device().ok) GTEST_SKIP() << "this machine has a CUDA device";
  TempDir dir;
  std::string err = run_host_only(dir.path() / "t.json");
  EXPECT_NE(err.find("no CUDA driver"), std::string::npos) << err;
}

TEST(NoGpu, StubDriverMeansHostTracingAndOneLine) {
  if (!std::filesystem::exists(CUDA_STUB_LIBCUDA)) GTEST_SKIP() << "no stub libcuda in the toolkit";
  if (tracer::cupti::check_device().ok) GTEST_SKIP() << "this machine has a CUDA device";
  TempDir dir;
  // The toolkit's stub, found as libcuda.so.1 as a real driver would be: its cuInit answers 34.
  std::filesystem::create_symlink(CUDA_STUB_LIBCUDA, dir.path() / "libcuda.so.1");
  const char* old = getenv("LD_LIBRARY_PATH");
  ScopedEnv env;
  env.set("LD_LIBRARY_PATH", dir.path().string() + (old ? ":" + std::string(old) : ""));
  std::string err = run_host_only(dir.path() / "t.json.gz");
  EXPECT_NE(err.find("cuInit returned 34"), std::string::npos) << err;
}

TEST(NoGpu, CuptiErrorNamesTheCallAndCodeAndFallsBack) {
  // Past the device check, CUPTI itself answers: without a GPU, error 999 at its first call that needs one.
  if (tracer::cupti::check_device().ok) GTEST_SKIP() << "this machine has a CUDA device";
  TempDir dir;
  ScopedEnv env;
  env.set("SHARDSCOPE_CUPTI_SKIP_DEVICE_CHECK", "1");
  std::string err = run_host_only(dir.path() / "t.json");
  EXPECT_NE(err.find("CUPTI error: cupti"), std::string::npos) << err;
  EXPECT_NE(err.find(" returned 999 (CUPTI_ERROR_UNKNOWN)"), std::string::npos) << err;
}

}  // namespace
}  // namespace shardscope::test
