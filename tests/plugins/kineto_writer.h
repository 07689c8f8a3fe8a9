// Writes events in the PyTorch profiler's (Kineto's) shape for generated test traces: CPU ranges,
// cudaLaunchKernel calls (on the thread that makes them, as the importer links a kernel to the labels of its
// launching thread), and the kernels they launch, linked by correlation id. Times in µs; the device runs a
// kernel 5 µs after its launch at the earliest, one at a time per stream.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include <fmt/format.h>

namespace shardscope::test {

class KinetoWriter {
 public:
  void cpu(int tid, const std::string& name, int64_t ts, int64_t dur) {
    out_ += fmt::format(
                R"({{"ph": "X", "cat": "user_annotation", "name": "{}", "pid": 100, "tid": {}, "ts": {}, "dur": {}}},)",
                name, tid, ts, dur) +
            "\n";
  }
  // A cudaLaunchKernel call on thread `tid`; returns its correlation id.
  int launch(int64_t ts, int tid = 100) {
    ++corr_;
    out_ +=
        fmt::format(
            R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": {}, "ts": {}, "dur": 1, "args": {{"correlation": {}}}}},)",
            tid, ts, corr_) +
        "\n";
    launched_[corr_] = ts;
    return corr_;
  }
  // Returns when the kernel ends.
  int64_t kernel(const std::string& name, int stream, int corr, int64_t not_before, int64_t dur,
                 const std::string& extra = "") {
    int64_t start = std::max({launched_[corr] + 5, free_[stream], not_before});
    free_[stream] = start + dur;
    out_ +=
        fmt::format(
            R"({{"ph": "X", "cat": "kernel", "name": "{}", "pid": 0, "tid": {}, "ts": {}, "dur": {}, "args": {{"stream": {}, "correlation": {}{}}}}},)",
            name, stream, start, dur, stream, corr, extra) +
        "\n";
    return start + dur;
  }
  int64_t stream_free(int stream) { return free_[stream]; }
  // The whole file; `top` is extra top-level members, each followed by ", " (e.g. "\"schemaVersion\": 1, ").
  std::string file(const std::string& top = "", const std::string& tail = "") const {
    return "{" + top + "\"traceEvents\": [\n" + out_ +
           "{\"ph\": \"i\", \"name\": \"end\", \"pid\": \"\", \"tid\": \"\", \"ts\": 0}]" + tail + "}";
  }

 private:
  std::string out_;
  int corr_ = 0;
  std::map<int, int64_t> launched_, free_;
};

}  // namespace shardscope::test
