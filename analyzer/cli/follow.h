// `shardscope report --follow DIR [--format text|json] [--follow-timeout S]`: a running job's steps, one line
// each as every rank finishes it (analysis/follow.h), until every rank's file is complete.
#pragma once

#include <iosfwd>
#include <string>

namespace shardscope::cli {

// Returns 0 once every rank's file is complete, 1 when `timeout_s` (> 0) passed first, 2 on an error (the
// message on err). `format`: "text" or "json" (one object a line); others are refused.
int report_follow(const std::string& dir, const std::string& format, double timeout_s, std::ostream& out,
                  std::ostream& err);

}  // namespace shardscope::cli
