// Writing a command's result to stdout or to a file (-o), and printing load warnings the same way everywhere.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace shardscope::cli {

// Writes text to `output` ("-" or empty: `out`). Returns false (message on err) when the file cannot be written.
bool write_output(const std::string& output, const std::string& text, std::ostream& out, std::ostream& err);

void print_warnings(const std::vector<std::string>& warnings, std::ostream& err);

}  // namespace shardscope::cli
