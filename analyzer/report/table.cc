#include "analyzer/report/table.h"

#include <algorithm>

namespace shardscope::report {
namespace {

// Display width: UTF-8 continuation bytes take no column.
size_t width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string md_cell(const std::string& s) {
  std::string o;
  for (char c : s) {
    // Cells hold names from traces: keep them from turning into table syntax or HTML when rendered.
    if (c == '|') o += "\\|";
    else if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '\n') o += ' ';
    else o += c;
  }
  return o;
}

}  // namespace

std::string Table::render(bool markdown, const std::string& indent) const {
  std::string out;
  if (markdown) {
    auto line = [&](const std::vector<std::string>& cells) {
      out += "|";
      for (const std::string& c : cells) out += " " + md_cell(c) + " |";
      out += "\n";
    };
    line(header);
    out += "|";
    for (size_t i = 0; i < header.size(); ++i) out += i >= first_right ? "---:|" : "---|";
    out += "\n";
    for (const auto& r : rows) line(r);
    return out;
  }
  std::vector<size_t> w(header.size());
  for (size_t i = 0; i < header.size(); ++i) w[i] = width(header[i]);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], width(r[i]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l = indent;
    for (size_t i = 0; i < cells.size() && i < w.size(); ++i) {
      std::string pad(w[i] - width(cells[i]), ' ');
      l += i >= first_right ? pad + cells[i] : cells[i] + pad;
      if (i + 1 < cells.size()) l += "  ";
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
  return out;
}

}  // namespace shardscope::report
