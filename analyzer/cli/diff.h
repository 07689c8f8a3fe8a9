// `shardscope diff A B` and `diff A1 A2 -- B1 B2`: the run-level changes first, with whether each is beyond
// the runs' own noise, the --fail-on thresholds judged (exit 1 when one fails), and the per-rank and per-unit
// tables on demand.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/load/load.h"

namespace shardscope::cli {

struct DiffArgs {
  std::vector<std::string> a, b;  // each side's runs (files or directories, trace or summary files)
  std::string fail_on;            // the thresholds, "" for none
  std::string noise_floor;        // --noise-floor: "5%" or "5" (percent); "" for the default
  bool ranks = false, units = false;
  std::string format = "text", output = "-";
};

// What main puts in the place of diff's "--" before CLI11 parses (CLI11 would drop it), so that the split
// between the sides survives options written after B's runs (`A1 A2 -- B1 B2 --fail-on ...`).
inline constexpr std::string_view kSideBreak = "\x1f--";

// Splits diff's positional arguments: "A B", or each side's runs with kSideBreak before the B side's.
// Returns false (message on err) when the split leaves a side empty.
bool split_sides(const std::vector<std::string>& runs, DiffArgs& args, std::ostream& err);

// Exit 0: no threshold failed; 1: one failed beyond the noise; 2: an error, or a threshold that could not be judged.
int diff(const DiffArgs& args, std::ostream& out, std::ostream& err, const plugins::ReadRules& rules = {});

}  // namespace shardscope::cli
