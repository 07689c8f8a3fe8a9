#include "viewer/model/keymap.h"

namespace shardscope::viewer {

const std::vector<KeyBinding>& keyboard_map() {
  // Perfetto's WASD beside the mouse: a hand on the keys can zoom and pan without the wheel.
  static const std::vector<KeyBinding> keys = {
      {"W / S", "zoom in / out around the view's centre"},
      {"A / D", "pan left / right by a tenth of the view"},
      {"Wheel", "zoom around the cursor"},
      {"Shift+Wheel", "scroll the rows (or the scrollbar at the right)"},
      {"Click a rank's or group's label", "fold it into one summary lane, or unfold it"},
      {"Drag a row's label", "move the row within its group (or among the pinned rows)"},
      {"Right-click a label", "pin to top, hide, show hidden rows, reset the arrangement"},
      {"Drag the labels' edge", "resize the label column"},
      {"Drag", "pan (and scroll the rows)"},
      {"Shift+Drag", "measure a range on one rank (Range dock); across rows, list their slices by name (Area dock)"},
      {"Ctrl+C in the Area dock", "copy its rows (the selected ones, else all) as tab-separated text"},
      {"M",
       "mark the selected event or measured range, else the event under the cursor: a band across all rows "
       "(M again on it: unmark; View > Clear marks: all)"},
      {"Esc", "clear the measured range; else close the keyboard map, or the search"},
      {"Click",
       "select an event (Event dock) with its flows; a collective also lines up every rank on it (Ranks dock)"},
      {"Double-click a Prefetch row", "jump to its all-gather and line up every rank on it (Ranks dock)"},
      {"Double-click a Ranks overview row",
       "load that rank's events from its trace (a run opened from its summaries); select the collective it arrived "
       "last at by the most (a run opened from traces)"},
      {"F", "zoom to the measured range, else the selected event"},
      {"0", "show the whole run"},
      {"/ or Ctrl+F", "search event names"},
      {"Enter / F3", "next search hit"},
      {"Shift+Enter / Shift+F3", "previous search hit"},
      {"Ctrl+O", "open trace files"},
      {"? or F1", "this keyboard map"},
  };
  return keys;
}

}  // namespace shardscope::viewer
