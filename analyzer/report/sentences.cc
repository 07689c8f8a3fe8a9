#include "analyzer/report/sentences.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyzer/analysis/run_summary.h"

namespace shardscope::report {

std::string na_text(analysis::Na why, model::CollectiveKind kind) {
  using analysis::Na;
  switch (why) {
    case Na::None: return "";
    case Na::NoDeviceEvents: return "n/a: no device events (no kernels, copies or collectives on a device timeline)";
    case Na::NoSteps:
      return "n/a: no steps (no ProfilerStep#N, trainer \"step\", Optimizer.step or repeating collectives; "
             "--step-marker NAME starts a step at each range NAME)";
    case Na::NoDeviceEventsInSteps: return "n/a: no device events";
    case Na::NoCommunication: return "n/a: no communication";
    case Na::NoCommunicationInAnySteps: return "n/a: no communication in any step";
    case Na::EmptyWindow: return "n/a: empty window";
    case Na::KindNotInRun: return fmt::format("n/a: no {} in this run", model::to_string(kind));
    case Na::UnitNotChecked: return "n/a: the prefetch check found no backward all-gather of this unit in this run";
    case Na::NoBusBandwidth:
      return fmt::format("n/a: no {} bus bandwidth (no bytes or no time)", model::to_string(kind));
    case Na::NoMemoryMeasured:
      return "n/a: no memory measured (no allocator events, no memory.allocator_total counter)";
  }
  return "";
}

std::string pct_or(const std::optional<double>& v, const std::string& why) {
  return v ? fmt::format("{:.2f} %", *v) : why;
}

std::string whole_trace_setting(const metrics::HtaBreakdown& w) {
  std::string s = std::string("as ") + metrics::kHtaSetting;
  if (w.left_out)
    s += fmt::format(
        "; {} device event{} left out, as HTA's step filter leaves out those whose launch is not in the trace or comes "
        "after the last "
        "ProfilerStep",
        w.left_out, w.left_out == 1 ? "" : "s");
  return s;
}

std::string exact_line(const metrics::HtaBreakdown& w) {
  const metrics::WindowMetrics x = w.exact();
  const std::string empty = na_text(analysis::Na::EmptyWindow);
  return fmt::format(
      "exact (the same events unrounded, in the trace's own resolution): window {:.6f} ms | overlap {} | idle {} | "
      "compute {} | non-compute {}",
      double(x.window_ns) / 1e6, pct_or(x.overlap_pct(), na_text(analysis::Na::NoCommunication)),
      pct_or(x.idle_pct(), empty), pct_or(x.compute_pct(), empty), pct_or(w.exact_non_compute_pct(), empty));
}

std::string outside_steps_sentence(const metrics::OutsideSteps& o) {
  std::vector<std::string> parts;
  if (o.before_events)
    parts.push_back(fmt::format("{} device event{} ({:.3f} ms busy) before step {}", o.before_events,
                                o.before_events == 1 ? "" : "s", o.before_ns / 1e6, o.first_step));
  if (o.after_events)
    parts.push_back(fmt::format("{} device event{} ({:.3f} ms busy) after step {}", o.after_events,
                                o.after_events == 1 ? "" : "s", o.after_ns / 1e6, o.last_step));
  if (parts.empty()) return "";
  return fmt::format("{} {} outside the step table", fmt::join(parts, " and "),
                     o.before_events + o.after_events == 1 ? "is" : "are");
}

std::string aborted_steps_sentence(const std::vector<int64_t>& steps) {
  if (steps.empty()) return "";
  return fmt::format(
      "step{} {} did not complete (the trace marks {} aborted): left out of the all-steps row and the prefetch verdict",
      steps.size() == 1 ? "" : "s", fmt::join(steps, ", "), steps.size() == 1 ? "it" : "them");
}

std::string step_label(const model::Step& s) {
  return s.aborted ? fmt::format("{} (aborted)", s.number) : std::to_string(s.number);
}

std::vector<std::string> report_warnings(const Report& r) {
  std::vector<std::string> out = r.warnings;
  if (!r.unrecognised_comm) return out;
  const UnrecognisedComm& u = *r.unrecognised_comm;
  const bool one = u.ranks.size() == 1;
  std::vector<std::string> kernels;
  for (const KernelTime& k : u.longest)
    kernels.push_back(fmt::format("{} ({:.3f} ms)", k.name.size() > 80 ? k.name.substr(0, 77) + "..." : k.name,
                                  double(k.time_ns) / 1e6));
  out.push_back(fmt::format(
      "no communication recognised on rank{} {}, though {}: {} longest kernels, counted as compute, are {}; if "
      "one is a collective library's, docs/spec.md's event classes list the libraries shardscope knows",
      one ? "" : "s", analysis::rank_ranges(u.ranks, 8),
      u.world_size > 1 ? fmt::format("{} trace{} say{} world size {}", one ? "its" : "their", one ? "" : "s",
                                     one ? "s" : "", u.world_size)
                       : fmt::format("{} ranks were loaded", r.ranks.size()),
      one ? "its" : fmt::format("rank {}'s", u.ranks.front()), fmt::join(kernels, ", ")));
  return out;
}

const char* step_rule_code(model::StepRule rule) {
  using R = model::StepRule;
  switch (rule) {
    case R::None: return "none";
    case R::ProfilerStep: return "profiler_step";
    case R::TrainerStep: return "trainer_step";
    case R::NamedRanges: return "named_ranges";
    case R::StepPattern: return "step_pattern";
    case R::StepMarker: return "step_marker";
    case R::OptimizerStep: return "optimizer_step";
    case R::Importer: return "importer";
    case R::Collectives: return "repeating_collectives";
  }
  return "none";
}

std::string step_rule_sentence(model::StepRule rule) {
  using R = model::StepRule;
  switch (rule) {
    case R::None: return "no rule found steps";
    case R::ProfilerStep: return "the profiler's ProfilerStep#N ranges";
    case R::TrainerStep: return "the trainer's \"step\" ranges";
    case R::NamedRanges: return "ranges named like steps (\"step 3\", \"iteration 3\"; --step-pattern names others)";
    case R::StepPattern: return "the ranges --step-pattern names";
    case R::StepMarker:
      return "--step-marker, a step starting at each range of that name and ending where the next starts";
    case R::OptimizerStep:
      return "inferred from the optimizer (the trace marks no steps), a step ending where each Optimizer.step range "
             "ends (--step-pattern or --step-marker name others)";
    case R::Importer: return "the importer's own rule";
    case R::Collectives:
      return "inferred from the collectives (the trace marks no steps and has no Optimizer.step), a step starting "
             "at each repetition of their repeating pattern, at its first all-gather or all-reduce (--step-marker "
             "names another start)";
  }
  return "no rule found steps";
}

bool step_rule_said(model::StepRule rule) {
  return rule != model::StepRule::None && rule != model::StepRule::ProfilerStep && rule != model::StepRule::TrainerStep;
}

std::vector<std::string> report_notes(const Report& r) {
  std::vector<std::string> notes;
  if (!r.step_counts.empty()) {
    std::string s = "ranks have different step counts:";
    for (auto& [n, ranks] : r.step_counts) s += fmt::format(" {} step(s) on rank(s) {};", n, fmt::join(ranks, ","));
    s += " per-step numbers are per rank, matched by step number";
    notes.push_back(s);
  }
  using Code = metrics::StragglerNote::Code;
  for (const metrics::StragglerNote& n : r.stragglers.notes) {
    switch (n.code) {
      case Code::NoClockSync:
        notes.push_back(
            "stragglers: no rank's trace maps its clock onto the wall clock (no clock_sync pairs): arrivals are "
            "compared on the raw "
            "trace clocks, which agree only for ranks on one machine");
        break;
      case Code::SomeUnmapped:
        notes.push_back(
            fmt::format("stragglers: rank(s) {} carry no clock_sync pairs while the other ranks map their clock "
                        "onto the wall clock",
                        fmt::join(n.ranks, ",")));
        break;
      case Code::CountsDiffer:
        // By sequence number the instances both have are matched whatever their place; by position, the first ones.
        notes.push_back(fmt::format("stragglers: rank {} has {} {} and rank {} has {}: {}", n.rank, n.here,
                                    model::to_string(n.kind), n.other_rank, n.there,
                                    r.stragglers.pairing == metrics::Pairing::Sequence
                                        ? "matched those they share by sequence number"
                                        : fmt::format("matched the first {}", std::min(n.here, n.there))));
        break;
    }
  }
  return notes;
}

std::string na_text(metrics::StragglersNa why) {
  switch (why) {
    case metrics::StragglersNa::None: return "";
    case metrics::StragglersNa::OneRank: return "n/a: one rank only; stragglers need two or more ranks of the same run";
    case metrics::StragglersNa::NoCommonCollective: return "n/a: no collective appears on every rank";
    case metrics::StragglersNa::ClocksNotAnchored:
      return "n/a: the ranks' clocks are not anchored to one another (some traces map their clock onto the wall "
             "clock through clock_sync pairs, others carry none), so who arrived last cannot be told";
  }
  return "";
}

}  // namespace shardscope::report
