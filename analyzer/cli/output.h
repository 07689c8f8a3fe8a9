// Writing a command's result to stdout or to a file (-o), and printing load warnings the same way everywhere.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace shardscope::cli {

// Writes text to `output` ("-" or empty: `out`). Returns false (message on err) when it cannot be written.
bool write_output(const std::string& output, const std::string& text, std::ostream& out, std::ostream& err);

// "shardscope: warning: ..." and "shardscope: error: ...": one line each, control characters escaped and at
// most trace::kMaxLineBytes long (tracer/format/printable.h).
void print_warnings(const std::vector<std::string>& warnings, std::ostream& err);
void print_error(std::ostream& err, const std::string& message);

// Text output with every control character but the line breaks shown as \xNN (C1 controls such as U+0085
// as \uNNNN): a terminal escape that a trace put in a name reaches the terminal as text.
std::string shown_as_text(std::string text);

// After a command: stdout that could not be written (a full disk, a closed pipe, /dev/full) is an error, said
// once. Returns the exit code: `rc`, or 2 when stdout failed.
int finish_stdout(std::ostream& out, std::ostream& err, int rc);

}  // namespace shardscope::cli
