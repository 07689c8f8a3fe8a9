// The live view's reader (analysis/follow_tail.h) on files cut at every byte, plain and gzip, and the
// follower (analysis/follow.h) on a real two-rank trainer run fed to it a few lines at a time: each step
// appears only once the files hold it whole, and its figures are the report's on the finished files.
#include <zlib.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "analyzer/analysis/follow.h"
#include "analyzer/analysis/follow_tail.h"
#include "analyzer/analysis/run.h"
#include "tests/support/gunzip.h"
#include "tests/support/temp_dir.h"
#include "tracer/format/error.h"
#include "tracer/format/writer.h"

namespace shardscope {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void put(const fs::path& p, std::string_view bytes, bool append = false) {
  std::ofstream out(p, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  out.write(bytes.data(), std::streamsize(bytes.size()));
}
using test::gunzip;

constexpr int kEvents = 5;

// A file of kEvents events named e0..e4, written and closed by the trace writer.
std::string written(const fs::path& p, bool flush_each) {
  trace::Writer w(p, {{"schema_version", 1}, {"rank", 0}, {"world_size", 1}});
  for (int i = 0; i < kEvents; ++i) {
    trace::Event e;
    e.name = "e" + std::to_string(i);
    e.cat = "compute";
    e.ts_ns = 1000 * (i + 1);
    e.dur_ns = 500;
    w.append(e);
    if (flush_each) w.flush();
  }
  w.close();
  return slurp(p);
}

TEST(FollowTail, PlainFileCutAtEveryByteReadsItsWholeRecordsThenTheRest) {
  test::TempDir dir;
  const std::string full = written(dir.path() / "whole.json", false);
  // Where each event's text ends in the file, found by its name: it is whole once the line end after it
  // (after its comma, for all but the last) is in the file.
  std::vector<size_t> whole_at;
  for (int i = 0; i < kEvents; ++i) {
    const size_t at = full.find("\"e" + std::to_string(i) + "\"");
    ASSERT_NE(at, std::string::npos);
    whole_at.push_back(full.find('\n', at) + 1);
  }
  const fs::path cut = dir.path() / "cut.json";
  for (size_t c = 0; c <= full.size(); ++c) {
    put(cut, std::string_view(full).substr(0, c));
    analysis::TraceTail tail(cut);
    std::vector<trace::Event> got;
    ASSERT_NO_THROW(got = tail.poll()) << "cut at " << c;
    size_t expect = 0;
    while (expect < whole_at.size() && whole_at[expect] <= c) ++expect;
    ASSERT_EQ(got.size(), expect) << "cut at " << c;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].name, "e" + std::to_string(i));
    // The closing "]}" ends the file, its line end or not.
    EXPECT_EQ(tail.complete(), c + 1 >= full.size()) << "cut at " << c;
    // The writer goes on: the same reader picks up the rest, nothing twice.
    put(cut, std::string_view(full).substr(c), true);
    const std::vector<trace::Event> rest = tail.poll();
    ASSERT_EQ(got.size() + rest.size(), size_t(kEvents)) << "cut at " << c;
    if (!rest.empty()) {
      EXPECT_EQ(rest.front().name, "e" + std::to_string(got.size()));
    }
    EXPECT_TRUE(tail.complete());
  }
}

TEST(FollowTail, GzipFileCutAtEveryByteNeverFailsAndEndsWhole) {
  test::TempDir dir;
  const std::string full = written(dir.path() / "whole.json.gz", true);
  const fs::path cut = dir.path() / "cut.json.gz";
  size_t before = 0;
  for (size_t c = 0; c <= full.size(); ++c) {
    put(cut, std::string_view(full).substr(0, c));
    analysis::TraceTail tail(cut);
    std::vector<trace::Event> got;
    ASSERT_NO_THROW(got = tail.poll()) << "cut at " << c;
    // Each event was sync-flushed as it was appended: a longer prefix never holds fewer whole ones.
    ASSERT_GE(got.size(), before) << "cut at " << c;
    before = got.size();
    put(cut, std::string_view(full).substr(c), true);
    const std::vector<trace::Event> rest = tail.poll();
    ASSERT_EQ(got.size() + rest.size(), size_t(kEvents)) << "cut at " << c;
    EXPECT_TRUE(tail.complete());
  }
  EXPECT_EQ(before, size_t(kEvents));  // the whole file
}

TEST(FollowTail, AWholeLineThatIsNoEventIsAnErrorNamingItsByte) {
  test::TempDir dir;
  const std::string full = written(dir.path() / "t.json", false);
  std::string bad = full;
  const size_t at = bad.find("{\"ph\"", bad.find("\"e2\"") - 40);
  ASSERT_NE(at, std::string::npos);
  bad[at] = '#';
  put(dir.path() / "bad.json", bad);
  analysis::TraceTail tail(dir.path() / "bad.json");
  try {
    tail.poll();
    FAIL() << "no error";
  } catch (const trace::TraceError& e) {
    EXPECT_EQ(e.offset(), at) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
  }
}

TEST(FollowTail, AnotherProgramsFileIsRefusedAtByteZero) {
  test::TempDir dir;
  put(dir.path() / "kineto.json", "{\"schemaVersion\": 1, \"traceEvents\": [\n");
  analysis::TraceTail tail(dir.path() / "kineto.json");
  try {
    tail.poll();
    FAIL() << "no error";
  } catch (const trace::TraceError& e) {
    EXPECT_EQ(e.offset(), 0u);
    EXPECT_NE(std::string(e.what()).find("not a shardscope trace"), std::string::npos) << e.what();
  }
}

