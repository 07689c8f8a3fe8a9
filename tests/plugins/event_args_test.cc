// Both importers keep each event's args (LoadOptions::keep_args) with the event they belong to: every
// event's args, read back from the table, equal those in the file (matched by name and args, so an arg
// that lands on the wrong event after the importer sorts its tracks fails), and known ones read as typed.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "plugins/load/load.h"

namespace fs = std::filesystem;
using namespace shardscope;
using nlohmann::json;

namespace {

const fs::path kRoot = fs::path(SHARDSCOPE_SOURCE_DIR);

json read_json(const fs::path& p) {
  gzFile f = gzopen(p.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + p.string());
  std::string text;
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  gzclose(f);
  return json::parse(text);
}

// An arg as a JSON value: how the test compares the table with the file.
json to_json(const model::Rank& r, const model::ArgValue& v) {
  switch (v.kind) {
    case model::ArgKind::Int: return v.i;
    case model::ArgKind::Double: return v.d;
    case model::ArgKind::Bool: return v.i != 0;
    case model::ArgKind::String: return std::string(r.str(v.s));
    case model::ArgKind::Json: return json::parse(r.str(v.s));
  }
  return nullptr;
}

// name + args of every event of the file with args, as text; multiset.
std::multiset<std::string> file_args(const json& doc, const std::set<std::string>& phases) {
  std::multiset<std::string> out;
  for (const json& e : doc["traceEvents"])
    // Events that name their thread by number (Kineto's "PyTorch Profiler" span names it by text: not an event).
    if (phases.count(e.value("ph", "")) && e.contains("args") && e["args"].is_object() && !e["args"].empty() &&
        e["pid"].is_number() && e["tid"].is_number())
      out.insert(e.value("name", "") + " " + e["args"].dump());
  return out;
}

std::multiset<std::string> model_args(const plugins::LoadResult& r, size_t* events = nullptr) {
  std::multiset<std::string> out;
  const model::Rank& rank = r.trace.ranks.at(0);
  const model::EventArgs& args = *r.trace.args_of(0);
  for (uint32_t t = 0; t < rank.tracks.size(); ++t)
    for (uint32_t i = 0; i < rank.tracks[t].events.size(); ++i) {
      if (events) ++*events;
      std::vector<model::Arg> a = args.of(t, i);
      if (a.empty()) continue;
      json o = json::object();
      for (const model::Arg& x : a) o[std::string(rank.str(x.key))] = to_json(rank, x.value);
      out.insert(std::string(rank.str(rank.tracks[t].events[i].name)) + " " + o.dump());
    }
  return out;
}

// What one multiset has that the other lacks, both ways (the first few): readable where a plain
// comparison prints thousands of lines.
std::string difference(const std::multiset<std::string>& got, const std::multiset<std::string>& want) {
  std::vector<std::string> extra, missing;
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::string out =
      std::to_string(extra.size()) + " in the table only, " + std::to_string(missing.size()) + " in the file only";
  for (size_t i = 0; i < std::min<size_t>(3, extra.size()); ++i) out += "\n  table: " + extra[i].substr(0, 300);
  for (size_t i = 0; i < std::min<size_t>(3, missing.size()); ++i) out += "\n  file:  " + missing[i].substr(0, 300);
  return out;
}
#define EXPECT_SAME_ARGS(got, want)              \
  do {                                           \
    auto g_ = (got);                             \
    auto w_ = (want);                            \
    EXPECT_TRUE(g_ == w_) << difference(g_, w_); \
  } while (0)

// The first event named `name` (with args); its track and index.
std::optional<std::pair<uint32_t, uint32_t>> find_event(const model::Rank& r, const model::EventArgs& args,
                                                        std::string_view name, std::string_view key) {
  model::StringId n = r.strings.find(name), k = r.strings.find(key);
  for (uint32_t t = 0; t < r.tracks.size(); ++t)
    for (uint32_t i = 0; i < r.tracks[t].events.size(); ++i)
      if (r.tracks[t].events[i].name == n && args.find(t, i, k)) return std::pair(t, i);
  return std::nullopt;
}

TEST(EventArgs, ShardscopeImporterKeepsEveryArgWithItsEvent) {
  const fs::path file = kRoot / "tests/golden/gpu_demo/gpu_demo.json.gz";
  plugins::LoadResult r = plugins::load({file}, {.threads = 1, .keep_args = true});
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  ASSERT_NE(r.trace.args_of(0), nullptr);
  const model::EventArgs& args = *r.trace.args_of(0);
  ASSERT_FALSE(args.empty());
  std::multiset<std::string> want = file_args(read_json(file), {"X", "i"});
  std::multiset<std::string> got = model_args(r);
  EXPECT_GT(want.size(), 600u);
  EXPECT_SAME_ARGS(got, want);

  // A kernel's grid (nested: its JSON text) and registers (an integer), an NVTX range's payload.
  const model::Rank& rank = r.trace.ranks[0];
  json doc = read_json(file);
  json kernel;
  for (const json& e : doc["traceEvents"])
    if (e.value("cat", "") == "kernel") kernel = e;
  ASSERT_TRUE(kernel.is_object());
  auto k = find_event(rank, args, kernel["name"].get<std::string>(), "grid");
  ASSERT_TRUE(k);
  std::optional<model::ArgValue> grid = args.find(k->first, k->second, rank.strings.find("grid"));
  ASSERT_TRUE(grid);
  EXPECT_EQ(grid->kind, model::ArgKind::Json);
  EXPECT_EQ(json::parse(rank.str(grid->s)), kernel["args"]["grid"]);
  std::optional<model::ArgValue> regs = args.find(k->first, k->second, rank.strings.find("registers_per_thread"));
  ASSERT_TRUE(regs);
  EXPECT_EQ(regs->kind, model::ArgKind::Int);
  EXPECT_EQ(regs->i, kernel["args"]["registers_per_thread"].get<int64_t>());

  // Not asked for: no table, and the same events.
  plugins::LoadResult plain = plugins::load({file}, {.threads = 1});
  EXPECT_EQ(plain.trace.args_of(0), nullptr);
  EXPECT_EQ(plain.trace.ranks[0].event_count(), rank.event_count());
}

TEST(EventArgs, KinetoImporterKeepsEveryArgWithItsEvent) {
  const fs::path file = kRoot / "tests/fuzz/corpus/fuzz_kineto_importer/h100_nccl2_rank0.json";
  plugins::LoadResult r = plugins::load({file}, {.threads = 1, .keep_args = true});
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  const model::Rank& rank = r.trace.ranks[0];
  const model::EventArgs& args = *r.trace.args_of(0);
  json doc = read_json(file);
  EXPECT_SAME_ARGS(model_args(r), file_args(doc, {"X"}));

  // A kernel's grid (its JSON text) and correlation.
  json kernel;
  for (const json& e : doc["traceEvents"])
    if (e.value("cat", "") == "kernel") kernel = e;
  ASSERT_TRUE(kernel.is_object());
  auto k = find_event(rank, args, kernel["name"].get<std::string>(), "correlation");
  ASSERT_TRUE(k);
  std::optional<model::ArgValue> corr = args.find(k->first, k->second, rank.strings.find("correlation"));
  ASSERT_TRUE(corr);
  EXPECT_EQ(corr->kind, model::ArgKind::Int);
  std::optional<model::ArgValue> grid = args.find(k->first, k->second, rank.strings.find("grid"));
  ASSERT_TRUE(grid);
  EXPECT_EQ(grid->kind, model::ArgKind::Json);
  // The kernel with this correlation in the file has this grid.
  for (const json& e : doc["traceEvents"]) {
    if (e.value("cat", "") == "kernel" && e["args"]["correlation"] == corr->i) {
      EXPECT_EQ(json::parse(rank.str(grid->s)), e["args"]["grid"]);
    }
  }
  // Keeping args changes nothing else the importer reads.
  plugins::LoadResult plain = plugins::load({file}, {.threads = 1});
  ASSERT_EQ(plain.trace.ranks[0].tracks.size(), rank.tracks.size());
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    ASSERT_EQ(plain.trace.ranks[0].tracks[t].events.size(), rank.tracks[t].events.size());
    for (size_t i = 0; i < rank.tracks[t].events.size(); ++i) {
      const model::Event &a = plain.trace.ranks[0].tracks[t].events[i], &b = rank.tracks[t].events[i];
      EXPECT_EQ(
          std::tie(a.ts_ns, a.dur_ns, a.bytes, a.issued_ns, a.unit, a.group_size, a.step, a.cls, a.coll, a.flags),
          std::tie(b.ts_ns, b.dur_ns, b.bytes, b.issued_ns, b.unit, b.group_size, b.step, b.cls, b.coll, b.flags));
      EXPECT_EQ(plain.trace.ranks[0].str(a.name), rank.str(b.name));
    }
  }
}

