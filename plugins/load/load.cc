#include "plugins/load/load.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <map>
#include <set>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "plugins/load/read_text.h"
#include "tracer/format/error.h"

namespace shardscope::plugins {
namespace fs = std::filesystem;

namespace {

bool is_trace_name(const fs::path& p) {
  std::string n = p.filename().string();
  auto ends = [&](std::string_view s) { return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0; };
  return ends(".json") || ends(".json.gz") || ends(".gz");
}

// How long a load runs before the progress line shows: 1 s, or SHARDSCOPE_PROGRESS_AFTER_MS (tests set 0
// to see the line without a slow load).
std::chrono::milliseconds progress_after() {
  if (const char* env = std::getenv("SHARDSCOPE_PROGRESS_AFTER_MS"); env && *env) {
    char* end = nullptr;
    long ms = std::strtol(env, &end, 10);
    if (end && *end == '\0' && ms >= 0) return std::chrono::milliseconds(ms);
  }
  return std::chrono::seconds(1);
}

// Prints "ingesting: 3/8 files, 412.0 of 1024.0 MB" on stderr, redrawn in place, once a load has taken a
// second; on a terminal only, so logs and pipes stay clean.
class Progress {
 public:
  Progress(bool on, uint64_t total_bytes, size_t files) : total_(total_bytes), files_(files) {
    if (!on || !isatty(STDERR_FILENO)) return;
    thread_ = std::thread([this] { run(); });
  }
  ~Progress() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (drawn_) fmt::print(stderr, "\r\033[K");
  }
  void file_done(uint64_t bytes) {
    bytes_ += bytes;
    ++files_done_;
  }

 private:
  void run() {
    const auto start = std::chrono::steady_clock::now();
    const auto after = progress_after();
    std::unique_lock lock(mu_);
    if (after.count() == 0) draw();  // at once, however quick the load
    while (!cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return done_; })) {
      if (std::chrono::steady_clock::now() - start < after) continue;
      draw();
    }
  }
  void draw() {
    fmt::print(stderr, "\r\033[Kingesting: {}/{} files, {:.1f} of {:.1f} MB (on disk)", files_done_.load(), files_, bytes_.load() / 1e6, total_ / 1e6);
    drawn_ = true;
  }
  uint64_t total_;
  size_t files_;
  std::atomic<uint64_t> bytes_{0};
  std::atomic<size_t> files_done_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false, drawn_ = false;
  std::thread thread_;
};

}  // namespace

std::vector<fs::path> expand_inputs(const std::vector<fs::path>& paths) {
  std::vector<fs::path> out;
  for (const fs::path& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> found;
      std::vector<std::string> subdirs;
      for (const auto& entry : fs::directory_iterator(p, ec)) {
        if (entry.is_regular_file() && is_trace_name(entry.path())) found.push_back(entry.path());
        else if (entry.is_directory()) subdirs.push_back(entry.path().filename().string());
      }
      if (found.empty()) {
        // A run per subdirectory (control/ and test/, one per rank...) is common: name them rather than guess
        // which are one run.
        std::string hint;
        std::sort(subdirs.begin(), subdirs.end());
        for (size_t i = 0; i < subdirs.size() && i < 8; ++i) hint += (i ? ", " : "") + subdirs[i] + "/";
        if (subdirs.size() > 8) hint += ", ...";
        throw trace::TraceError(p.string(), 0,
                                "no trace files (*.json, *.json.gz) in this directory" +
                                    (hint.empty() ? std::string() : "; it has subdirectories (" + hint + "): give the ones that hold one run's traces"));
      }
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      out.push_back(p);
    } else {
      throw trace::TraceError(p.string(), 0, "no such file or directory");
    }
  }
  return out;
}

Registry default_registry(std::vector<std::string>& refusals) {
  Registry r = Registry::with_builtins();
  if (const char* env = std::getenv("SHARDSCOPE_PLUGIN_PATH"); env && *env) r.load_plugins(env, refusals);
  return r;
}

LoadResult load(const std::vector<fs::path>& paths, const LoadOptions& options) {
  LoadResult result;
  std::vector<fs::path> files = expand_inputs(paths);
  // A file found by listing a directory that no importer reads (a training log, say) is passed over with a
  // warning; one the user named is an error.
  std::set<fs::path> named;
  for (const fs::path& p : paths) named.insert(p);
  std::vector<char> skipped(files.size(), 0);
  Registry own;
  const Registry* registry = options.registry;
  if (!registry) {
    own = default_registry(result.warnings);
    registry = &own;
  }
  uint64_t total = 0;
  for (const fs::path& f : files) {
    std::error_code ec;
    total += fs::file_size(f, ec);
  }

  std::vector<std::optional<model::Rank>> ranks(files.size());
  std::vector<std::exception_ptr> errors(files.size());
  std::vector<uint64_t> sizes(files.size());
  std::atomic<size_t> next{0};
  {
    Progress progress(options.progress, total, files.size());
    auto work = [&] {
      for (size_t i; (i = next++) < files.size();) {
        try {
          FileText t = read_text(files[i]);
          std::string_view head = t.text().substr(0, 64 * 1024);
          if (head.find_first_not_of(" \t\r\n") == std::string_view::npos)
            throw trace::TraceError(files[i].string(), 0, t.size == 0 ? "empty file" : "file holds only whitespace");
          const Importer* imp = registry->find(head);
          if (!imp && !named.count(files[i])) {
            skipped[i] = 1;
            continue;
          }
          if (!imp)
            throw trace::TraceError(files[i].string(), 0,
                                    fmt::format("unknown format: no importer reads it (tried: {})", fmt::join(registry->names(), ", ")));
          sizes[i] = t.size;
          Input in{files[i].string(), t.data, t.size, std::move(t.owner), t.gzip, t.gzip_cut_at};
          ranks[i] = imp->read(std::move(in));
          std::error_code ec;
          progress.file_done(fs::file_size(files[i], ec));
        } catch (...) {
          errors[i] = std::current_exception();
        }
      }
    };
    unsigned n = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    n = unsigned(std::min<size_t>(n, files.size()));
    std::vector<std::thread> pool;
    for (unsigned k = 1; k < n; ++k) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  if (std::all_of(skipped.begin(), skipped.end(), [](char c) { return c; }))
    throw trace::TraceError(files.front().parent_path().string(), 0, "no file here is a trace any importer reads");

  std::map<int, std::string> seen;
  for (size_t i = 0; i < files.size(); ++i) {
    if (skipped[i]) {
      result.warnings.push_back(fmt::format("{}: passed over: not a trace (no importer reads it)", files[i].string()));
      continue;
    }
    model::Rank& r = *ranks[i];
    result.json_bytes += sizes[i];
    if (r.rank < 0) {
      r.rank = int(i);
      if (files.size() > 1) result.warnings.push_back(fmt::format("{}: the trace does not say its rank; using {} (its place among the files)", r.source, i));
    }
    if (auto [it, fresh] = seen.emplace(r.rank, r.source); !fresh)
      result.warnings.push_back(fmt::format("{} and {} both claim rank {}", it->second, r.source, r.rank));
    for (std::string& w : r.warnings) result.warnings.push_back(w);
    result.trace.ranks.push_back(std::move(r));
  }
  std::stable_sort(result.trace.ranks.begin(), result.trace.ranks.end(), [](const model::Rank& a, const model::Rank& b) { return a.rank < b.rank; });
  return result;
}

}  // namespace shardscope::plugins
