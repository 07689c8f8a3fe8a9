#include "analyzer/report/section.h"

#include "analyzer/report/definitions.h"
#include "tracer/format/printable.h"

namespace shardscope::report {

void TextOut::heading(int level, const std::string& raw) {
  const std::string s = trace::printable(raw);
  out_ += md_ ? std::string(size_t(level), '#') + " " + s + "\n\n" : s + "\n";
}

void TextOut::para(const std::string& raw) {
  const std::string s = trace::printable(raw);
  out_ += md_ ? s + "\n\n" : "  " + s + "\n";
}

void TextOut::item(const std::string& raw) { out_ += (md_ ? "- " : "  ") + trace::printable(raw) + "\n"; }

void TextOut::table(const Table& t, const NaNotes& na) {
  out_ += t.render(md_, "    ");
  if (md_) out_ += "\n";
  for (const std::string& l : na.lines()) out_ += md_ ? l + "\n\n" : "    " + l + "\n";
}

void TextOut::legend(const std::vector<std::string>& header) {
  out_ += report::legend(header, md_ ? "" : "    ") + (md_ ? "\n" : "");
}

}  // namespace shardscope::report
