#include "analyzer/analysis/rank_test.h"

#include <algorithm>
#include <cmath>
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

}  // namespace shardscope::analysis
