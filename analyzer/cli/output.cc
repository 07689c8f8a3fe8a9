#include "analyzer/cli/output.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace shardscope::cli {

bool write_output(const std::string& output, const std::string& text, std::ostream& out, std::ostream& err) {
  if (output.empty() || output == "-") {
    out << text;
    return bool(out);
  }
  std::ofstream f(output, std::ios::binary | std::ios::trunc);
  if (f) f << text;
  if (!f) {
    err << "shardscope: error: cannot write " << output << ": " << std::strerror(errno) << "\n";
    return false;
  }
  return true;
}

void print_warnings(const std::vector<std::string>& warnings, std::ostream& err) {
  for (const std::string& w : warnings) err << "shardscope: warning: " << w << "\n";
}

}  // namespace shardscope::cli
