// The viewer's live view (model/live_steps.h): the golden two-rank trainer run written into a folder a few
// hundred bytes at a time, as a running job writes it. The model gains each step as it lands, with the
// report's figures, the view follows the newest step until the user goes back to an older one, and the
// straggler so far becomes the report's once the run is complete.
#include <zlib.h>

#include <fstream>

#include <gtest/gtest.h>

#include "analyzer/analysis/run.h"
#include "tests/support/gunzip.h"
#include "tests/support/temp_dir.h"
#include "viewer/model/live_steps.h"

namespace shardscope::viewer {
namespace {

namespace fs = std::filesystem;

using test::gunzip_file;

TEST(LiveSteps, GainsEachStepFollowsTheNewestUnlessTheUserWentBack) {
  const fs::path run = fs::path(SHARDSCOPE_SOURCE_DIR) / "tests/golden/trainer_cpu_2ranks/pre";
  const analysis::AnalysedRun report = analysis::analyse_run({run.string()}, {});
  test::TempDir dir;
  std::vector<std::string> text;
  for (int r = 0; r < 2; ++r) text.push_back(gunzip_file(run / ("trace.rank" + std::to_string(r) + ".json.gz")));
  std::vector<size_t> written(2, 0);
  LiveSteps live(dir.path());
  EXPECT_FALSE(live.shown().has_value());
  std::vector<size_t> counts;  // the model's step count after each poll that added some
  for (size_t chunk = 0; !live.done(); ++chunk) {
    ASSERT_LT(chunk, 10000u) << "never done";
    for (int r = 0; r < 2; ++r) {
      const size_t n = std::min<size_t>(613, text[r].size() - written[r]);
      std::ofstream(dir.path() / ("trace.rank" + std::to_string(r) + ".json"), std::ios::binary | std::ios::app)
          .write(text[r].data() + written[r], std::streamsize(n));
      written[r] += n;
    }
    if (live.poll() == 0) continue;
    counts.push_back(live.steps().size());
    if (live.steps().size() == 1) {
      // Step 0 is in while the job runs on; the user picks it, the newest: the view still follows.
      EXPECT_EQ(live.shown(), 0);
      live.show_step(0);
      EXPECT_TRUE(live.following());
    }
  }
  // The view followed to the newest; going back to an older step holds it there, until asked to follow.
  EXPECT_EQ(live.shown(), 2);
  live.show_step(1);
  EXPECT_FALSE(live.following());
  EXPECT_EQ(live.shown(), 1);
  live.follow_newest();
  EXPECT_EQ(live.shown(), 2);
  // Step 0 landed while the files grew (once both held step 2's record); steps 1 and 2 when they were
  // complete, since a step's window ends at the next one's first device activity.
  EXPECT_EQ(counts, (std::vector<size_t>{1, 3}));
  for (size_t i = 0; i < 3; ++i)
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(live.steps()[i].ranks[r].m.window_ns, report.report.ranks[r].steps[i].m.window_ns);
      EXPECT_EQ(live.steps()[i].ranks[r].m.exposed_ns(), report.report.ranks[r].steps[i].m.exposed_ns());
    }
  // The report's arrived-last counts over the whole run, rank by rank.
  for (const metrics::StragglerRank& sr : report.report.stragglers.ranks) {
    const auto it = live.times_last().find(sr.rank);
    EXPECT_EQ(it == live.times_last().end() ? 0 : it->second, sr.times_last) << "rank " << sr.rank;
  }
  EXPECT_EQ(live.straggler(),
            report.report.stragglers.ranks.at(0).times_last >= report.report.stragglers.ranks.at(1).times_last ? 0 : 1);
}

}  // namespace
}  // namespace shardscope::viewer
