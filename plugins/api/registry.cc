#include "plugins/api/registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "plugins/common/magic.h"
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

namespace {

bool ends_with(std::string_view s, std::string_view tail) { return s.size() > tail.size() && s.ends_with(tail); }

}  // namespace

Format format_of(const Importer& importer) {
  if (const auto* d = dynamic_cast<const Described*>(&importer)) return d->format();
  return Format{.name = importer.name(), .title = importer.name()};
}

std::optional<NotRead> Registry::not_read(std::string_view filename) const {
  if (ends_with(filename, kGzipExtension)) filename.remove_suffix(kGzipExtension.size());
  for (const auto& i : importers_)
    if (const auto* k = dynamic_cast<const KnowsUnread*>(i.get()))
      for (NotRead& n : k->not_read())
        if (ends_with(filename, n.extension)) return std::move(n);
  return std::nullopt;
}

void Registry::add_format(Format format) { added_.push_back(std::move(format)); }

std::vector<Format> Registry::formats() const {
  std::vector<Format> out;
  for (const auto& i : importers_) out.push_back(format_of(*i));
  out.insert(out.end(), added_.begin(), added_.end());
  return out;
}

std::optional<Format> Registry::format_named(std::string_view name) const {
  for (Format& f : formats())
    if (f.name == name) return std::move(f);
  return std::nullopt;
}

std::optional<Format> Registry::sniff(std::string_view head) const {
  if (const Importer* i = find(head)) return format_of(*i);
  for (const Format& f : added_)
    if (!f.magic.empty() && head.starts_with(f.magic)) return f;
  return std::nullopt;
}

std::vector<Format> Registry::by_name(std::string_view filename) const {
  if (ends_with(filename, kGzipExtension)) filename.remove_suffix(kGzipExtension.size());
  std::vector<Format> out;
  for (Format& f : formats())
    if (std::any_of(f.extensions.begin(), f.extensions.end(),
                    [&](const std::string& e) { return ends_with(filename, e); }))
      out.push_back(std::move(f));
  return out;
}

bool Registry::takes_name(std::string_view filename) const {
  if (filename.size() >= kGzipExtension.size() && filename.ends_with(kGzipExtension)) return true;
  for (const std::string& e : extensions())
    if (filename.size() >= e.size() && filename.ends_with(e)) return true;
  return false;
}

std::vector<std::string> Registry::extensions() const {
  std::vector<std::string> out;
  for (const Format& f : formats())
    for (const std::string& e : f.extensions)
      if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  return out;
}

std::string formats_text(const std::vector<Format>& formats) {
  std::string out;
  for (const Format& f : formats) {
    if (!out.empty()) out += ", ";
    out += f.title.empty() ? f.name : f.title;
    if (!f.extensions.empty()) out += " (" + fmt::format("{}", fmt::join(f.extensions, ", ")) + ")";
  }
  return out + fmt::format("; each may be gzip'd ({})", kGzipExtension);
}

}  // namespace shardscope::plugins
