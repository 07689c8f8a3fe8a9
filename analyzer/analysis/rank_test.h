// The Mann-Whitney rank test (Wilcoxon rank-sum) over two samples: whether one side's values sit higher
// than the other's beyond what shuffling the same values between the sides gives. `diff` asks it of each
// side's per-step values: steps are few, skewed and have outliers (a stall, a late step), which a rank test
// takes without assuming a distribution, and it is exact and deterministic (no resampling, no seed).
#pragma once

#include <cstddef>
#include <vector>

namespace shardscope::analysis {

// The fixed significance level of diff's noise test (docs/diff.md).
inline constexpr double kNoiseAlpha = 0.05;

// Two-sided p-value: exact over every split of the pooled values (ties take mid-ranks) up to kExactRankTest
// values together, the normal approximation with tie and continuity corrections above. 1 when a side is empty.
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);
inline constexpr size_t kExactRankTest = 60;

// The smallest two-sided p-value any two samples of these sizes can give (2 / C(na + nb, na)): when it is
// above kNoiseAlpha no change between them can be told from noise.
double smallest_p(size_t na, size_t nb);

// Student's t two-sided critical value at kNoiseAlpha for `df` degrees of freedom (df >= 1): the table to 30,
// the Cornish-Fisher expansion above (within 1e-4 of the exact value there). diff's run-to-run noise with
// several runs a side (diff_run.h) bounds the change between the runs' means with it.
double student_t_critical(size_t df);

}  // namespace shardscope::analysis
