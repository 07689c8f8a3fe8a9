// The first bytes shared by several formats: gzip, which the loader inflates whatever it holds, and SQLite,
// which both Nsight Systems exports and rank summaries are. One copy each, for the importers, the loader and
// the analysis.
#pragma once

#include <string_view>

namespace shardscope::plugins {

inline constexpr std::string_view kGzipMagic{"\x1f\x8b", 2};
inline constexpr std::string_view kGzipExtension = ".gz";
inline constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};  // with its NUL

inline bool is_gzip(std::string_view head) { return head.starts_with(kGzipMagic); }
inline bool is_sqlite(std::string_view head) { return head.starts_with(kSqliteMagic); }

}  // namespace shardscope::plugins
