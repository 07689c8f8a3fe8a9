// A third-party importer built as its own shared object, as a user would: it reads "TOY" files (one line
// per kernel: name, start ns, duration ns). Built twice by the tests, with the right ABI version and a wrong one.
#include <sstream>

#include "plugins/api/importer.h"

namespace {

class ToyImporter : public shardscope::plugins::Importer {
 public:
  std::string name() const override { return "toy"; }
  bool can_read(std::string_view head) const override { return head.substr(0, 4) == "TOY\n"; }
  shardscope::model::Rank read(shardscope::plugins::Input in) const override {
    shardscope::model::Rank r;
    r.rank = 0;
    r.source = in.path;
    r.format = "toy";
    r.tracks.push_back({0, 1, "toy stream", shardscope::model::TrackKind::DeviceStream, {}});
    std::istringstream lines(std::string(in.text().substr(4)));
    std::string name;
    int64_t ts, dur;
    while (lines >> name >> ts >> dur) {
      shardscope::model::Event e;
      e.name = r.strings.intern(name);
      e.ts_ns = ts;
      e.dur_ns = dur;
      e.cls = shardscope::model::IntervalClass::Compute;
      r.tracks[0].events.push_back(e);
    }
    r.finalize();
    return r;
  }
};

}  // namespace

extern "C" int shardscope_importer_abi_version() { return TOY_ABI_VERSION; }
extern "C" shardscope::plugins::Importer* shardscope_create_importer() { return new ToyImporter(); }
