#include "analyzer/cli/follow.h"

#include <chrono>
#include <filesystem>
#include <ostream>
#include <thread>

#include <fmt/format.h>

#include "analyzer/analysis/follow.h"
#include "analyzer/cli/output.h"
#include "analyzer/report/follow_render.h"

namespace shardscope::cli {

namespace {
// How often the files are looked at: the tracer flushes every 100 ms, so a step shows within a few tenths.
constexpr auto kPoll = std::chrono::milliseconds(200);
}  // namespace

int report_follow(const std::string& dir, const std::string& format, double timeout_s, std::ostream& out,
                  std::ostream& err) {
  if (format != "text" && format != "json") {
    print_error(err, "report --follow: --format " + format + " is not a line format; use text or json");
    return 2;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    print_error(err, "report --follow: " + dir + " is not a directory (the job's trace folder)");
    return 2;
  }
  return guarded(err, [&] {
    analysis::Follower follower(dir);
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    size_t steps = 0;
    for (;;) {
      for (const analysis::FollowedStep& s : follower.poll()) {
        out << (format == "json" ? report::follow_json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                                 : shown_as_text(report::follow_line(s)))
            << '\n';
        out.flush();  // a line a step, as it lands: a pipe must not hold it back
        ++steps;
      }
      if (follower.done()) {
        err << fmt::format("shardscope: {} rank file(s) complete, {} step(s)\n", follower.files(), steps);
        return 0;
      }
      if (timeout_s > 0 && std::chrono::steady_clock::now() >= until) {
        const std::string of = follower.world_size() > 0 ? fmt::format(" of the job's {}", follower.world_size()) : "";
        print_error(err, fmt::format("report --follow: stopped after --follow-timeout {} s: {} rank file(s) found{}, "
                                     "not every one complete",
                                     timeout_s, follower.files(), of));
        return 1;
      }
      std::this_thread::sleep_for(kPoll);
    }
  });
}

}  // namespace shardscope::cli
