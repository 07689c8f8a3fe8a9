#include "analyzer/analysis/rank_test.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>

namespace shardscope::analysis {
namespace {

// Twice each value's mid-rank in the pooled sample (whole numbers, ties sharing theirs), a's first.
std::vector<long> doubled_ranks(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  std::vector<size_t> order(all.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return all[x] < all[y]; });
  std::vector<long> r(all.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && all[order[j]] == all[order[i]]) ++j;
    for (size_t k = i; k < j; ++k) r[order[k]] = long(i + 1 + j);  // (i+1 + j) = 2 × the mid-rank of i+1..j
    i = j;
  }
  return r;
}

}  // namespace

double smallest_p(size_t na, size_t nb) {
  if (na == 0 || nb == 0) return 1.0;
  double c = 1;  // C(na + nb, na)
  for (size_t i = 1; i <= na; ++i) c = c * double(nb + i) / double(i);
  return std::min(1.0, 2.0 / c);
}

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t na = a.size(), n = a.size() + b.size();
  if (a.empty() || b.empty()) return 1.0;
  const std::vector<long> r = doubled_ranks(a, b);
  const long observed = std::accumulate(r.begin(), r.begin() + long(na), 0L);
  const double mean = double(na) * double(n + 1);  // E[2W]
  const double dev = std::fabs(double(observed) - mean);
  if (n <= kExactRankTest) {
    // ways[k][s]: the subsets of k of the values seen so far whose doubled ranks sum to s.
    const long total = std::accumulate(r.begin(), r.end(), 0L);
    std::vector<std::vector<double>> ways(na + 1, std::vector<double>(size_t(total) + 1, 0.0));
    ways[0][0] = 1;
    for (size_t i = 0; i < n; ++i)
      for (size_t k = std::min(i + 1, na); k >= 1; --k)
        for (long s = total; s >= r[i]; --s) ways[k][size_t(s)] += ways[k - 1][size_t(s - r[i])];
    double tail = 0, all = 0;
    for (long s = 0; s <= total; ++s) {
      all += ways[na][size_t(s)];
      if (std::fabs(double(s) - mean) >= dev - 1e-9) tail += ways[na][size_t(s)];
    }
    return std::min(1.0, tail / all);
  }
  // Normal approximation of W = observed / 2, its variance corrected for ties.
  const double nb = double(n - na), nn = double(n);
  double ties = 0;
  std::vector<long> sorted(r);
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    const double t = double(j - i);
    ties += t * t * t - t;
    i = j;
  }
  const double var = double(na) * nb / 12.0 * ((nn + 1) - ties / (nn * (nn - 1)));
  if (var <= 0) return 1.0;
  const double z = std::max(0.0, dev / 2 - 0.5) / std::sqrt(var);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

double student_t_critical(size_t df) {
  static_assert(kNoiseAlpha == 0.05, "the table below is t's 0.975 quantile");
  static constexpr double kTable[] = {12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
                                      2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
                                      2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  if (df == 0) return INFINITY;
  if (df <= std::size(kTable)) return kTable[df - 1];
  const double z = 1.959964, v = double(df), z3 = z * z * z, z5 = z3 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v);
}

}  // namespace shardscope::analysis
