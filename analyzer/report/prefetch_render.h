// Sentences and tables of the prefetch check (metrics/prefetch.h), made here only: `report` (text, md,
// json, html), `check-prefetch` and `diff` all render the check through these.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analyzer/analysis/report.h"
#include "analyzer/metrics/prefetch.h"
#include "analyzer/report/table.h"

namespace shardscope::report {

std::string verdict_name(metrics::Verdict v);
// A short name for tables: "issued late", "late peer", ...
std::string cause_name(metrics::Cause c);
// Why nothing (rank) or this step could not be checked; "" when it could.
std::string na_sentence(metrics::NotApplicable na, size_t count);
// The step's verdict with its evidence or cause: "effective: all 11 ... hidden", "not effective: late peer: ...".
// With the step's window (step_ns > 0), an all-gather queued longer than the whole step is said to be the
// host running ahead of the GPU.
std::string step_sentence(const metrics::StepPrefetch& s, const metrics::RankPrefetch& rank, int64_t step_ns = 0);
// The window of step `number` among `steps` (the report's rows), 0 when it is not there.
int64_t step_window_ns(const std::vector<StepRow>& steps, int64_t number);
// The run's verdict and how it was reached from the steady-state steps.
std::string run_sentence(const metrics::RankPrefetch& p);
// One row per unit pair: unit, AG of unit, issue lead, hidden %, exposed wait, queued, cause, late peer.
Table unit_table(const metrics::StepPrefetch& s);
// Every rank's check as text (check-prefetch, and the report's prefetch section).
// How the units were identified, when not named by the trace.
std::string unit_identity_sentence(model::UnitIdentity id);
std::string prefetch_text(const metrics::RankPrefetch& p, const std::string& source, bool markdown, bool units_tables,
                          const std::vector<StepRow>& steps = {});
nlohmann::json prefetch_json(const metrics::RankPrefetch& p, const std::vector<StepRow>& steps = {});

// The run rule, as docs/check-prefetch.md states it; the warm-up clause only where a rank's trace holds the
// job's step 0 (model::is_warm_up).
std::string run_rule(bool warm_up_left_out);
bool has_warm_up(const metrics::RankPrefetch& p);

}  // namespace shardscope::report
