// The viewer's keyboard map, as Help > Keyboard map lists it and docs/viewer.md repeats it. One table, so
// the help cannot drift from itself; the window's tests press each timeline key and check what it does.
#pragma once

#include <vector>

namespace shardscope::viewer {

struct KeyBinding {
  const char* keys;
  const char* action;
};

const std::vector<KeyBinding>& keyboard_map();

}  // namespace shardscope::viewer
