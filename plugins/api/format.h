// What a trace format is, apart from how it is read: its name, the file names and first bytes that mark it,
// and what one file holds. Each importer describes its own (Described, below); the loader, `inspect`,
// `summarize`, the CLI's help and the viewer's dialogs ask the registry (registry.h) and name no format
// themselves. Perfetto's trace_type.{h,cc} is the model: one descriptor and one sniffer per trace type.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shardscope::plugins {

struct Format {
  std::string name;   // Importer::name(): "kineto"
  std::string title;  // for help and dialogs: "PyTorch profiler (Kineto) JSON"
  // The names a directory listing takes as this format's (".json"); each gzip'd too (".json.gz"), as the
  // loader inflates any gzip file. Empty: only files named one by one.
  std::vector<std::string> extensions;
  // The bytes every file of this format begins with ("SQLite format 3\0"); empty: only the importer's
  // can_read decides. A format without an importer (a rank summary) is sniffed by this alone.
  std::string magic;
  bool several_ranks = false;  // one file may hold several ranks (a report of several processes)
  // `inspect` lists the file's events as written (shardscope's own traces, which the trace reader reads
  // whole) rather than the ranks its importer makes of them.
  bool lists_events = false;
};

// A file a format's own tool writes that its importer does not read, with what to do instead (Nsight
// Systems' report, which only `nsys export` reads).
struct NotRead {
  std::string extension;  // ".nsys-rep"
  std::string what;       // "an Nsight Systems report; shardscope reads its SQLite export"
  std::string instead;    // "nsys export --type sqlite --output FILE.sqlite FILE" (FILE: the file's path)
};

// Optional, beside Importer (importer.h), as ArgsImporter is: an importer that describes its format. The
// registry finds it with dynamic_cast, so a plugin built against ABI 4 without it still loads, described by
// its name alone (no extensions: its files load when named, not from a directory). No layout changed.
class Described {
 public:
  virtual ~Described() = default;
  virtual Format format() const = 0;
};

// Optional as well: the files an importer knows it does not read (NotRead). A separate interface, so that
// Described's layout stays as plugins built against ABI 4 have it.
class KnowsUnread {
 public:
  virtual ~KnowsUnread() = default;
  virtual std::vector<NotRead> not_read() const = 0;
};

}  // namespace shardscope::plugins
