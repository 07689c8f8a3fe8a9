// The bus bandwidth factor of every collective kind against nccl-tests' definitions (doc/PERFORMANCE.md):
// all-reduce 2(n-1)/n; all-gather, reduce-scatter and all-to-all (n-1)/n; broadcast, reduce and send/recv 1.
#include <gtest/gtest.h>

#include "model/classify.h"

namespace shardscope::model {
namespace {

TEST(BusBandwidth, FactorsAreNcclTests) {
  for (int n : {2, 4, 8, 64}) {
    const double d = n;
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::AllReduce, n), 2 * (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::AllGather, n), (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::ReduceScatter, n), (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::AllToAll, n), (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::Broadcast, n), 1.0) << n;
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::Reduce, n), 1.0) << n;
    EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::SendRecv, n), 1.0) << n;
  }
  // At n = 2 all-to-all moves half its bytes over the bus, not all of them.
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::AllToAll, 2), 0.5);
}

}  // namespace
}  // namespace shardscope::model