// A collective's "In msg nelems" (PyTorch 2.x puts it on the NCCL kernel and on record_param_comms), from a
// real H100 FSDP2 run in tests/data.
TEST(EventArgs, KinetoCollectiveKeepsItsMessageSize) {
  const fs::path file = fs::path(SHARDSCOPE_DATA_DIR) / "h100_nccl2/pytorch_fsdp2/rank0.json.gz";
  ASSERT_TRUE(fs::exists(file)) << file << " is missing: tests/data holds it";
  plugins::LoadResult r = plugins::load({file}, {.threads = 1, .keep_args = true});
  const model::Rank& rank = r.trace.ranks.at(0);
  const model::EventArgs& args = *r.trace.args_of(0);
  json doc = read_json(file);
  EXPECT_SAME_ARGS(model_args(r), file_args(doc, {"X"}));
  size_t checked = 0;
  model::StringId key = rank.strings.find("In msg nelems"), ext_key = rank.strings.find("External id");
  ASSERT_NE(key, model::kNoString);
  std::map<int64_t, int64_t> by_ext;  // External id -> In msg nelems, from the file
  for (const json& e : doc["traceEvents"])
    if (e.value("ph", "") == "X" && e.contains("args") && e["args"].contains("In msg nelems") &&
        e["args"].contains("External id"))
      by_ext[e["args"]["External id"].get<int64_t>()] = e["args"]["In msg nelems"].get<int64_t>();
  ASSERT_FALSE(by_ext.empty());
  for (uint32_t t = 0; t < rank.tracks.size(); ++t)
    for (uint32_t i = 0; i < rank.tracks[t].events.size(); ++i) {
      std::optional<model::ArgValue> n = args.find(t, i, key), ext = args.find(t, i, ext_key);
      if (!n || !ext) continue;
      EXPECT_EQ(n->i, by_ext.at(ext->i));
      ++checked;
    }
  EXPECT_GE(checked, by_ext.size());
}

