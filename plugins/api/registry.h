// The importers shardscope knows: the built-in ones, and any a user drops into SHARDSCOPE_PLUGIN_PATH.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/api/format.h"
#include "plugins/api/importer.h"

namespace shardscope::plugins {

class Registry {
 public:
  // The built-in importers (shardscope's own files, PyTorch profiler JSON, Nsight Systems SQLite exports).
  static Registry with_builtins();

  void add(std::unique_ptr<Importer> importer);
  // Loads every *.so in each directory (or file) of a ':'-separated list. A library that is not a plugin,
  // or one built for another ABI version, is refused with a message in `refusals`; the others load.
  void load_plugins(std::string_view path_list, std::vector<std::string>& refusals);
  // The first importer (plugins first, so a user's plugin can claim a format) that reads this head.
  const Importer* find(std::string_view head) const;
  // The importer of that name(), or nullptr.
  const Importer* named(std::string_view name) const;
  std::vector<std::string> names() const;

  // A format read outside the importers (a rank summary, which the analysis claims through
  // LoadOptions::claim): listed with theirs, for directory listings, help and dialogs.
  void add_format(Format format);
  // Every format, the importers' first (in the order find() tries them), then those added by add_format.
  std::vector<Format> formats() const;
  // The format of that name, or nullopt.
  std::optional<Format> format_named(std::string_view name) const;
  // The format whose file begins with `head` (as find(), then the added formats' magic), or nullopt.
  std::optional<Format> sniff(std::string_view head) const;
  // The formats whose extension the file's name ends with, a trailing ".gz" left off first.
  std::vector<Format> by_name(std::string_view filename) const;
  // Whether a directory listing takes this file: it ends with one of the formats' extensions, or ".gz".
  bool takes_name(std::string_view filename) const;
  // What the importers say of a file they know and do not read (an Nsight report), by its name; nullopt
  // for any other name.
  std::optional<NotRead> not_read(std::string_view filename) const;
  // Every extension once, in the formats' order: ".json", ".sqlite".
  std::vector<std::string> extensions() const;

 private:
  // Declared first so it is destroyed last: a plugin's importer must be gone before its library closes.
  std::vector<std::shared_ptr<void>> libraries_;
  std::vector<std::unique_ptr<Importer>> importers_;
  size_t plugins_ = 0;
  std::vector<Format> added_;
};

// Its Format (Described), or its name alone for a plugin that does not describe itself.
Format format_of(const Importer& importer);
// The formats as help and dialogs list them: "shardscope traces (.json), ...; each may be gzip'd (.gz)".
std::string formats_text(const std::vector<Format>& formats);

}  // namespace shardscope::plugins
