// What the window's progress area says while a run loads, made from the loader's report (UI-free, so it is
// tested without Qt): "reading rank3.json.gz — 412 / 980 MB, 2.1 M events".
#pragma once

#include <string>

#include "plugins/load/load.h"

namespace shardscope::viewer {

// The line for `p`: the file being read (its name, not its folder), its MB parsed of its MB on disk and its
// events so far; between files, how many are done.
std::string load_status_text(const plugins::LoadProgress& p);

// The whole load's share done, in thousandths (the bar's range): bytes on disk, the files being read counted
// with their parsed share.
int load_permille(const plugins::LoadProgress& p);

}  // namespace shardscope::viewer