TEST(Follower, AFileWithNoStepRangeIsAnErrorNotAGrowingBuffer) {
  test::TempDir dir;
  written(dir.path() / "trace.rank0.json", false);  // 5 events, none a step
  analysis::Follower few(dir.path(), 4);
  try {
    few.poll();
    FAIL() << "no error";
  } catch (const trace::TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("no \"step\" range in its first 4 events"), std::string::npos) << e.what();
  }
  analysis::Follower enough(dir.path(), 5);
  EXPECT_TRUE(enough.poll().empty());
  EXPECT_TRUE(enough.done());  // complete, and no step in it
}

// The golden two-rank trainer run (3 steps a rank), written into a folder a few lines at a time as the
// writer would: a step is handed out only once both files hold two later steps (or are complete), and the
// figures equal the report's on the finished files.
TEST(Follower, StepsLandAsTheFilesGrowWithTheReportsFigures) {
  const fs::path run = fs::path(SHARDSCOPE_SOURCE_DIR) / "tests/golden/trainer_cpu_2ranks/pre";
  const analysis::AnalysedRun report = analysis::analyse_run({run.string()}, {});
  ASSERT_EQ(report.report.ranks.size(), 2u);
  test::TempDir dir;
  std::vector<std::string> text;
  std::vector<size_t> written(2, 0);
  for (int r = 0; r < 2; ++r) text.push_back(gunzip(slurp(run / ("trace.rank" + std::to_string(r) + ".json.gz"))));
  // The step records in each file, by where their line ends.
  auto step_records_in = [&](int r) {
    int n = 0;
    for (size_t at = text[r].find("\"name\":\"step\""); at < written[r]; at = text[r].find("\"name\":\"step\"", at + 1))
      n += text[r].find('\n', at) < written[r] ? 1 : 0;
    return n;
  };
  analysis::Follower follower(dir.path());
  std::vector<analysis::FollowedStep> seen;
  for (size_t chunk = 0; !follower.done(); ++chunk) {
    ASSERT_LT(chunk, 10000u) << "never done";
    for (int r = 0; r < 2; ++r) {
      const size_t n = std::min<size_t>(997, text[r].size() - written[r]);  // cuts land mid-record
      put(dir.path() / ("trace.rank" + std::to_string(r) + ".json"), std::string_view(text[r]).substr(written[r], n),
          true);
      written[r] += n;
    }
    for (analysis::FollowedStep& s : follower.poll()) {
      // Step k is out only once every rank's file holds step k+2's record, or is complete.
      for (int r = 0; r < 2; ++r)
        EXPECT_TRUE(written[r] == text[r].size() || step_records_in(r) >= int(s.number) + 3)
            << "step " << s.number << " rank " << r << " at " << written[r];
      seen.push_back(std::move(s));
    }
  }
  ASSERT_EQ(seen.size(), 3u);
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].number, int64_t(i));
    ASSERT_EQ(seen[i].ranks.size(), 2u);
    for (int r = 0; r < 2; ++r) {
      const auto& row = report.report.ranks[r].steps.at(i);
      EXPECT_EQ(seen[i].ranks[r].rank, r);
      EXPECT_EQ(seen[i].ranks[r].m.window_ns, row.m.window_ns) << "step " << i << " rank " << r;
      EXPECT_EQ(seen[i].ranks[r].m.comm_ns, row.m.comm_ns) << "step " << i << " rank " << r;
      EXPECT_EQ(seen[i].ranks[r].m.exposed_ns(), row.m.exposed_ns()) << "step " << i << " rank " << r;
      EXPECT_EQ(seen[i].ranks[r].m.compute_ns, row.m.compute_ns) << "step " << i << " rank " << r;
    }
  }
  // The late rank, from the report's own matching over the whole run: each instance (the n-th collective
  // of its kind) put in the step that issued rank 0's n-th collective of that kind.
  const model::Rank& r0 = report.trace.ranks.at(0);
  std::map<model::CollectiveKind, std::vector<std::pair<int64_t, int64_t>>> by_kind;  // (start, step number)
  for (const model::Track& t : r0.tracks)
    for (const model::Event& e : t.events)
      if (e.cls == model::IntervalClass::Communication && e.coll != model::CollectiveKind::None)
        by_kind[e.coll].push_back({e.ts_ns, e.step >= 0 ? r0.steps[size_t(e.step)].number : -1});
  for (auto& [kind, v] : by_kind) std::sort(v.begin(), v.end());
  std::map<int64_t, std::map<int, size_t>> last;  // step -> rank -> instances it arrived last at
  std::map<int64_t, size_t> instances;
  for (const metrics::StragglerInstance& in : report.report.stragglers.instances) {
    const int64_t step = by_kind.at(in.kind).at(in.ordinal).second;
    ++last[step][in.last_rank];
    ++instances[step];
  }
  for (const auto& s : seen) {
    EXPECT_EQ(s.instances, instances[s.number]) << "step " << s.number;
    ASSERT_TRUE(s.late_rank.has_value()) << "step " << s.number;
    int worst = -1;
    size_t most = 0;
    for (const auto& [rank, n] : last[s.number])
      if (n > most) worst = rank, most = n;
    EXPECT_EQ(*s.late_rank, worst) << "step " << s.number;
    EXPECT_EQ(s.late_count, most) << "step " << s.number;
  }
}

}  // namespace
}  // namespace shardscope
