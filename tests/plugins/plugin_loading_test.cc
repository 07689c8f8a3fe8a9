// Third-party importers from SHARDSCOPE_PLUGIN_PATH: one built for this ABI loads and reads its format;
// one built for another ABI version, and a library that is no plugin, are refused with a clear message.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "plugins/load/load.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

TEST(PluginLoading, GoodPluginLoadsWrongAbiIsRefused) {
  plugins::Registry reg = plugins::Registry::with_builtins();
  std::vector<std::string> refusals;
  reg.load_plugins(std::string(TOY_PLUGIN) + ":" + TOY_PLUGIN_BAD_ABI + ":" + TOY_PLUGIN_OLD_ABI + ":/nonexistent/dir",
                   refusals);
  ASSERT_EQ(refusals.size(), 3u);
  std::string all = refusals[0] + "\n" + refusals[1] + "\n" + refusals[2];
  EXPECT_NE(all.find("built for importer ABI version 999, this shardscope needs version 6"), std::string::npos) << all;
  // A plugin of the ABI before read_ranks and reads_file is refused rather than called through them.
  EXPECT_NE(all.find(std::string(TOY_PLUGIN_OLD_ABI) +
                     ": refused: built for importer ABI version 3, this shardscope needs version 6"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("rebuild"), std::string::npos) << all;
  EXPECT_NE(all.find("/nonexistent/dir: no such plugin"), std::string::npos) << all;
  auto names = reg.names();
  EXPECT_EQ(names.front(), "toy");  // plugins first: a plugin may claim a format

  test::TempDir d;
  std::ofstream(d.path() / "run.json") << "TOY\ngemm 1000 500\nsoftmax 2000 100\n";
  plugins::LoadResult r = plugins::load({d.path() / "run.json"}, {.registry = &reg});
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  EXPECT_EQ(r.trace.ranks[0].format, "toy");
  EXPECT_EQ(r.trace.ranks[0].event_count(), 2u);

  // Asked for args, a plugin that keeps none (built before args existed) still loads: its table is empty.
  plugins::LoadResult with_args = plugins::load({d.path() / "run.json"}, {.registry = &reg, .keep_args = true});
  ASSERT_EQ(with_args.trace.ranks.size(), 1u);
  EXPECT_EQ(with_args.trace.ranks[0].event_count(), 2u);
  ASSERT_NE(with_args.trace.args_of(0), nullptr);
  EXPECT_TRUE(with_args.trace.args_of(0)->empty());
  EXPECT_TRUE(with_args.trace.args_of(0)->of(0, 0).empty());

  // One file, several ranks (ABI 4's read_ranks): each is a rank of the run, in its own number's place.
  std::ofstream(d.path() / "two.json") << "TOY\nrank 1\ngemm 1000 500\nrank 0\nsoftmax 2000 100\nsoftmax 3000 100\n";
  plugins::LoadResult two = plugins::load({d.path() / "two.json"}, {.registry = &reg});
  ASSERT_EQ(two.trace.ranks.size(), 2u);
  EXPECT_EQ(two.trace.ranks[0].rank, 0);
  EXPECT_EQ(two.trace.ranks[0].event_count(), 2u);
  EXPECT_EQ(two.trace.ranks[1].rank, 1);
  EXPECT_EQ(two.trace.ranks[1].event_count(), 1u);
}

TEST(PluginLoading, TheCliUsesShardscopePluginPath) {
  test::TempDir d;
  std::ofstream(d.path() / "run.json") << "TOY\ngemm 1000 500\n";
  auto without = test::run({SHARDSCOPE_BIN, "report", (d.path() / "run.json").string()});
  EXPECT_EQ(without.rc, 2);
  EXPECT_NE(without.err.find("unknown format"), std::string::npos) << without.err;
  setenv("SHARDSCOPE_PLUGIN_PATH", (std::string(TOY_PLUGIN) + ":" + TOY_PLUGIN_BAD_ABI).c_str(), 1);
  auto with = test::run({SHARDSCOPE_BIN, "report", (d.path() / "run.json").string()});
  unsetenv("SHARDSCOPE_PLUGIN_PATH");
  EXPECT_EQ(with.rc, 0) << with.err;
  EXPECT_NE(with.out.find("(toy,"), std::string::npos) << with.out;
  EXPECT_NE(with.err.find("refused"), std::string::npos) << with.err;
}

// A plugin's format, described by the plugin alone (plugins/api/format.h): the help lists it, a directory
// listing takes its files, `inspect` reads them through it.
TEST(PluginLoading, APluginDescribesItsFormat) {
  plugins::Registry reg = plugins::Registry::with_builtins();
  std::vector<std::string> refusals;
  reg.load_plugins(TOY_PLUGIN, refusals);
  ASSERT_TRUE(refusals.empty());
  std::optional<plugins::Format> toy = reg.format_named("toy");
  ASSERT_TRUE(toy);
  EXPECT_EQ(toy->extensions, std::vector<std::string>{".toy"});
  test::TempDir d;
  std::ofstream(d.path() / "run.toy") << "TOY\ngemm 1000 500\n";
  setenv("SHARDSCOPE_PLUGIN_PATH", TOY_PLUGIN, 1);
  auto help = test::run({SHARDSCOPE_BIN, "--help"});
  auto report = test::run({SHARDSCOPE_BIN, "report", d.path().string()});
  auto inspect = test::run({SHARDSCOPE_BIN, "inspect", (d.path() / "run.toy").string()});
  unsetenv("SHARDSCOPE_PLUGIN_PATH");
  EXPECT_NE(help.out.find("toy plugin traces (.toy)"), std::string::npos) << help.out;
  EXPECT_EQ(report.rc, 0) << report.err;
  EXPECT_NE(report.out.find("(toy,"), std::string::npos) << report.out;
  EXPECT_EQ(inspect.rc, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("(toy)"), std::string::npos) << inspect.out;
  // Without the plugin, the directory holds no trace file.
  auto without = test::run({SHARDSCOPE_BIN, "report", d.path().string()});
  EXPECT_EQ(without.rc, 2);
  EXPECT_NE(without.err.find("no trace files"), std::string::npos) << without.err;
}

}  // namespace
