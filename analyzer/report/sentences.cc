#include "analyzer/report/sentences.h"

#include <vector>

#include <fmt/format.h>

namespace shardscope::report {

std::string na_text(analysis::Na why, model::CollectiveKind kind) {
  using analysis::Na;
  switch (why) {
    case Na::None: return "";
    case Na::NoDeviceEvents: return "n/a: no device events (no kernels, copies or collectives on a device timeline)";
    case Na::NoSteps: return "n/a: no steps (no ProfilerStep#N or trainer \"step\" ranges)";
    case Na::NoDeviceEventsInSteps: return "n/a: no device events";
    case Na::NoCommunication: return "n/a: no communication";
    case Na::NoCommunicationInAnySteps: return "n/a: no communication in any step";
    case Na::EmptyWindow: return "n/a: empty window";
    case Na::KindNotInRun: return fmt::format("n/a: no {} in this run", model::to_string(kind));
    case Na::UnitNotChecked: return "n/a: the prefetch check found no backward all-gather of this unit in this run";
  }
  return "";
}

std::string pct_or(const std::optional<double>& v, const std::string& why) { return v ? fmt::format("{:.2f} %", *v) : why; }

std::string whole_trace_setting(const metrics::HtaBreakdown& w) {
  std::string s = std::string("as ") + metrics::kHtaSetting;
  if (w.left_out)
    s += fmt::format("; {} device event{} left out, as HTA's step filter leaves out those whose launch is not in the trace or comes after the last "
                     "ProfilerStep",
                     w.left_out, w.left_out == 1 ? "" : "s");
  return s;
}

std::string outside_steps_sentence(const metrics::OutsideSteps& o) {
  std::vector<std::string> parts;
  if (o.before_events)
    parts.push_back(fmt::format("{} device event{} ({:.3f} ms busy) before step {}", o.before_events, o.before_events == 1 ? "" : "s", o.before_ns / 1e6,
                                o.first_step));
  if (o.after_events)
    parts.push_back(fmt::format("{} device event{} ({:.3f} ms busy) after step {}", o.after_events, o.after_events == 1 ? "" : "s", o.after_ns / 1e6,
                                o.last_step));
  if (parts.empty()) return "";
  return fmt::format("{} {} outside the step table", fmt::join(parts, " and "), o.before_events + o.after_events == 1 ? "is" : "are");
}

}  // namespace shardscope::report
