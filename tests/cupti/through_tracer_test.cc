// Processor output through the real host session into a file, read back: flows, named GPU tracks, the rank
// as pid, and the dropped-record count in the header and in `shardscope inspect`.
#include <gtest/gtest.h>

#include <map>

#include "tests/cupti/records.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"
#include "tracer/cupti/record_processor.h"
#include "tracer/format/keys.h"
#include "tracer/format/reader.h"
#include "tracer/tracer.h"

namespace shardscope::tracer::cupti {
namespace {

using trace::Event;

TEST(ThroughTracer, GpuEventsFlowsAndDroppedCountReachTheFile) {
  test::TempDir dir;
  auto path = dir.path() / "gpu.json";
  tracer::start({.path = path, .rank = 3, .world_size = 4});
  { tracer::Range host("host work"); }
  test::Records r;
  r.api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 7, 4242, 1000, 1500);
  r.kernel("_Z9vectorAddPfS_i", 7, 0, 1, 13, 2000, 5000);
  RecordProcessor p({}, [](const std::string& name) { return tracer::track(name); });  // pid 0: emit() sets the rank
  p.set_clock_offset(now_ns());
  p.process(r.batch());
  p.add_dropped(7);
  tracer::emit(p.take());
  tracer::stop();

  trace::TraceFile f = trace::read_trace(path);
  EXPECT_EQ(f.shardscope[keys::kDroppedGpuRecords], 7);
  std::map<int64_t, std::string> names;
  std::map<char, std::vector<const Event*>> by_ph;
  for (const Event& e : f.events) {
    EXPECT_EQ(e.pid, 3) << e.name;
    if (e.ph == 'M' && e.name == keys::kThreadName) names[e.tid] = e.args[keys::kName];
    by_ph[e.ph].push_back(&e);
  }
  ASSERT_EQ(by_ph['s'].size(), 1u);
  ASSERT_EQ(by_ph['f'].size(), 1u);
  const Event& s = *by_ph['s'][0];
  const Event& fl = *by_ph['f'][0];
  EXPECT_EQ(s.id, fl.id);
  EXPECT_FALSE(s.id.empty());
  EXPECT_EQ(names[s.tid], "CUDA API thread 4242");
  EXPECT_EQ(names[fl.tid], "GPU 0 stream 13");
  const Event* kernel = nullptr;
  for (const Event* e : by_ph['X'])
    if (e->name == "vectorAdd(float*, float*, int)") kernel = e;
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->tid, fl.tid);
  EXPECT_EQ(kernel->ts_ns, fl.ts_ns);  // the arrow lands on the kernel's start
  EXPECT_EQ(kernel->dur_ns, 3000);

  test::RunResult inspect = test::run({SHARDSCOPE_BIN, "inspect", path.string()});
  EXPECT_EQ(inspect.rc, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("DROPPED GPU 7 records"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("GPU 0 stream 13"), std::string::npos) << inspect.out;
}

}  // namespace
}  // namespace shardscope::tracer::cupti
