// The summary file's row tables (summary_file.cc), each declared once as its columns: name, SQL type and
// the value a row gives. The CREATE TABLE statements, the INSERTs and the binding all come from these lists.
// The tables are for people querying a summary with sqlite3; the report itself travels in the report record.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "analyzer/analysis/summary.h"

namespace shardscope::analysis {

struct KnownInt {  // an integer that is NULL when model::kUnknown
  int64_t v;
};
using ColumnValue = std::variant<int64_t, KnownInt, double, std::optional<double>, std::string_view>;

template <class Row>
struct Column {
  const char* name;
  const char* type;  // SQLite's column type
  ColumnValue (*get)(const Row&);
  bool new_line = false;  // the statement breaks its line before this column (the schema's text is stored)
};

template <class Row>
struct Table {
  const char* name;
  std::span<const Column<Row>> columns;
};

struct PrefetchUnitRow {
  int64_t step;
  const metrics::UnitPrefetch* unit;
};

extern const Table<report::StepRow> kStepsTable;
extern const Table<CollectiveRecord> kCollectivesTable;
extern const Table<metrics::CollectiveStats> kCollectiveStatsTable;
extern const Table<PrefetchUnitRow> kPrefetchUnitsTable;
extern const Table<metrics::MemoryRow> kMemoryTable;

// "CREATE TABLE name(col TYPE, ...);\n" and "INSERT INTO name VALUES (?,...)".
template <class Row>
std::string create_statement(const Table<Row>& t) {
  const std::string head = std::string("CREATE TABLE ") + t.name + "(";
  std::string s = head;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (i > 0) s += t.columns[i].new_line ? ",\n" + std::string(head.size(), ' ') : ", ";
    s += std::string(t.columns[i].name) + " " + t.columns[i].type;
  }
  return s + ");\n";
}
template <class Row>
std::string insert_statement(const Table<Row>& t) {
  std::string s = std::string("INSERT INTO ") + t.name + " VALUES (";
  for (size_t i = 0; i < t.columns.size(); ++i) s += i ? ",?" : "?";
  return s + ")";
}

}  // namespace shardscope::analysis
