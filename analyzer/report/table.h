// A table that prints as aligned text or as a Markdown table: the text and md reports share every table.
#pragma once

#include <string>
#include <vector>

namespace shardscope::report {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Columns from `first_right` on are numbers: right-aligned in text.
  size_t first_right = 1;
  std::string render(bool markdown, const std::string& indent) const;
};

}  // namespace shardscope::report
