// Every text the HTML report prints from a trace is escaped: each field gets its own hostile string (a tag
// with the field's id), and the page must show each one as text (so the field is printed and escaped) and
// none as markup. Fields: the run's path, each rank's file, a kernel name, the configured prefetch mode
// (run_config), a run_config value named in a warning, and a Kineto file's own name in the rank-guess warning.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/analyzer/trainer_trace.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using shardscope::test::run;
using shardscope::test::TempDir;
using shardscope::test::TrainerTraceOptions;
using shardscope::test::write_trainer_trace;

namespace {

std::string hostile(const std::string& field) { return "<b id=" + field + ">\"'&"; }
// The tag as text; the quotes and ampersand after it are escaped too, though a JSON value's quote is printed
// as \&quot; (the warning shows the value as JSON), so only the tag is looked for.
std::string escaped(const std::string& field) { return "&lt;b id=" + field + "&gt;"; }

TEST(HtmlEscaping, EveryTextFromATraceIsShownAsTextNeverAsMarkup) {
  TempDir d;
  const fs::path dir = d.path() / hostile("dir");
  fs::create_directories(dir);
  for (int r = 0; r < 2; ++r) {
    TrainerTraceOptions o;
    o.rank = r;
    if (r == 1) o.hostile_name = hostile("kernel");
    o.run_config_extra = {{"backward_prefetch", hostile("configured")},
                          {"comment", hostile(r == 0 ? "config0" : "config1")}};
    write_trainer_trace(dir / (hostile("file") + std::to_string(r) + ".json"), o);
  }
  auto r = run({SHARDSCOPE_BIN, "report", dir.string(), "--format", "html", "--ranks", "all", "--steps", "all"});
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* field : {"dir", "file", "kernel", "configured", "config0", "config1"})
    EXPECT_NE(r.out.find(escaped(field)), std::string::npos) << field << " is not printed, or not escaped as expected\n"
                                                             << r.out;
  EXPECT_EQ(r.out.find("<b id="), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"'&"), std::string::npos) << r.out;
}

}  // namespace
