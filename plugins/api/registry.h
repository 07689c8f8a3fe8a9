// The importers shardscope knows: the built-in ones, and any a user drops into SHARDSCOPE_PLUGIN_PATH.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

 private:
  // Declared first so it is destroyed last: a plugin's importer must be gone before its library closes.
  std::vector<std::shared_ptr<void>> libraries_;
  std::vector<std::unique_ptr<Importer>> importers_;
  size_t plugins_ = 0;
};

}  // namespace shardscope::plugins
