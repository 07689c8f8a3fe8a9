#include "analyzer/report/summary_render.h"

#include <cmath>

#include <fmt/format.h>

#include "analyzer/report/cells.h"
#include "analyzer/report/prefetch_render.h"
#include "analyzer/report/sentences.h"
#include "sizing/zero_model.h"

namespace shardscope::report {
namespace {

// The most ranges of ranks (or units) a summary line lists before "and N more": the line stays one line at
// any rank count; the JSON's summary lists them all.
constexpr size_t kListedRanges = 6;

std::string ms(int64_t ns) { return fmt::format("{:.3f} ms", double(ns) / 1e6); }

// A per-rank share, saying over what it is taken: "24.0 %" (one rank), "24.0 % on every rank", "29.8 % on
// rank 0 and 54.5 % on rank 1" (two: both values), or "median of 8 ranks 24.0 % (min 20.1 % on rank 3, max 30.2
// % on rank 5)".
std::string spread(const analysis::AcrossRanks& a) {
  if (a.ranks == 1) return fmt::format("{:.1f} %", a.median);
  if (fmt::format("{:.1f}", a.min) == fmt::format("{:.1f}", a.max))
    return fmt::format("{:.1f} % on {}", a.median, a.ranks == 2 ? "both ranks" : "every rank");
  if (a.ranks == 2) {
    const bool low_first = a.min_rank < a.max_rank;
    return fmt::format("{:.1f} % on rank {} and {:.1f} % on rank {}", low_first ? a.min : a.max,
                       low_first ? a.min_rank : a.max_rank, low_first ? a.max : a.min,
                       low_first ? a.max_rank : a.min_rank);
  }
  return fmt::format("median of {} ranks {:.1f} % (min {:.1f} % on rank {}, max {:.1f} % on rank {})", a.ranks,
                     a.median, a.min, a.min_rank, a.max, a.max_rank);
}

std::string units_text(const std::vector<int>& units) {
  if (units.empty()) return "";
  std::string u = analysis::rank_ranges(units, kListedRanges);
  return fmt::format(", unit{} {}", units.size() == 1 ? "" : "s", u);
}

std::string missing_text(const analysis::RunSummary::Missing& m) {
  std::string why;
  if (m.part == "prefetch") why = na_sentence(m.prefetch_na, 0);
  else if (m.part == "stragglers")
    why = na_text(m.stragglers_na);
  else if (m.part == "memory")
    why = "n/a: no category with both a measured peak and a ZeRO prediction";
  else
    why = na_text(m.na);
  const std::string where = m.ranks.empty() ? ""
                                            : fmt::format(" on rank{} {}", m.ranks.size() == 1 ? "" : "s",
                                                          analysis::rank_ranges(m.ranks, kListedRanges));
  if (why.rfind("n/a: ", 0) == 0) why = why.substr(5);  // the line already says "not computed"
  return fmt::format("{}{}: {}", m.part, where, why);
}

// "step budget on rank 1 (mean of its 2 steady steps): 324.4 ms = compute only 96.9 + overlapped 51.0 + exposed
// communication 125.9 + idle 51.7 ms": the terms add up to the step (other device work named only when there is).
std::string budget_line(const analysis::RunSummary::Budget& b, size_t ranks) {
  const double n = double(b.steps);
  // Tenths of a ms for steps of 10 ms and more; µs below, where tenths would round the terms away.
  const int decimals = double(b.sum.window_ns) / 1e6 / n < 10 ? 3 : 1;
  auto mean = [&](int64_t ns) { return fmt::format("{:.{}f}", double(ns) / 1e6 / n, decimals); };
  const std::string on = ranks == 1 ? "" : fmt::format(" on rank {}", b.rank);
  const std::string over =
      b.steps == 1 ? std::string("its one steady step") : fmt::format("mean of its {} steady steps", b.steps);
  std::string line =
      fmt::format("step budget{} ({}): {} ms = compute only {} + overlapped {} + exposed communication {}", on, over,
                  mean(b.sum.window_ns), mean(b.compute_only_ns()), mean(b.sum.overlap_ns), mean(b.sum.exposed_ns()));
  if (b.other_ns() > 0) line += fmt::format(" + other device work {}", mean(b.other_ns()));
  return line + fmt::format(" + idle {} ms", mean(b.sum.idle_ns()));
}

// "memory measured (the GPU allocator's events): peak 675.766 MB allocated on rank 0, in step 1" (the highest
// of the ranks' peaks).
std::string measured_peak_line(const analysis::RunSummary& s) {
  const auto& p = *s.measured_peak;
  const std::string where = p.in_step ? fmt::format(", in step {}", p.step) : std::string(", outside the steps");
  const std::string of = s.measured_ranks > 1 ? fmt::format(" (the highest of {} ranks)", s.measured_ranks) : "";
  return fmt::format("memory measured (the GPU allocator's events): peak {} allocated on rank {}{}{}",
                     bytes_text(double(p.bytes)), p.rank, where, of);
}

}  // namespace

std::vector<std::string> summary_lines(const analysis::RunSummary& s) {
  std::vector<std::string> out;
  // The run.
  std::string run = fmt::format("run: {} rank{}", s.ranks, s.ranks == 1 ? "" : "s");
  if (s.steps) run += fmt::format(", {} step{} ({} steady)", s.steps, s.steps == 1 ? "" : "s", s.steady_steps);
  if (s.step_time)
    run += fmt::format("; step time over {}{} steady step{}: median {}, p90 {}, max {} (rank {}, step {})",
                       s.ranks == 1 ? "its " : "all ranks' ", s.step_time->steps, s.step_time->steps == 1 ? "" : "s",
                       ms(s.step_time->median_ns), ms(s.step_time->p90_ns), ms(s.step_time->max_ns),
                       s.step_time->max_rank, s.step_time->max_step);
  out.push_back(run);
  // Communication.
  if (s.comm_pct) {
    std::string c =
        fmt::format("communication (of the {}): {}", s.comm_from_whole_trace ? "trace" : "step", spread(*s.comm_pct));
    if (s.exposed_pct) c += fmt::format("; exposed (not under compute): {}", spread(*s.exposed_pct));
    if (s.overlap_pct) c += fmt::format("; overlapped (of the communication): {}", spread(*s.overlap_pct));
    out.push_back(c);
  }
  if (s.budget) out.push_back(budget_line(*s.budget, s.ranks));
  // Prefetch.
  if (s.prefetch_ranks) {
    std::string p =
        fmt::format("backward prefetch: {} ({} of {} rank{} and {} of {} steady step{} effective)",
                    s.prefetch == metrics::Verdict::NotEffective ? "NOT effective" : verdict_name(s.prefetch),
                    s.prefetch_ranks_effective, s.prefetch_ranks, s.prefetch_ranks == 1 ? "" : "s",
                    s.prefetch_steps_effective, s.prefetch_steps, s.prefetch_steps == 1 ? "" : "s");
    if (s.common_cause != metrics::Cause::None)
      p += fmt::format("; most often {} ({} step{}{}, rank{} {})", cause_name(s.common_cause), s.common_cause_steps,
                       s.common_cause_steps == 1 ? "" : "s", units_text(s.cause_units),
                       s.cause_ranks.size() == 1 ? "" : "s", analysis::rank_ranges(s.cause_ranks, kListedRanges));
    out.push_back(p);
  }
  // The links apart from the skew.
  if (!s.links.empty()) {
    std::string line = "links (each instance timed by its fastest rank):";
    for (size_t i = 0; i < s.links.size(); ++i) {
      const auto& l = s.links[i];
      line += fmt::format(
          "{} {} busbw {}", i ? "," : "", model::to_string(l.kind),
          l.busbw_gbps   ? fmt::format("{:.2f} GB/s", *l.busbw_gbps)
          : l.algbw_gbps ? fmt::format("n/a: the trace does not say the group size (algbw {:.2f} GB/s)", *l.algbw_gbps)
                         : std::string("n/a: no message size in the trace"));
    }
    if (s.wait_pct)
      line += fmt::format("; waiting for peers: {} of {} collective time", spread(*s.wait_pct),
                          s.wait_pct->ranks == 1 ? "its" : "each rank's");
    out.push_back(line);
  }
  // The straggler, named only beyond the arrivals' own spread.
  if (const auto& st = s.straggler) {
    const std::string late = st->median_late_ns == INT64_MAX ? "over 2^63 ns" : ms(st->median_late_ns);
    out.push_back(
        st->beyond_noise()
            ? fmt::format("straggler: rank {} arrived last at {} of {} collective instances, by {} after the "
                          "next-latest rank (the median of those {}; the arrivals' own spread: {})",
                          st->rank, st->times_last, st->instances, late, st->times_last, ms(st->noise_ns))
            : fmt::format("straggler: none beyond the arrivals' own spread ({}): the rank most often last, rank {} "
                          "({} of {} instances), was late by {} (the median)",
                          ms(st->noise_ns), st->rank, st->times_last, st->instances, late));
  }
  // Memory.
  if (s.memory_ranks) {
    std::string m =
        s.memory_ranks_agree == s.memory_ranks
            ? fmt::format("memory vs the ZeRO model: agrees on all {} rank{} (within {:.0f} %)", s.memory_ranks,
                          s.memory_ranks == 1 ? "" : "s", 100 * metrics::kMemoryAgreement)
            : fmt::format("memory vs the ZeRO model: departs on {} of {} rank{}", s.memory_ranks - s.memory_ranks_agree,
                          s.memory_ranks, s.memory_ranks == 1 ? "" : "s");
    if (s.departs_most) {
      const auto& d = *s.departs_most;
      m += fmt::format("; most: {} on rank {}, {} measured vs {} predicted ({})", d.category, d.rank,
                       bytes_text(d.measured), bytes_text(d.predicted), change_pct(d.measured, d.predicted, true));
    }
    out.push_back(m);
  }
  if (s.measured_peak) out.push_back(measured_peak_line(s));
  for (const analysis::RunSummary::Missing& m : s.missing) out.push_back("not computed: " + missing_text(m));
  return out;
}

nlohmann::json summary_json(const analysis::RunSummary& s) {
  nlohmann::json j = {
      {"ranks", s.ranks}, {"steps", s.steps}, {"steady_steps", s.steady_steps}, {"worst_rank", s.worst_rank}};
  if (s.step_time)
    j["step_time_ms"] = {{"median", double(s.step_time->median_ns) / 1e6},
                         {"p90", double(s.step_time->p90_ns) / 1e6},
                         {"max", double(s.step_time->max_ns) / 1e6},
                         {"max_rank", s.step_time->max_rank},
                         {"max_step", s.step_time->max_step}};
  auto across = [](const std::optional<analysis::AcrossRanks>& a) -> nlohmann::json {
    if (!a) return nullptr;
    return {{"min", a->min},           {"median", a->median},     {"max", a->max},
            {"min_rank", a->min_rank}, {"max_rank", a->max_rank}, {"ranks", a->ranks}};
  };
  j["comm_pct"] = across(s.comm_pct);
  j["exposed_pct"] = across(s.exposed_pct);
  j["overlap_pct"] = across(s.overlap_pct);
  j["comm_from_whole_trace"] = s.comm_from_whole_trace;
  if (s.budget) {
    const auto& b = *s.budget;
    const double n = double(b.steps) * 1e6;
    j["step_budget_ms"] = {{"rank", b.rank},
                           {"steps", b.steps},
                           {"step", double(b.sum.window_ns) / n},
                           {"compute_only", double(b.compute_only_ns()) / n},
                           {"overlapped", double(b.sum.overlap_ns) / n},
                           {"exposed_communication", double(b.sum.exposed_ns()) / n},
                           {"other", double(b.other_ns()) / n},
                           {"idle", double(b.sum.idle_ns()) / n}};
  }
  j["prefetch"] = {
      {"verdict", verdict_name(s.prefetch)},
      {"ranks", s.prefetch_ranks},
      {"ranks_effective", s.prefetch_ranks_effective},
      {"steady_steps", s.prefetch_steps},
      {"steady_steps_effective", s.prefetch_steps_effective},
      {"common_cause",
       s.common_cause == metrics::Cause::None ? nlohmann::json(nullptr) : nlohmann::json(cause_name(s.common_cause))},
      {"common_cause_steps", s.common_cause_steps},
      {"cause_units", s.cause_units},
      {"cause_ranks", s.cause_ranks}};
  j["links"] = nlohmann::json::array();
  for (const auto& l : s.links)
    j["links"].push_back({{"kind", model::to_string(l.kind)},
                          {"busbw_gbps", l.busbw_gbps ? nlohmann::json(*l.busbw_gbps) : nlohmann::json(nullptr)},
                          {"algbw_gbps", l.algbw_gbps ? nlohmann::json(*l.algbw_gbps) : nlohmann::json(nullptr)}});
  j["wait_pct"] = across(s.wait_pct);
  j["straggler"] =
      s.straggler ? nlohmann::json{{"rank", s.straggler->rank},
                                   {"times_last", s.straggler->times_last},
                                   {"instances", s.straggler->instances},
                                   {"median_late_ms", s.straggler->median_late_ns == INT64_MAX
                                                          ? nlohmann::json(nullptr)
                                                          : nlohmann::json(double(s.straggler->median_late_ns) / 1e6)},
                                   {"spread_ms", double(s.straggler->noise_ns) / 1e6},
                                   {"beyond_spread", s.straggler->beyond_noise()}}
                  : nlohmann::json(nullptr);
  j["memory"] = {{"ranks", s.memory_ranks}, {"ranks_agree", s.memory_ranks_agree}};
  if (s.departs_most)
    j["memory"]["departs_most"] = {{"rank", s.departs_most->rank},
                                   {"category", s.departs_most->category},
                                   {"measured_bytes", s.departs_most->measured},
                                   {"predicted_bytes", s.departs_most->predicted}};
  if (s.measured_peak)
    j["memory"]["measured_peak"] = {
        {"rank", s.measured_peak->rank},
        {"allocated_bytes", s.measured_peak->bytes},
        {"step", s.measured_peak->in_step ? nlohmann::json(s.measured_peak->step) : nlohmann::json(nullptr)},
        {"ranks_measured", s.measured_ranks}};
  j["not_computed"] = nlohmann::json::array();
  for (const analysis::RunSummary::Missing& m : s.missing)
    j["not_computed"].push_back({{"part", m.part}, {"ranks", m.ranks}, {"reason", missing_text(m)}});
  return j;
}

}  // namespace shardscope::report
