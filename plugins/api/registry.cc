#include "plugins/api/registry.h"

#include <dlfcn.h>

#include <filesystem>
#include <fmt/format.h>

#include "plugins/kineto/kineto_importer.h"
#include "plugins/nsys/nsys_importer.h"
#include "plugins/shardscope/shardscope_importer.h"

namespace shardscope::plugins {

Registry Registry::with_builtins() {
  Registry r;
  r.add(std::make_unique<ShardscopeImporter>());
  r.add(std::make_unique<KinetoImporter>());
  r.add(std::make_unique<NsysImporter>());
  return r;
}

void Registry::add(std::unique_ptr<Importer> importer) { importers_.push_back(std::move(importer)); }

void Registry::load_plugins(std::string_view list, std::vector<std::string>& refusals) {
  namespace fs = std::filesystem;
  std::vector<fs::path> libs;
  for (size_t start = 0; start <= list.size();) {
    size_t end = list.find(':', start);
    if (end == std::string_view::npos) end = list.size();
    fs::path p(std::string(list.substr(start, end - start)));
    start = end + 1;
    if (p.empty()) continue;
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::directory_iterator(p, ec))
        if (entry.path().extension() == ".so") found.push_back(entry.path());
      std::sort(found.begin(), found.end());
      libs.insert(libs.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      libs.push_back(p);
    } else {
      refusals.push_back(fmt::format("{}: no such plugin file or directory", p.string()));
    }
  }
  for (const fs::path& lib : libs) {
    void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      refusals.push_back(fmt::format("{}: cannot load: {}", lib.string(), dlerror()));
      continue;
    }
    std::shared_ptr<void> handle(h, [](void* p) { dlclose(p); });
    auto version = reinterpret_cast<int (*)()>(dlsym(h, "shardscope_importer_abi_version"));
    auto create = reinterpret_cast<Importer* (*)()>(dlsym(h, "shardscope_create_importer"));
    if (!version || !create) {
      refusals.push_back(
          fmt::format("{}: not a shardscope plugin (no shardscope_importer_abi_version / shardscope_create_importer)",
                      lib.string()));
      continue;
    }
    if (int v = version(); v != kImporterAbiVersion) {
      refusals.push_back(
          fmt::format("{}: refused: built for importer ABI version {}, this shardscope needs version {}; rebuild the "
                      "plugin against this shardscope",
                      lib.string(), v, kImporterAbiVersion));
      continue;
    }
    std::unique_ptr<Importer> imp(create());
    if (!imp) {
      refusals.push_back(fmt::format("{}: shardscope_create_importer returned null", lib.string()));
      continue;
    }
    importers_.insert(importers_.begin() + ptrdiff_t(plugins_++), std::move(imp));
    libraries_.push_back(std::move(handle));
  }
}

const Importer* Registry::find(std::string_view head) const {
  for (const auto& i : importers_)
    if (i->can_read(head)) return i.get();
  return nullptr;
}

const Importer* Registry::named(std::string_view name) const {
  for (const auto& i : importers_)
    if (i->name() == name) return i.get();
  return nullptr;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& i : importers_) out.push_back(i->name());
  return out;
}

}  // namespace shardscope::plugins
