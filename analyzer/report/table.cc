#include "analyzer/report/table.h"

#include <algorithm>

#include "tracer/format/printable.h"

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
    else if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '\n')
      o += ' ';
    else
      o += c;
  }
  return o;
}

}  // namespace

std::string Table::render(bool markdown, const std::string& indent) const {
  // Cells hold names from traces: a newline or a terminal escape in one is shown, not obeyed.
  Table safe = *this;
  for (auto& r : safe.rows)
    for (std::string& c : r) c = trace::printable(c);
  return safe.render_escaped(markdown, indent);
}

std::string Table::render_escaped(bool markdown, const std::string& indent) const {
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

std::string NaNotes::cell(const std::string& row, const std::string& column, const std::string& reason) {
  std::string why = reason.empty() ? "n/a" : reason;
  auto it = std::find_if(by_reason_.begin(), by_reason_.end(), [&](const auto& r) { return r.first == why; });
  if (it == by_reason_.end()) it = by_reason_.insert(by_reason_.end(), {why, {}});
  it->second.push_back({row, column});
  return "n/a";
}

std::vector<std::string> NaNotes::lines() const {
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  };
  std::vector<std::string> out;
  for (const auto& [why, cells] : by_reason_) {
    // Each row's columns, then the rows that share the same columns: "MB, busbw GB/s of send_recv, broadcast".
    std::vector<std::pair<std::string, std::vector<std::string>>> rows;
    for (const auto& [row, column] : cells) {
      auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.first == row; });
      if (it == rows.end()) it = rows.insert(rows.end(), {row, {}});
      if (std::find(it->second.begin(), it->second.end(), column) == it->second.end()) it->second.push_back(column);
    }
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // columns -> rows
    for (const auto& [row, columns] : rows) {
      std::string key = join(columns);
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
      if (it == groups.end()) it = groups.insert(groups.end(), {key, {}});
      it->second.push_back(row);
    }
    std::string where;
    for (const auto& [columns, grouped] : groups)
      where += (where.empty() ? "" : "; ") + (columns.empty() ? "" : columns + " of ") + join(grouped);
    out.push_back(why + " (" + where + ")");
  }
  return out;
}

}  // namespace shardscope::report
