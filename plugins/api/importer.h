// The one interface every trace importer implements, built-in or loaded from SHARDSCOPE_PLUGIN_PATH.
// An importer turns one file into one rank of the model, or several (a report of several processes); finding
// files, inflating gzip, running files in parallel and reporting progress are the loader's job, not the importer's.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "model/trace.h"

namespace shardscope::plugins {

// Bumped whenever Importer, Input, model::Event or model::Rank change layout (2: Rank::unit_identity; 3: a
// collective's sequence number and process group on model::Event; 4: Importer::reads_file and read_ranks,
// Input::file: several ranks from one file, and files opened by path; 5: Rank::step_rule; 6: Rank::allocator). What a timeline needs beyond the events is derived after import into side tables (model/index.h), or kept by importers
// that also implement ArgsImporter (below), so it grows without a bump; so does a format's description (Described, format.h: found by dynamic_cast, as a new virtual here would move a built plugin's vtable).
// A third-party plugin exports `int shardscope_importer_abi_version()` returning the version it was
// built against, and is refused unless it equals this one.
inline constexpr int kImporterAbiVersion = 6;

struct Input {
  std::string path;  // the file as the user named it: what messages say
  // The whole (inflated) text: data[0, size). No padding follows it (it may be a read-only mapping of the
  // file). `owner` keeps it alive; the importer owns the Input and may release() it as soon as it has
  // parsed the text, before it builds the model: that keeps peak memory near the size of the text.
  const char* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> owner;
  bool gzip = false;
  // Set when the gzip stream stopped early: the text is a prefix of the real file.
  std::optional<uint64_t> gzip_cut_at;
  // Where the importer opens it when it reads by path (Importer::reads_file): `path` itself, or an inflated
  // copy of a gzip file in a temporary folder that the loader removes after the read. Empty otherwise.
  std::string file;
  std::string_view text() const { return {data, size}; }
  void release() {
    owner.reset();
    data = nullptr;
    size = 0;
  }
};

// Thrown by a built-in importer that finds, past the head it was chosen by, that the file is another
// importer's format (a shardscope trace whose "shardscope" header follows more than the head's worth of
// events): the loader reads the file again with the importer named here. Nothing an importer returned is
// kept, so the choice never depends on where in the file a top-level key falls.
struct ReadAs : std::exception {
  explicit ReadAs(std::string importer) : importer(std::move(importer)) {}
  const char* what() const noexcept override { return "read as another format"; }
  std::string importer;
};

class Importer {
 public:
  virtual ~Importer() = default;
  // A short lower-case name: "shardscope", "kineto".
  virtual std::string name() const = 0;
  // Whether this importer reads a file whose text begins with `head` (up to 64 KiB).
  virtual bool can_read(std::string_view head) const = 0;
  // Reads the file into one rank. Throws trace::TraceError (file, byte, what) when it cannot.
  virtual model::Rank read(Input in) const = 0;

  // True for a format read by random access (SQLite): the loader does not read the text, Input::data is
  // null, and the importer opens Input::file itself.
  virtual bool reads_file() const { return false; }
  // Reads the file into one rank or several, handing each to `each` as soon as it is built so that one is in
  // memory at a time (`args` filled when `keep_args` and the importer keeps them). The default: read() once.
  using EachRank = std::function<void(model::Rank&& rank, model::EventArgs&& args)>;
  virtual void read_ranks(Input in, bool keep_args, const EachRank& each) const {
    (void)keep_args;
    each(read(std::move(in)), model::EventArgs{});
  }
};

// Optional, beside Importer: an importer that can also keep each event's args (model/args.h). The loader
// finds it with dynamic_cast and uses it only when asked for args; a plugin built against ABI 2 without it
// still loads, and its ranks have an empty args table. Adding it changed no layout a plugin relies on.
class ArgsImporter {
 public:
  virtual ~ArgsImporter() = default;
  // read(), filling `args` too.
  virtual model::Rank read_with_args(Input in, model::EventArgs& args) const = 0;
};

// Optional, like ArgsImporter: an importer that can parse one file on several threads. The loader gives it
// the cores its own per-file threads leave idle (one file on two cores: two threads). No layout changed.
class ParallelImporter {
 public:
  virtual ~ParallelImporter() = default;
  // read() (read_with_args() when `args` is set) on `threads` threads; 0: the importer's default.
  virtual model::Rank read_parallel(Input in, unsigned threads, model::EventArgs* args) const = 0;
};

}  // namespace shardscope::plugins

// What a plugin shared object exports (C linkage, so dlsym finds them by these names):
//   extern "C" int shardscope_importer_abi_version();
//   extern "C" shardscope::plugins::Importer* shardscope_create_importer();  // the caller owns it
