#include "analyzer/report/whatif_render.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "analyzer/report/table.h"

namespace shardscope::report {
namespace {

const char* prefetch_name(metrics::Prefetch p) {
  return p == metrics::Prefetch::Pre ? "pre" : p == metrics::Prefetch::Post ? "post" : "none";
}

std::string ms_one_decimal(int64_t ns) { return fmt::format("{:.1f} ms", double(ns) / 1e6); }
std::string signed_ms(int64_t ns) { return fmt::format("{:+.1f} ms", double(ns) / 1e6); }
std::string share(int64_t part, int64_t whole) {
  return whole ? fmt::format("{:+.1f} %", 100.0 * double(part) / double(whole)) : "n/a";
}

}  // namespace

std::string change_text(const metrics::WhatIfChange& c) {
  std::vector<std::string> parts;
  if (c.backward) parts.push_back(fmt::format("backward prefetch {}", prefetch_name(*c.backward)));
  if (c.forward) parts.push_back(fmt::format("forward prefetch {}", *c.forward ? "on" : "off"));
  if (c.limit)
    parts.push_back(*c.limit ? fmt::format("at most {} all-gather{} in flight", *c.limit, *c.limit == 1 ? "" : "s")
                             : "no all-gather limit");
  if (c.comm_speed != 1.0) parts.push_back(fmt::format("communication {:g}x as fast", c.comm_speed));
  if (c.compute_speed != 1.0) parts.push_back(fmt::format("compute {:g}x as fast", c.compute_speed));
  std::string s = parts.empty() ? "no change" : fmt::format("{}", fmt::join(parts, ", "));
  if (c.unit) s += fmt::format(" (unit {} only)", *c.unit);
  return s;
}

std::string whatif_text(const metrics::WhatIf& w, const metrics::WhatIfChange& c) {
  std::string t = fmt::format(
      "what if: {}{}\n", change_text(c),
      w.measured_backward.empty() ? "" : fmt::format(" (measured: backward prefetch {})", w.measured_backward));
  const int64_t d = w.predicted_step_ns - w.measured_step_ns;
  t += fmt::format("predicted step time: {} (measured {}; {}, {})\n", ms_one_decimal(w.predicted_step_ns),
                   ms_one_decimal(w.measured_step_ns), signed_ms(d), share(d, w.measured_step_ns));
  if (w.host_is_device)
    t += "caution: a CPU run: its ranks share the host's cores, which the replay cannot see; on the trainer's CPU "
         "pair its predictions were 57-62 % off (docs/whatif.md)\n";
  t += fmt::format("exposed communication: {} a step (measured {}; {})\n", ms_one_decimal(w.predicted_exposed_ns),
                   ms_one_decimal(w.measured_exposed_ns), signed_ms(w.predicted_exposed_ns - w.measured_exposed_ns));
  if (w.backward_all_gathers)
    t += fmt::format("backward all-gathers hidden: {:.0f} % (measured {:.0f} %; {:+.0f} points)\n",
                     100 * w.predicted_hidden, 100 * w.measured_hidden, 100 * (w.predicted_hidden - w.measured_hidden));
  else
    t += "backward all-gathers hidden: n/a (no backward all-gather paired with its unit's compute)\n";
  if (!w.units.empty()) {
    t += "units whose exposed all-gather time changes most (a step, mean over ranks):\n";
    Table units{{"unit", "measured ms", "predicted ms", "change ms"}, {}};
    for (size_t i = 0; i < std::min<size_t>(w.units.size(), 5); ++i) {
      const metrics::UnitExposure& u = w.units[i];
      units.rows.push_back({fmt::format("{}", u.unit), fmt::format("{:.2f}", double(u.measured_ns) / 1e6),
                            fmt::format("{:.2f}", double(u.predicted_ns) / 1e6),
                            fmt::format("{:+.2f}", double(u.predicted_ns - u.measured_ns) / 1e6)});
    }
    t += units.render(false, "  ");
  }
  t += fmt::format(
      "model error: the unchanged replay is {:.2f} % from the measured step time (median over {} steady steps){}\n",
      100 * w.unchanged_error, w.steps.size(),
      w.settled ? "" : "; the replay did not settle (a cycle in the change's order)");
  Table steps{{"step", "measured ms", "unchanged replay ms", "predicted ms"}, {}};
  for (const metrics::StepFigures& s : w.steps)
    steps.rows.push_back({fmt::format("{}", s.step), fmt::format("{:.2f}", double(s.measured_ns) / 1e6),
                          fmt::format("{:.2f}", double(s.unchanged_ns) / 1e6),
                          fmt::format("{:.2f}", double(s.predicted_ns) / 1e6)});
  t += steps.render(false, "  ");
  return t;
}

nlohmann::json whatif_json(const metrics::WhatIf& w, const metrics::WhatIfChange& c) {
  nlohmann::json units = nlohmann::json::array(), steps = nlohmann::json::array();
  for (const metrics::UnitExposure& u : w.units)
    units.push_back(
        {{"unit", u.unit}, {"measured_exposed_ns", u.measured_ns}, {"predicted_exposed_ns", u.predicted_ns}});
  for (const metrics::StepFigures& s : w.steps)
    steps.push_back({{"step", s.step},
                     {"measured_ns", s.measured_ns},
                     {"unchanged_replay_ns", s.unchanged_ns},
                     {"predicted_ns", s.predicted_ns}});
  return {{"change", change_text(c)},
          {"measured_backward_prefetch", w.measured_backward},
          {"predicted_step_ns", w.predicted_step_ns},
          {"measured_step_ns", w.measured_step_ns},
          {"predicted_exposed_ns", w.predicted_exposed_ns},
          {"measured_exposed_ns", w.measured_exposed_ns},
          {"predicted_backward_hidden_share", w.predicted_hidden},
          {"measured_backward_hidden_share", w.measured_hidden},
          {"unchanged_replay_median_error", w.unchanged_error},
          {"settled", w.settled},
          {"host_is_device", w.host_is_device},
          {"units", units},
          {"steps", steps}};
}

std::string prefetch_saving_sentence(const metrics::WhatIf& w) {
  const int64_t saved = w.measured_step_ns - w.predicted_step_ns;
  if (saved <= 0)
    return fmt::format(
        "what if: replayed with BACKWARD_PRE, this run's step would not be shorter ({} against {} "
        "measured; shardscope whatif, docs/whatif.md)",
        ms_one_decimal(w.predicted_step_ns), ms_one_decimal(w.measured_step_ns));
  return fmt::format(
      "what if: turning BACKWARD_PRE on would save about {} a step ({:.1f} % of {}), by replaying this "
      "trace with it (shardscope whatif; its error on real runs: docs/whatif.md)",
      ms_one_decimal(saved), 100.0 * double(saved) / double(w.measured_step_ns), ms_one_decimal(w.measured_step_ns));
}

std::string prefetch_saving_na_sentence(metrics::WhatIfNa why, size_t ranks) {
  switch (why) {
    case metrics::WhatIfNa::CpuRun:
      return "what if: n/a on a CPU run: its ranks share the host's cores, which the replay cannot see "
             "(docs/whatif.md)";
    case metrics::WhatIfNa::ManyRanks:
      return fmt::format(
          "what if: not replayed: the replay holds every rank's graph at once (a few MB a rank), and this run has "
          "{} ranks (shardscope whatif on the run replays it; --no-whatif leaves this line out)",
          ranks);
    case metrics::WhatIfNa::NotReplayable:
      return "what if: n/a: nothing in these files to replay (rank summaries keep no events)";
    case metrics::WhatIfNa::None: break;
  }
  return "";
}

std::string whatif_na_name(metrics::WhatIfNa why) {
  switch (why) {
    case metrics::WhatIfNa::CpuRun: return "cpu_run";
    case metrics::WhatIfNa::ManyRanks: return "many_ranks";
    case metrics::WhatIfNa::NotReplayable: return "not_replayable";
    case metrics::WhatIfNa::None: break;
  }
  return "";
}

}  // namespace shardscope::report
