// The viewer's Open dialog offers the registry's formats (viewer/model/open_filter.h): a toy format added
// through the registry alone, and rank summaries and Nsight exports (.sqlite), beside the JSON traces.
#include <gtest/gtest.h>

#include "analyzer/analysis/summary_file.h"
#include "tests/support/toy_format.h"
#include "viewer/model/open_filter.h"

namespace shardscope::test {
namespace {

TEST(OpenFilter, OffersEveryRegisteredFormat) {
  plugins::Registry reg = registry_with_toy();
  reg.add_format(analysis::summary_format());
  EXPECT_EQ(viewer::open_filter(reg.formats()),
            "Traces (*.json *.json.gz *.sqlite *.sqlite.gz *.toy *.toy.gz *.gz);;All files (*)");
}

TEST(OpenFilter, TheViewersRegistryOffersSummaries) {
  const std::string filter = viewer::open_filter(viewer::viewer_formats().formats());
  EXPECT_NE(filter.find("*.sqlite "), std::string::npos) << filter;
  EXPECT_NE(filter.find("*.json.gz "), std::string::npos) << filter;
}

}  // namespace
}  // namespace shardscope::test
