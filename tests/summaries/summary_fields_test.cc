// Every field a result declares (analyzer/analysis/summary_fields.h) is carried by summaries: each is set to
// a value of its own, not its default, and must come back the same through the codec (JSON, CBOR, as MPI
// sends it) and through a summary file. A field added to a struct and not to its list fails the build
// (fields_cover_struct); one listed but lost on the way fails here.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "analyzer/analysis/summary_codec.h"
#include "analyzer/analysis/summary_fields.h"
#include "analyzer/analysis/summary_file.h"

namespace shardscope::analysis {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

template <class T>
inline constexpr bool kIsVector = false;
template <class T>
inline constexpr bool kIsVector<std::vector<T>> = true;
template <class T>
inline constexpr bool kIsMap = false;
template <class K, class V>
inline constexpr bool kIsMap<std::map<K, V>> = true;
template <class T>
inline constexpr bool kIsOptional = false;
template <class T>
inline constexpr bool kIsOptional<std::optional<T>> = true;

// Sets v, and every field under it, to a value no other field has and no default is: n counts them.
template <class T>
void fill(T& v, int64_t& n) {
  if constexpr (Described<T>) {
    for_each_field<T>([&](const auto& f) { fill(v.*f.member, n); });
  } else if constexpr (std::is_same_v<T, bool>) {
    v = !v;
  } else if constexpr (std::is_enum_v<T>) {
    v = T(int(v) == 1 ? 2 : 1);
  } else if constexpr (std::is_arithmetic_v<T>) {
    T x = T(++n);
    if (x == v) x = T(++n);
    v = std::is_floating_point_v<T> ? T(x + 0.5) : x;
  } else if constexpr (std::is_same_v<T, std::string>) {
    v = "field " + std::to_string(++n);
  } else if constexpr (std::is_same_v<T, json>) {
    v = {{"field", ++n}};
  } else if constexpr (kIsOptional<T>) {
    typename T::value_type x{};
    fill(x, n);
    v = x;
  } else if constexpr (kIsVector<T>) {
    v.resize(1);
    fill(v[0], n);
  } else if constexpr (kIsMap<T>) {
    typename T::key_type k{};
    fill(k, n);
    fill(v[k], n);
  } else {
    static_assert(sizeof(T) == 0, "a field type fill() does not know");
  }
}

// Every field under v differs from a default-constructed one: fill() reached it, so the comparisons below
// cover it. `path` names the field that did not.
template <class T>
void expect_all_set(const T& v, const std::string& path) {
  if constexpr (Described<T>) {
    const T defaults{};
    for_each_field<T>([&](const auto& f) {
      const auto& m = v.*f.member;
      using M = std::remove_cvref_t<decltype(m)>;
      const std::string at = path + "." + f.name;
      EXPECT_NE(json(m), json(defaults.*f.member)) << at << " was left at its default";
      if constexpr (Described<M>) expect_all_set(m, at);
      else if constexpr (kIsVector<M>) {
        if constexpr (Described<typename M::value_type>)
          if (!m.empty()) expect_all_set(m[0], at + "[0]");
      } else if constexpr (kIsOptional<M>) {
        if constexpr (Described<typename M::value_type>)
          if (m) expect_all_set(*m, at);
      }
    });
  }
}

RankSummary filled_summary() {
  RankSummary s;
  int64_t n = 0;
  fill(s.report, n);
  fill(s.arrivals, n);
  fill(s.header, n);
  // What the file keeps once, in meta, and the record follows.
  s.header.rank = s.report.rank = s.report.prefetch.rank = s.report.memory.rank = 3;
  s.header.source = s.report.source;
  s.warnings = {"a warning"};
  s.trace_bytes = 12345;
  s.device_time = {{"kernel", 77}};
  return s;
}

TEST(SummaryFields, EveryDeclaredFieldIsSetByTheTest) {
  const RankSummary s = filled_summary();
  expect_all_set(s.report, "report");
  expect_all_set(s.arrivals, "arrivals");
  expect_all_set(s.header, "header");
}

TEST(SummaryFields, EveryDeclaredFieldComesBackThroughTheCodec) {
  const RankSummary s = filled_summary();
  const json sent = encode(s);
  const RankSummary back = decode_summary(json::from_cbor(json::to_cbor(sent)));
  EXPECT_EQ(encode(back), sent);
}

TEST(SummaryFields, EveryDeclaredFieldComesBackThroughASummaryFile) {
  const fs::path dir = fs::temp_directory_path() / ("shardscope-summary-fields-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const RankSummary s = filled_summary();
  write_summary(dir / "rank3.sqlite", s);
  const RankSummary back = read_summary(dir / "rank3.sqlite", 0);
  fs::remove_all(dir);
  EXPECT_EQ(encode(back.report), encode(s.report));
  json header = s.header;
  header["file"] = (dir / "rank3.sqlite").string();  // a summary read names its own file: not stored, known
  EXPECT_EQ(json(back.header), header);
  EXPECT_EQ(back.device_time, s.device_time);
  EXPECT_EQ(back.warnings, s.warnings);
  EXPECT_EQ(back.trace_bytes, s.trace_bytes);
}

TEST(SummaryFields, EachListNamesEachFieldOnce) {
  auto distinct = [](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<std::string> names;
    for_each_field<T>([&](const auto& f) { names.push_back(f.name); });
    const size_t all = names.size();
    std::sort(names.begin(), names.end());
    return std::unique(names.begin(), names.end()) == names.end() && all > 0;
  };
  EXPECT_TRUE(distinct(std::type_identity<report::RankReport>{}));
  EXPECT_TRUE(distinct(std::type_identity<metrics::RankPrefetch>{}));
  EXPECT_TRUE(distinct(std::type_identity<metrics::UnitPrefetch>{}));
  EXPECT_TRUE(distinct(std::type_identity<metrics::RankMemory>{}));
  EXPECT_TRUE(distinct(std::type_identity<metrics::RankArrivals>{}));
}

}  // namespace
}  // namespace shardscope::analysis