// Kineto's CPU ops carry "External id" and shapes; a sampled HTA trace with two ranks loads both tables in
// rank order.
TEST(EventArgs, KinetoTwoRanksKeepTheirOwnTables) {
  const fs::path dir = kRoot / "tests/golden/kineto_two_ranks";
  plugins::LoadResult r = plugins::load({dir / "sampled_rank-1.json.gz", dir / "sampled_rank-0.json.gz"},
                                        {.threads = 2, .keep_args = true});
  ASSERT_EQ(r.trace.ranks.size(), 2u);
  ASSERT_EQ(r.trace.args.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    const model::Rank& rank = r.trace.ranks[k];
    EXPECT_EQ(rank.rank, int(k));
    json doc = read_json(rank.source);
    plugins::LoadResult one = plugins::load({rank.source}, {.threads = 1, .keep_args = true});
    EXPECT_SAME_ARGS(model_args(one), file_args(doc, {"X"}));
    model::StringId ext = rank.strings.find("External id");
    ASSERT_NE(ext, model::kNoString);
    size_t with_ext = 0;
    for (uint32_t t = 0; t < rank.tracks.size(); ++t)
      for (uint32_t i = 0; i < rank.tracks[t].events.size(); ++i)
        with_ext += r.trace.args[k].find(t, i, ext).has_value();
    EXPECT_GT(with_ext, 0u);
  }
}

}  // namespace
