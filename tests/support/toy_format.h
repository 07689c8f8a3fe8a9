// A format that shardscope's code names nowhere, added through the registry alone (plugins/api/format.h): a
// file starts "TOYTRACE\n", then one kernel a line (name, start ns, duration ns). What the tests of the format
// registry read through the loader, `inspect`, the help and the viewer's dialogs.
#pragma once

#include <memory>
#include <sstream>

#include "plugins/api/registry.h"

namespace shardscope::test {

class ToyTraceImporter : public plugins::Importer, public plugins::Described {
 public:
  std::string name() const override { return "toytrace"; }
  plugins::Format format() const override {
    return {.name = name(), .title = "toy traces", .extensions = {".toy"}, .magic = "TOYTRACE\n"};
  }
  bool can_read(std::string_view head) const override { return head.starts_with("TOYTRACE\n"); }
  model::Rank read(plugins::Input in) const override {
    model::Rank r;
    r.rank = 0;
    r.source = in.path;
    r.format = name();
    r.tracks.push_back({0, 1, "toy stream", model::TrackKind::DeviceStream, {}});
    std::istringstream lines(std::string(in.text().substr(9)));
    std::string kernel;
    int64_t ts, dur;
    while (lines >> kernel >> ts >> dur) {
      model::Event e;
      e.name = r.strings.intern(kernel);
      e.ts_ns = ts;
      e.dur_ns = dur;
      e.cls = model::IntervalClass::Compute;
      r.tracks[0].events.push_back(e);
    }
    r.finalize();
    return r;
  }
};

// The built-in formats and the toy one.
inline plugins::Registry registry_with_toy() {
  plugins::Registry r = plugins::Registry::with_builtins();
  r.add(std::make_unique<ToyTraceImporter>());
  return r;
}

}  // namespace shardscope::test
