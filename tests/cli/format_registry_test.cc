// One descriptor per format (plugins/api/format.h): a toy format added through the registry alone, which no
// other code names, is found by the loader in a directory, described by `inspect`, listed in the help, and
// the built-in formats' descriptors say what the loader, `inspect` and `summarize` used to spell out.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analyzer/analysis/summary_file.h"
#include "analyzer/cli/inspect.h"
#include "analyzer/cli/summarize.h"
#include "plugins/load/load.h"
#include "tracer/format/error.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"
#include "tests/support/toy_format.h"

namespace shardscope::test {
namespace {

namespace fs = std::filesystem;

TEST(FormatRegistry, AToyFormatLoadsFromADirectory) {
  plugins::Registry reg = registry_with_toy();
  TempDir d;
  write_file(d.path() / "run.toy", "TOYTRACE\ngemm 1000 500\nsoftmax 2000 100\n");
  write_file(d.path() / "notes.txt", "not a trace, not listed");
  EXPECT_EQ(plugins::expand_inputs({d.path()}, &reg), std::vector<fs::path>{d.path() / "run.toy"});
  plugins::LoadResult r = plugins::load({d.path()}, {.registry = &reg});
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  EXPECT_EQ(r.trace.ranks[0].format, "toytrace");
  EXPECT_EQ(r.trace.ranks[0].event_count(), 2u);
  // Without the toy format, the directory holds no trace file.
  plugins::Registry builtins = plugins::Registry::with_builtins();
  EXPECT_THROW(plugins::expand_inputs({d.path()}, &builtins), trace::TraceError);
}

TEST(FormatRegistry, InspectDescribesAToyFile) {
  plugins::Registry reg = registry_with_toy();
  TempDir d;
  const fs::path toy = d.path() / "run.toy";
  write_file(toy, "TOYTRACE\ngemm 1000 500\nsoftmax 2000 100\n");
  std::ostringstream out, err;
  ASSERT_EQ(cli::inspect({toy.string()}, true, out, err, &reg), 0) << err.str();
  nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_EQ(j.size(), 1u) << out.str();
  EXPECT_EQ(j[0]["format"], "toytrace");
  EXPECT_EQ(j[0]["events"], 2);
  std::ostringstream text, terr;
  EXPECT_EQ(cli::inspect({toy.string()}, false, text, terr, &reg), 0) << terr.str();
  EXPECT_NE(text.str().find("(toytrace)"), std::string::npos) << text.str();
}

TEST(FormatRegistry, TheHelpListsEveryFormat) {
  plugins::Registry reg = registry_with_toy();
  reg.add_format(analysis::summary_format());
  const std::string help = plugins::formats_text(reg.formats());
  for (const char* said : {"toy traces (.toy)", "shardscope traces (.json)", "Nsight Systems SQLite exports (.sqlite)",
                           "shardscope rank summaries (.sqlite)", "gzip'd (.gz)"})
    EXPECT_NE(help.find(said), std::string::npos) << said << " not in: " << help;
  // The program's help lists the formats of its registry.
  std::vector<std::string> refusals;
  const std::string builtins = plugins::formats_text(analysis::formats_registry(refusals).formats());
  RunResult shown = run({SHARDSCOPE_BIN, "--help"});
  EXPECT_EQ(shown.rc, 0);
  EXPECT_NE(shown.out.find("Trace formats: " + builtins), std::string::npos) << shown.out;
}

TEST(FormatRegistry, TheBuiltInFormatsDescribeThemselves) {
  plugins::Registry reg = plugins::Registry::with_builtins();
  reg.add_format(analysis::summary_format());
  EXPECT_EQ(reg.extensions(), (std::vector<std::string>{".json", ".sqlite"}));
  for (const char* n : {"a.json", "a.json.gz", "b.gz", "c.sqlite", "c.sqlite.gz"}) EXPECT_TRUE(reg.takes_name(n)) << n;
  for (const char* n : {"a.txt", "json", "a.sqlite.bak"}) EXPECT_FALSE(reg.takes_name(n)) << n;
  ASSERT_TRUE(reg.format_named("nsys"));
  EXPECT_TRUE(reg.format_named("nsys")->several_ranks);
  EXPECT_FALSE(reg.format_named("kineto")->several_ranks);
  EXPECT_FALSE(reg.format_named("kineto")->lists_events);  // its ranks, as the loader makes them
  EXPECT_TRUE(reg.format_named("shardscope")->lists_events);
  // A summary is sniffed by its magic, an Nsight export by its importer (which claims every SQLite file).
  EXPECT_EQ(reg.sniff(std::string("SQLite format 3\0rest", 20))->name, "nsys");
  EXPECT_EQ(reg.by_name("run.sqlite.gz").size(), 2u);  // nsys and summary
  // The summary's name strips what the formats name, as it always did.
  const std::vector<std::string> ext = reg.extensions();
  EXPECT_EQ(cli::summary_name("/x/trace.rank3.json.gz", -1, ext), "trace.rank3.sqlite");
  EXPECT_EQ(cli::summary_name("/x/report.sqlite.gz", 2, ext), "report.rank2.sqlite");
  EXPECT_EQ(cli::summary_name("/x/rank0.pt.trace.json", -1, ext), "rank0.pt.trace.sqlite");
}

}  // namespace
}  // namespace shardscope::test
