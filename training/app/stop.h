// How a rank stops: an error line and its exit code (fail), the step in progress recorded as aborted, and
// SIGTERM/SIGINT from a launcher turned into the same record before the signal ends the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace shardscope::train {

// Prints "shardscope-train: <rank_prefix>error: <msg>" (its first line, fit to kMaxLineChars), closes the trace and exits with `code` at once (comm
// threads may be blocked in a collective: they are not waited for).
[[noreturn]] void fail(int code, const std::string& rank_prefix, const std::string& msg);

// The rank's own record of a step that did not complete: a line on stdout beside the step lines, and one
// in the --log-json file (set_stop_context's).
void report_aborted(int step, int rank, const std::string& reason);

// What a stop signal needs to record the step in progress: set before the signals are watched.
void set_stop_context(const std::string& who, const std::string& log_path, uint32_t compute_track);
// Watches SIGTERM and SIGINT from now on (on a thread of its own: a signal handler may neither record nor print).
void watch_stop_signals(int rank);
// The step in progress, for a stop signal: begin_step at its start; end_step returns whether it was still
// in progress (false: a signal already recorded it).
void begin_step(int step, int64_t start_ns);
bool end_step();

// Every line the trainer prints is at most this long; a reason quoted inside one (libtorch's, the OS's) at
// most kMaxReasonChars, so the line keeps room for what and where.
inline constexpr size_t kMaxLineChars = 300;
inline constexpr size_t kMaxReasonChars = 200;

// The first line of an error's text.
std::string first_line(std::string s);
// An error's text quoted inside a line of ours (libtorch's, a collective's): its first line, fit to
// kMaxReasonChars.
std::string short_reason(const std::string& what);
// `s` when it fits in `max` characters; otherwise its start and end with " ... " between (the flag and what
// went wrong survive a long path in the middle).
std::string fit_line(const std::string& s, size_t max = kMaxLineChars);

}  // namespace shardscope::train
