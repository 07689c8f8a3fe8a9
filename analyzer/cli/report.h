// `shardscope report PATH... [--format text|md|json|html] [-o FILE|-]`
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace shardscope::cli {

// Returns the exit code: 0, or 2 when an input cannot be read (the message goes to err).
int report(const std::vector<std::string>& paths, const std::string& format, const std::string& output, std::ostream& out, std::ostream& err,
    const std::string& step_pattern = "");

}  // namespace shardscope::cli
