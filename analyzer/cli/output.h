// A command's output, the same way in every command: the format asked for (--format), writing it to stdout
// or to a file (-o), load warnings, and the error tail (an exception is one error line and exit code 2).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardscope::cli {

// What a command makes, in each format it has; the one --format names is made and written.
struct Result {
  std::function<std::string(bool markdown)> text;  // text, and markdown where the command takes --format md
  std::function<nlohmann::json()> json;
  std::function<std::string()> html;   // where the command takes --format html
  std::function<std::string()> junit;  // JUnit XML, where the command takes --format junit (diff)
};

// Writes `result` in `format` (text, md, json, html, junit; CLI11 has checked the name) to `output` ("-" or empty:
// `out`): JSON with two-space indents and any invalid UTF-8 replaced, text and markdown with their control
// characters shown (shown_as_text), HTML as made (it escapes what came from a trace itself). Returns false
// (the message on err) when it cannot be written.
bool write_result(const std::string& format, const Result& result, const std::string& output, std::ostream& out,
                  std::ostream& err);

// Runs a command's body: what it throws is one "shardscope: error: ..." line on err and exit code 2.
int guarded(std::ostream& err, const std::function<int()>& body);

// Writes text to `output` ("-" or empty: `out`). Returns false (message on err) when it cannot be written.
bool write_output(const std::string& output, const std::string& text, std::ostream& out, std::ostream& err);

// The input that writing `output` would destroy: the first of `inputs` (files, and directories as the loader
// lists them) that is the same file as `output` (through a symlink or a hard link too), or "". "-" and a path
// where nothing is yet are none.
std::string input_at(const std::string& output, const std::vector<std::string>& inputs);
// One line refusing to write `output` over `input`.
std::string overwrite_refusal(const std::string& output, const std::string& input);

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
