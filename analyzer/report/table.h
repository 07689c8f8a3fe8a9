// A table that prints as aligned text or as a Markdown table: the text and md reports share every table.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace shardscope::report {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Columns from `first_right` on are numbers: right-aligned in text.
  size_t first_right = 1;
  std::string render(bool markdown, const std::string& indent) const;

 private:
  std::string render_escaped(bool markdown, const std::string& indent) const;  // cells already printable
};

// Says under a table why its "n/a" cells are n/a: cell() records one cell's reason and returns "n/a" for
// the cell; lines() gives one line per reason naming its cells, e.g. "n/a: no message size in the trace
// (MB, algbw GB/s, busbw GB/s of send_recv)" (an empty column: the row alone).
class NaNotes {
 public:
  std::string cell(const std::string& row, const std::string& column, const std::string& reason);
  // `value` when there is one, else cell(row, column, reason).
  std::string value_or(const std::string& value, const std::string& row, const std::string& column,
                       const std::string& reason) {
    return value.empty() ? cell(row, column, reason) : value;
  }
  std::vector<std::string> lines() const;
  bool empty() const { return by_reason_.empty(); }

 private:
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>
      by_reason_;  // reason -> (row, column) cells
};

}  // namespace shardscope::report
