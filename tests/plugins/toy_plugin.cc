// A third-party importer built as its own shared object, as a user would: it reads "TOY" files (one line
// per kernel: name, start ns, duration ns; a line "rank N" starts another rank of the same file, as a
// profiler report of several processes would). Built three times by the tests: with this ABI version, with
// the one before (3: no read_ranks), and with a made-up one.
#include <sstream>

#include "plugins/api/format.h"
#include "plugins/api/importer.h"

namespace {

using shardscope::model::Rank;

Rank new_rank(const std::string& path, int number) {
  Rank r;
  r.rank = number;
  r.source = path;
  r.format = "toy";
  r.tracks.push_back({0, 1, "toy stream", shardscope::model::TrackKind::DeviceStream, {}});
  return r;
}

// Described (plugins/api/format.h): its files are *.toy, which the loader then finds in a directory.
class ToyImporter : public shardscope::plugins::Importer, public shardscope::plugins::Described {
 public:
  std::string name() const override { return "toy"; }
  shardscope::plugins::Format format() const override {
    return {
        .name = name(), .title = "toy plugin traces", .extensions = {".toy"}, .magic = "TOY\n", .several_ranks = true};
  }
  bool can_read(std::string_view head) const override { return head.substr(0, 4) == "TOY\n"; }
  Rank read(shardscope::plugins::Input in) const override {
    Rank first;
    bool got = false;
    read_ranks(std::move(in), false, [&](Rank&& r, shardscope::model::EventArgs&&) {
      if (!got) first = std::move(r), got = true;
    });
    return first;
  }
  void read_ranks(shardscope::plugins::Input in, bool, const EachRank& each) const override {
    Rank r = new_rank(in.path, 0);
    std::istringstream lines(std::string(in.text().substr(4)));
    std::string name;
    int64_t ts, dur;
    while (lines >> name) {
      if (name == "rank") {
        int next = 0;
        lines >> next;
        r.finalize();
        if (r.event_count() > 0) each(std::move(r), {});
        r = new_rank(in.path, next);
        continue;
      }
      if (!(lines >> ts >> dur)) break;
      shardscope::model::Event e;
      e.name = r.strings.intern(name);
      e.ts_ns = ts;
      e.dur_ns = dur;
      e.cls = shardscope::model::IntervalClass::Compute;
      r.tracks[0].events.push_back(e);
    }
    r.finalize();
    each(std::move(r), {});
  }
};

}  // namespace

extern "C" int shardscope_importer_abi_version() { return TOY_ABI_VERSION; }
extern "C" shardscope::plugins::Importer* shardscope_create_importer() { return new ToyImporter(); }
