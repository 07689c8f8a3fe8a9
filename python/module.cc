// `shardscope._shardscope`: the CLI's commands (analyzer/cli/) called as the CLI calls them, their output and
// their stderr captured. python/shardscope/__init__.py turns the JSON into dicts, the summaries into
// DataFrames and the error line into an exception: no analysis of its own here.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/cli/check_prefetch.h"
#include "analyzer/cli/progress_line.h"
#include "analyzer/cli/report.h"
#include "analyzer/cli/summarize.h"
#include "analyzer/metrics/memory_inference.h"
#include "tracer/format/limits.h"

namespace py = pybind11;
namespace ss = shardscope;

namespace {

// A command's exit code, what it wrote to stdout and what it wrote to stderr.
using Outcome = std::tuple<int, std::string, std::string>;

// The reading flags every command shares (--step-pattern, --step-marker, --allow-mixed, --max-trace-bytes).
struct Reading {
  ss::plugins::ReadRules rules;
  uint64_t max_trace_bytes = 0;
};

Reading reading(const std::string& step_pattern, const std::string& step_marker, bool allow_mixed,
                uint64_t max_trace_bytes) {
  if (!step_pattern.empty() && !step_marker.empty())
    throw py::value_error("step_pattern and step_marker exclude each other (--step-pattern, --step-marker)");
  return {.rules = {.step_pattern = step_pattern, .step_marker = step_marker, .allow_mixed = allow_mixed},
          .max_trace_bytes = max_trace_bytes};
}

// Runs `command` without the GIL, with --max-trace-bytes in force and no progress line (a notebook is not a
// terminal, but a script's stderr may be), capturing its output.
template <class F>
Outcome captured(const Reading& r, F command) {
  std::ostringstream out, err;
  int rc = 2;
  {
    py::gil_scoped_release release;
    ss::trace::Limits& limits = ss::trace::limits();
    const uint64_t before = limits.max_text_bytes;
    if (r.max_trace_bytes) limits.max_text_bytes = r.max_trace_bytes;
    ss::cli::set_progress_quiet(true);
    rc = command(out, err);
    limits.max_text_bytes = before;
  }
  return {rc, out.str(), err.str()};
}

// The memory model's inputs (report's --params, --world-size, --sharding, --dtype, --optimizer), checked as
// the CLI checks them.
ss::metrics::MemoryGiven memory_given(std::optional<double> params, std::optional<int> world_size,
                                      std::optional<std::string> sharding, std::optional<std::string> dtype,
                                      std::optional<std::string> optimizer) {
  if (params && !(*params >= 1 && *params <= 1e15 && *params == static_cast<double>(static_cast<int64_t>(*params))))
    throw py::value_error("params: must be a whole parameter count from 1 to 1e+15");
  if (world_size && (*world_size < 1 || *world_size > (1 << 30)))
    throw py::value_error("world_size: must be a whole number from 1 to 1073741824");
  if (sharding && !ss::metrics::stage_of_sharding(*sharding))
    throw py::value_error(
        "sharding: must be FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD, zero1, zero2, zero3 or ddp, not '" +
        sharding->substr(0, 40) + "'");
  if (dtype && *dtype != "fp32" && *dtype != "bf16" && *dtype != "fp16")
    throw py::value_error("dtype: must be fp32, bf16 or fp16, not '" + dtype->substr(0, 40) + "'");
  return {.params = params, .sharding = sharding, .dtype = dtype, .optimizer = optimizer, .world_size = world_size};
}

ss::report::Selection selection(const std::string& ranks, const std::string& steps) {
  try {
    return ss::report::parse_selection(ranks, steps);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

}  // namespace

PYBIND11_MODULE(_shardscope, m) {
  m.doc() = "The shardscope CLI's commands, called in process (see the shardscope package)";
  m.def(
      "report",
      [](const std::vector<std::string>& paths, const std::string& format, const std::string& ranks,
         const std::string& steps, const std::string& step_pattern, const std::string& step_marker, bool allow_mixed,
         uint64_t max_trace_bytes, std::optional<double> params, std::optional<int> world_size,
         std::optional<std::string> sharding, std::optional<std::string> dtype, std::optional<std::string> optimizer) {
        const Reading r = reading(step_pattern, step_marker, allow_mixed, max_trace_bytes);
        const ss::report::Selection sel = selection(ranks, steps);
        const ss::metrics::MemoryGiven given = memory_given(params, world_size, sharding, dtype, optimizer);
        return captured(r, [&](std::ostream& out, std::ostream& err) {
          return ss::cli::report(paths, format, "-", out, err, r.rules, sel, given);
        });
      },
      py::arg("paths"), py::arg("format"), py::arg("ranks"), py::arg("steps"), py::arg("step_pattern"),
      py::arg("step_marker"), py::arg("allow_mixed"), py::arg("max_trace_bytes"), py::arg("params"),
      py::arg("world_size"), py::arg("sharding"), py::arg("dtype"), py::arg("optimizer"));
  m.def(
      "check_prefetch",
      [](const std::vector<std::string>& paths, const std::string& format, const std::string& ranks,
         const std::string& steps, bool units, const std::string& step_pattern, const std::string& step_marker,
         bool allow_mixed, uint64_t max_trace_bytes) {
        const Reading r = reading(step_pattern, step_marker, allow_mixed, max_trace_bytes);
        const ss::report::Selection sel = selection(ranks, steps);
        return captured(r, [&](std::ostream& out, std::ostream& err) {
          return ss::cli::check_prefetch(paths, format, out, err, r.rules, sel, units);
        });
      },
      py::arg("paths"), py::arg("format"), py::arg("ranks"), py::arg("steps"), py::arg("units"),
      py::arg("step_pattern"), py::arg("step_marker"), py::arg("allow_mixed"), py::arg("max_trace_bytes"));
  m.def(
      "summarize",
      [](const std::vector<std::string>& paths, const std::string& out_dir, const std::string& step_pattern,
         const std::string& step_marker, bool allow_mixed, uint64_t max_trace_bytes) {
        const Reading r = reading(step_pattern, step_marker, allow_mixed, max_trace_bytes);
        return captured(r, [&](std::ostream& out, std::ostream& err) {
          return ss::cli::summarize(paths, out_dir, out, err, r.rules);
        });
      },
      py::arg("paths"), py::arg("out_dir"), py::arg("step_pattern"), py::arg("step_marker"), py::arg("allow_mixed"),
      py::arg("max_trace_bytes"));
}
