#include "plugins/load/load.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <thread>

#include <stdlib.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/steps.h"
#include "plugins/common/magic.h"
#include "plugins/common/text_window.h"
#include "plugins/kineto/kineto_importer.h"
#include "plugins/load/read_text.h"
#include "tracer/format/error.h"
#include "tracer/format/keys.h"
#include "tracer/format/limits.h"
#include "tracer/format/parse_progress.h"
#include "tracer/format/reader.h"

namespace shardscope::plugins {
namespace fs = std::filesystem;

namespace {

// "*.json, *.sqlite": the extensions a directory listing takes.
std::string patterns(const Registry& registry) {
  std::string out;
  for (const std::string& e : registry.extensions()) out += (out.empty() ? "*" : ", *") + e;
  return out;
}

// What to say of a file its format's importer does not read (NotRead): what it is, then what to do, with
// FILE and STEM (the name less its extension) filled in.
std::string not_read_text(const NotRead& n, const fs::path& file) {
  std::string instead = n.instead, stem = file.string();
  if (stem.ends_with(n.extension)) stem.resize(stem.size() - n.extension.size());
  std::string out;
  for (size_t at = 0; at < instead.size();) {  // one pass: a path may itself hold "FILE"
    const size_t next = instead.find("FILE", at);
    out.append(instead, at, next == std::string::npos ? std::string::npos : next - at);
    if (next == std::string::npos) break;
    out += instead.compare(next, 11, "FILE.sqlite") == 0 ? stem : file.string();
    at = next + 4;
  }
  return n.what + ": " + out;
}

// The file's first 64 KiB as they are on disk (a gzip file's compressed bytes): enough to choose an importer
// that opens the file itself. Throws as read_text does for a file that cannot be read.
std::string read_head(const fs::path& path) {
  uint64_t size = 0;
  const int fd = trace::open_regular(path, &size);  // refuses directories, FIFOs and devices by name, as read_text does
  std::string head(size_t(std::min<uint64_t>(size, 64 * 1024)), '\0');
  size_t got = 0;
  while (got < head.size()) {
    ssize_t n = ::read(fd, head.data() + got, head.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  ::close(fd);
  head.resize(got);
  return head;
}

// An inflated gzip file in a temporary folder, for an importer that opens files by path; removed with it.
struct TempCopy {
  fs::path dir, path;
  TempCopy(const fs::path& of, const FileText& text) {
    std::string tmpl = (fs::temp_directory_path() / "shardscope-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      throw trace::TraceError(
          of.string(), 0, fmt::format("cannot make a temporary folder to inflate it into: {}", std::strerror(errno)));
    dir = tmpl;
    path = dir / of.filename().replace_extension();  // run.sqlite.gz -> run.sqlite
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const bool ok = f && std::fwrite(text.data, 1, text.size, f) == text.size;
    const int err = errno;
    if (f && std::fclose(f) != 0) {}
    if (!ok) {
      remove();
      throw trace::TraceError(of.string(), 0,
                              fmt::format("cannot inflate it into {}: {}", dir.string(), std::strerror(err)));
    }
  }
  TempCopy(const TempCopy&) = delete;
  TempCopy& operator=(const TempCopy&) = delete;
  ~TempCopy() { remove(); }
  void remove() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// Serializes the progress callback over the loading threads. The files being read count with their parsed
// share, so the total moves during a big file rather than after it.
class Progress {
 public:
  Progress(const std::function<void(const LoadProgress&)>& fn, uint64_t total_bytes, size_t files) : fn_(fn) {
    state_.bytes = total_bytes;
    state_.files = files;
    if (fn_) fn_(state_);
  }
  void file_started(size_t i, const std::string& file, uint64_t bytes) { reading(i, file, 0, bytes, 0); }
  void reading(size_t i, const std::string& file, uint64_t done, uint64_t bytes, uint64_t events) {
    if (!fn_) return;
    std::lock_guard lock(mu_);
    partial_[i] = done;
    state_.reading = file;
    state_.reading_bytes_done = done;
    state_.reading_bytes = bytes;
    state_.reading_events = events;
    send();
  }
  void file_done(size_t i, const std::string& file, uint64_t bytes) {
    if (!fn_) return;
    std::lock_guard lock(mu_);
    partial_.erase(i);
    finished_ += bytes;
    ++state_.files_done;
    state_.file = file;
    state_.reading.clear();
    state_.reading_bytes_done = state_.reading_bytes = state_.reading_events = 0;
    send();
  }

 private:
  void send() {
    state_.bytes_done = finished_;
    for (const auto& [i, done] : partial_) state_.bytes_done += done;
    fn_(state_);
  }
  const std::function<void(const LoadProgress&)>& fn_;
  std::mutex mu_;
  LoadProgress state_;
  uint64_t finished_ = 0;
  std::map<size_t, uint64_t> partial_;  // the files being read: their parsed bytes on disk
};

// --- One run: the checks of check_one_run ---

// "a, b and c", at most four names and then how many more.
std::string name_files(const std::vector<std::string>& files) {
  std::string out;
  const size_t shown = std::min<size_t>(files.size(), 4);
  for (size_t i = 0; i < shown; ++i) out += (i == 0 ? "" : i + 1 == files.size() ? " and " : ", ") + files[i];
  if (files.size() > shown) out += fmt::format(" and {} more", files.size() - shown);
  return out;
}

// A JSON value as the message shows it: compact, at most 60 characters.
std::string show(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// The first place where two values differ, as a path under `path` ("run_config.model.dim",
// "run_config.units[3].params"), with the two values there. Keys present on one side only are not a
// difference (a program may add metadata on one rank). False when they agree.
bool first_difference(const nlohmann::json& a, const nlohmann::json& b, const std::string& path, std::string& at,
                      nlohmann::json& va, nlohmann::json& vb) {
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto jt = b.find(it.key());
      if (jt != b.end() && first_difference(*it, *jt, path + "." + it.key(), at, va, vb)) return true;
    }
    return false;
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    for (size_t i = 0; i < a.size(); ++i)
      if (first_difference(a[i], b[i], fmt::format("{}[{}]", path, i), at, va, vb)) return true;
    return false;
  }
  // 2 and 2.0 are one number.
  if (a.is_number() && b.is_number() && a.get<double>() == b.get<double>()) return false;
  if (a == b) return false;
  at = path, va = a, vb = b;
  return true;
}

// run_config keys that shape the run: two ranks that differ in one were not trained together.
bool shapes_the_run(const std::string& key) {
  namespace k = keys;
  for (const char* s :
       {k::kWorldSize, k::kCfgSharding, k::kCfgBackwardPrefetch, k::kCfgForwardPrefetch, k::kCfgLimitAllGathers,
        k::kCfgParamDtype, k::kCfgReduceDtype, k::kCfgRanksPerNode, k::kCfgActivationCheckpointing, k::kCfgCpuOffload,
        k::kCfgOptimizer, k::kCfgModel, k::kCfgUnits, k::kCfgBatchSize})
    if (key == s) return true;
  return false;
}

// "3 h 12 min", "7 min 30 s", "2 days 4 h".
std::string duration(int64_t ns) {
  int64_t s = ns / 1'000'000'000;
  if (s >= 86400) return fmt::format("{} days {} h", s / 86400, s % 86400 / 3600);
  if (s >= 3600) return fmt::format("{} h {} min", s / 3600, s % 3600 / 60);
  return fmt::format("{} min {} s", s / 60, s % 60);
}

// The rank's first event on the wall clock, through the clock pair nearest it; nullopt when the trace does
// not map its clock there or has no events.
std::optional<int64_t> wall_start(const model::Rank& r) {
  if (r.clock_sync.empty()) return std::nullopt;
  std::optional<int64_t> first;
  for (const model::Track& t : r.tracks)
    if (!t.events.empty()) first = std::min(first.value_or(INT64_MAX), t.events.front().ts_ns);
  if (!first) return std::nullopt;
  // A hostile file's times and clock pairs may lie at both ends of the int64 range: distances are unsigned,
  // and a wall time beyond int64 is one the trace does not map.
  auto distance = [&](int64_t t) {
    return t > *first ? uint64_t(t) - uint64_t(*first) : uint64_t(*first) - uint64_t(t);
  };
  const model::ClockPair* near = &r.clock_sync.front();
  for (const model::ClockPair& p : r.clock_sync)
    if (distance(p.trace_ns) < distance(near->trace_ns)) near = &p;
  int64_t offset, wall;
  if (__builtin_sub_overflow(near->realtime_ns, near->trace_ns, &offset) ||
      __builtin_add_overflow(*first, offset, &wall))
    return std::nullopt;
  return wall;
}

}  // namespace

RankHeader header_of(const model::Rank& r, bool rank_given) {
  nlohmann::json dist;
  if (r.metadata.is_object())
    if (auto it = r.metadata.find("distributedInfo"); it != r.metadata.end() && it->is_object()) dist = *it;
  return {r.rank, r.world_size, r.source, {}, r.run_config, wall_start(r), rank_given, std::move(dist)};
}

namespace {

// Short: a message line is cut at trace::kMaxLineBytes, and two paths come before it.
constexpr const char* kHint = "give one run's files (a directory may hold an earlier run's too), or --allow-mixed";

// A sign the files are of different runs: refused, or with --allow-mixed a warning.
struct Mixed {
  const OneRunCheck& how;
  std::vector<std::string>& warnings;
  void operator()(const std::string& what) const {
    if (!how.allow_mixed) throw MixedRunsError(fmt::format("these files are not one run: {}; {}", what, kHint));
    warnings.push_back(fmt::format("these files may not be one run (--allow-mixed: analysed together): {}", what));
  }
};

// A rank's file as a message names it: a summary by its own path, then the trace it summarises.
std::string named(const RankHeader& r) {
  return r.file.empty() ? r.source : fmt::format("{} (the summary of {})", r.file, r.source);
}

void check_world_sizes(const std::vector<RankHeader>& ranks, const Mixed& mixed) {
  std::map<int, std::vector<std::string>> by_world;
  for (const RankHeader& r : ranks)
    if (r.world_size > 0) by_world[r.world_size].push_back(named(r));
  if (by_world.size() < 2) return;
  std::vector<std::string> parts;
  for (auto& [w, files] : by_world) parts.push_back(fmt::format("world_size {} in {}", w, name_files(files)));
  mixed(fmt::format("their headers differ in world_size: {}", fmt::join(parts, "; ")));
}

// What a key that differs between two ranks' headers says.
enum class Differing { Ignored, Warned, OtherRun };

// Each rank's `of` (its run_config, its distributedInfo) against the first rank that has one. `kind` says
// whether a differing key makes the files different runs; Warned keys warn once each.
void check_objects(const std::vector<RankHeader>& ranks, nlohmann::json RankHeader::*of, const std::string& name,
                   Differing (*kind)(const std::string&), const Mixed& mixed) {
  const RankHeader* ref = nullptr;
  std::set<std::string> warned;
  for (const RankHeader& r : ranks) {
    if (!(r.*of).is_object()) continue;
    if (!ref) {
      ref = &r;
      continue;
    }
    for (auto it = (ref->*of).begin(); it != (ref->*of).end(); ++it) {
      auto jt = (r.*of).find(it.key());
      std::string at;
      nlohmann::json va, vb;
      const Differing k = kind(it.key());
      if (k == Differing::Ignored || jt == (r.*of).end() ||
          !first_difference(*it, *jt, name + "." + it.key(), at, va, vb))
        continue;
      std::string what = fmt::format("{} is {} in {} but {} in {}", at, show(va), named(*ref), show(vb), named(r));
      if (k == Differing::OtherRun) {
        mixed(what);
      } else if (warned.insert(it.key()).second) {
        mixed.warnings.push_back(fmt::format("the ranks' run configurations differ: {}", what));
      }
    }
  }
}

// distributedInfo keys are the same on every rank of a job (backend, nccl_version, pg_count), but for the
// rank's own place in it; world_size is compared with the other formats' (check_world_sizes).
Differing distributed_key(const std::string& key) {
  return key == "rank" || key == "local_rank" || key == "world_size" ? Differing::Ignored : Differing::OtherRun;
}
Differing run_config_key(const std::string& key) {
  return shapes_the_run(key) ? Differing::OtherRun : Differing::Warned;
}

void check_rank_numbers(const std::vector<RankHeader>& ranks, const Mixed& mixed) {
  std::map<int, std::pair<std::string, bool>> seen;
  for (const RankHeader& r : ranks) {
    if (r.rank_given && r.world_size > 0 && r.rank >= r.world_size)
      mixed(fmt::format("{} says it is rank {} but its world_size is {}: a run of {} ranks has ranks 0 to {}", named(r),
                        r.rank, r.world_size, r.world_size, r.world_size - 1));
    auto [it, fresh] = seen.emplace(r.rank, std::pair(named(r), r.rank_given));
    if (fresh) continue;
    if (r.rank_given && it->second.second) {
      mixed(fmt::format("{} and {} both say they are rank {}: one run has one file per rank", it->second.first,
                        named(r), r.rank));
      continue;
    }
    mixed.warnings.push_back(
        fmt::format("{} and {} both claim rank {} (one of them guessed from its place among the files)",
                    it->second.first, named(r), r.rank));
  }
}

// One run's ranks start together: minutes apart is a warning, hours apart another run.
void check_start_times(const std::vector<RankHeader>& ranks, const Mixed& mixed) {
  const RankHeader *early = nullptr, *late = nullptr;
  int64_t lo = 0, hi = 0;
  for (const RankHeader& r : ranks) {
    const std::optional<int64_t>& t = r.wall_start;
    if (!t) continue;
    if (!early || *t < lo) early = &r, lo = *t;
    if (!late || *t > hi) late = &r, hi = *t;
  }
  int64_t spread;  // hi >= lo, but the two may be further apart than int64 holds
  if (__builtin_sub_overflow(hi, lo, &spread)) spread = INT64_MAX;
  if (!early || !late || spread <= kRunStartSpreadNs) return;
  const std::string what =
      fmt::format("{} starts {} after {} on the wall clock", named(*late), duration(spread), named(*early));
  if (spread > kRunStartMixedNs) return mixed(what);
  mixed.warnings.push_back(what +
                           " (first events, through each trace's clock_sync or Kineto's wall-clock times): the ranks "
                           "of one run start together; are these files from different runs?");
}

// "3, 7, 9 and 12", or the first eight and "... (12 more)".
std::string name_ranks(const std::vector<int>& ranks) {
  constexpr size_t kShown = 8;
  if (ranks.size() == 1) return fmt::format("rank {}", ranks[0]);
  if (ranks.size() <= kShown)
    return fmt::format("ranks {} and {}", fmt::join(ranks.begin(), ranks.end() - 1, ", "), ranks.back());
  return fmt::format("ranks {}, ... ({} more)", fmt::join(ranks.begin(), ranks.begin() + kShown, ", "),
                     ranks.size() - kShown);
}

// Ranks the world size promises that no file holds. One file alone is a look at one rank, not a run.
void check_missing(const std::vector<RankHeader>& ranks, std::vector<std::string>& warnings) {
  int world = 0;
  std::set<int> have;
  for (const RankHeader& r : ranks) world = std::max(world, r.world_size), have.insert(r.rank);
  if (have.size() < 2 || world <= 0) return;
  std::vector<int> missing;
  for (int r = 0; r < world; ++r)
    if (!have.count(r)) missing.push_back(r);
  if (missing.empty()) return;
  warnings.push_back(
      fmt::format("{} of the run's {} ranks have no file here ({} missing; world_size {} in the "
                  "traces): the report covers the {} ranks given",
                  missing.size(), world, name_ranks(missing), world, world - int(missing.size())));
}

}  // namespace

void check_one_run(const std::vector<RankHeader>& ranks, std::vector<std::string>& warnings, const OneRunCheck& how) {
  const Mixed mixed{how, warnings};
  check_world_sizes(ranks, mixed);
  check_objects(ranks, &RankHeader::distributed, "distributedInfo", distributed_key, mixed);
  check_objects(ranks, &RankHeader::run_config, keys::kRunConfig, run_config_key, mixed);
  check_rank_numbers(ranks, mixed);
  check_start_times(ranks, mixed);
  if (how.complete) check_missing(ranks, warnings);
}

std::vector<fs::path> expand_inputs(const std::vector<fs::path>& paths, const Registry* registry) {
  std::vector<fs::path> out;
  std::optional<Registry> own;
  if (!registry) {
    std::vector<std::string> refusals;  // the load that follows reports them
    registry = &own.emplace(default_registry(refusals));
  }
  for (const fs::path& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> found;
      std::vector<std::string> subdirs;
      std::optional<std::pair<NotRead, fs::path>> unread;  // the first file known and not read (an Nsight report)
      fs::directory_iterator listing(p, ec);
      if (ec) throw trace::TraceError(p.string(), 0, fmt::format("cannot list this directory: {}", ec.message()));
      for (const auto& entry : listing) {
        if (entry.is_regular_file() && registry->takes_name(entry.path().filename().string()))
          found.push_back(entry.path());
        else if (std::optional<NotRead> n = registry->not_read(entry.path().filename().string()); n && !unread)
          unread.emplace(std::move(*n), entry.path());
        else if (entry.is_directory())
          subdirs.push_back(entry.path().filename().string());
      }
      if (found.empty() && unread)
        throw trace::TraceError(
            p.string(), 0,
            fmt::format("no trace files in this directory; {} is {}", unread->second.filename().string(),
                        not_read_text(unread->first, unread->second)));
      if (found.empty()) {
        // A run per subdirectory (control/ and test/, one per rank...) is common: name them rather than guess
        // which are one run.
        std::string hint;
        std::sort(subdirs.begin(), subdirs.end());
        for (size_t i = 0; i < subdirs.size() && i < 8; ++i) hint += (i ? ", " : "") + subdirs[i] + "/";
        if (subdirs.size() > 8) hint += ", ...";
        throw trace::TraceError(
            p.string(), 0,
            fmt::format("no trace files ({}, each also {}) in this directory", patterns(*registry), kGzipExtension) +
                (hint.empty() ? std::string()
                              : "; it has subdirectories (" + hint + "): give the ones that hold one run's traces"));
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

namespace {

// What load_each keeps per file once its rank has gone to the sink: small, whatever the trace's size.
struct FileSlots {
  std::vector<std::vector<RankHeader>> headers;  // one a rank: a file may hold several
  std::vector<std::vector<std::string>> warnings;
  std::vector<std::exception_ptr> errors;
  std::vector<uint64_t> sizes;
  std::vector<char> ours, skipped;
  explicit FileSlots(size_t n) : headers(n), warnings(n), errors(n), sizes(n), ours(n, 1), skipped(n, 0) {}
};

model::StepPattern step_pattern_of(const LoadOptions& options) {
  const std::string& p = options.rules.step_pattern;
  if (!p.empty() && !options.rules.step_marker.empty())
    throw std::invalid_argument("--step-pattern and --step-marker are two ways to name the steps: give one");
  try {
    return model::StepPattern(p.empty() ? model::kDefaultStepPattern : p);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(
        fmt::format("--step-pattern '{}' is not a regular expression (RE2 syntax): {}", p, e.what()));
  }
}

// One load_each: the files, where their results go, and how each is read on the loading threads.
class EachLoad {
 public:
  EachLoad(const std::vector<fs::path>& paths, const LoadOptions& options, const RankSink& sink,
           model::StepPattern step_pattern, const Registry& registry, std::vector<fs::path> files)
      : options_(options),
        sink_(sink),
        registry_(registry),
        files_(std::move(files)),
        named_(paths.begin(), paths.end()),
        step_pattern_(std::move(step_pattern)),
        slots_(files_.size()) {
    if (options.mine)
      for (size_t i = 0; i < files_.size(); ++i) slots_.ours[i] = options.mine(options.first_order + i);
  }

  // Reads every file on `threads` threads, the cores left over to each file's own parse (one big file: all).
  void run(unsigned budget) {
    const unsigned n = unsigned(std::max<size_t>(1, std::min<size_t>(budget, files_.size())));
    per_file_ = std::max(1u, budget / n);
    uint64_t total = 0;
    for (const fs::path& f : files_) {
      std::error_code ec;
      total += fs::file_size(f, ec);
    }
    Progress progress(options_.on_progress, total, files_.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i; (i = next++) < files_.size();) {
        if (!slots_.ours[i]) continue;
        if (cancelled()) break;  // the others are not started
        file(i, progress);
      }
    };
    std::vector<std::thread> pool;
    for (unsigned k = 1; k < n; ++k) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
  }

  LoadResult finish(LoadResult result) const;

 private:
  bool cancelled() const { return options_.cancel && options_.cancel->load(std::memory_order_relaxed); }
  std::string name(size_t i) const { return files_[i].string(); }

  // One file, with its progress and its failure kept for finish().
  void file(size_t i, Progress& progress) {
    std::error_code size_ec;
    const uint64_t disk = fs::file_size(files_[i], size_ec);
    uint64_t text_size = 0;  // the file's text once read: parsed bytes are scaled from it to bytes on disk
    progress.file_started(i, name(i), disk);
    const trace::ParseHook hook = [&](uint64_t text_bytes, uint64_t events) {
      if (cancelled()) throw Cancelled();
      const uint64_t done =
          text_size ? uint64_t(double(std::min(text_bytes, text_size)) / double(text_size) * double(disk)) : 0;
      progress.reading(i, name(i), done, disk, events);
    };
    trace::ParseProgressScope progress_scope(&hook);
    try {
      std::optional<Claimed> claimed =
          options_.claim ? options_.claim(options_.first_order + i, files_[i]) : std::nullopt;
      if (claimed) {
        slots_.headers[i].push_back(std::move(claimed->header));
        slots_.warnings[i] = std::move(claimed->warnings);
        slots_.sizes[i] = claimed->bytes;
      } else {
        read(i, text_size);
      }
    } catch (const std::bad_alloc&) {
      // A bare "std::bad_alloc" names neither the file nor the way out.
      slots_.errors[i] = std::make_exception_ptr(
          trace::TraceError(name(i), 0,
                            fmt::format("out of memory while loading it (the text limit is {}; --max-trace-bytes "
                                        "lowers it, or give fewer files at once)",
                                        trace::show_bytes(trace::max_text_bytes()))));
    } catch (...) {
      slots_.errors[i] = std::current_exception();
    }
    if (!slots_.skipped[i]) progress.file_done(i, name(i), disk);  // a file passed over never counted as done
  }

  // Chooses the file's importer and reads it. A format read by random access (SQLite) is chosen by the file's
  // first bytes and opened by path; the others, and any gzip file, are read as text first.
  void read(size_t i, uint64_t& text_size) {
    if (std::optional<NotRead> n = registry_.not_read(files_[i].filename().string()))
      throw trace::TraceError(name(i), 0, not_read_text(*n, files_[i]));
    const std::string raw_head = read_head(files_[i]);
    const Importer* imp = is_gzip(raw_head) ? nullptr : registry_.find(raw_head);
    std::optional<FileText> text;
    if (!imp || !imp->reads_file()) {
      // A Kineto file, and any gzip file until its head says otherwise, is read (inflated) as it is parsed,
      // through a window of reused pages (text_window.h).
      const bool windowed = is_gzip(raw_head) || dynamic_cast<const KinetoImporter*>(imp) != nullptr;
      imp = nullptr;
      text = windowed ? read_text_window(files_[i]) : read_text(files_[i]);
      text_size = text->size;
      std::string_view head = text->text().substr(0, 64 * 1024);
      if (head.find_first_not_of(" \t\r\n") == std::string_view::npos)
        throw trace::TraceError(name(i), 0, text->size == 0 ? "empty file" : "file holds only whitespace");
      imp = registry_.find(head);
      if (text->window && !dynamic_cast<const KinetoImporter*>(imp)) text = read_text(files_[i]);
    }
    if (!imp && !named_.count(files_[i])) {
      slots_.skipped[i] = 1;  // found by listing a directory (a training log, say): passed over with a warning
      return;
    }
    if (!imp)
      throw trace::TraceError(
          name(i), 0,
          fmt::format("unknown format: no importer reads it (tried: {})", fmt::join(registry_.names(), ", ")));
    const Importer::EachRank each = [&](model::Rank&& r, model::EventArgs&& a) { deliver(i, r, a); };
    if (imp->reads_file()) {
      std::error_code ec;
      slots_.sizes[i] = text ? text->size : fs::file_size(files_[i], ec);
      // A gzip'd database: inflated to a temporary file the importer can open, removed after the read.
      std::optional<TempCopy> copy;
      if (text) copy.emplace(files_[i], *text), text.reset();
      Input in{.path = name(i), .file = copy ? copy->path.string() : name(i)};
      imp->read_ranks(std::move(in), options_.keep_args, each);
    } else if (!dynamic_cast<const ArgsImporter*>(imp) && !dynamic_cast<const ParallelImporter*>(imp)) {
      // A plugin's importer: one rank or several, through read_ranks (read() unless it has more to say).
      slots_.sizes[i] = text->size;
      FileText t = std::move(*text);
      text.reset();
      Input in{name(i), t.data, t.size, std::move(t.owner), t.gzip, t.gzip_cut_at};
      imp->read_ranks(std::move(in), options_.keep_args, each);
    } else {
      slots_.sizes[i] = text->size;
      FileText t = std::move(*text);
      text.reset();
      read_built_in(i, imp, std::move(t));
    }
  }

  // A built-in text importer: with args when asked, on several threads when it can, and again with another
  // importer when the whole file says it is another's (ReadAs).
  void read_built_in(size_t i, const Importer* imp, FileText t) {
    model::EventArgs args;
    auto read_with = [&](const Importer* by, FileText text) {
      // The text is ours alone and read once (ReadAs reads the file again): its parsed pages may go back.
      trace::ConsumedTextScope consumed(text.data, text.size);
      TextWindowScope window(text.window);
      Input in{name(i), text.data, text.size, std::move(text.owner), text.gzip, text.gzip_cut_at};
      const auto* with_args = options_.keep_args ? dynamic_cast<const ArgsImporter*>(by) : nullptr;
      const auto* parallel = dynamic_cast<const ParallelImporter*>(by);
      if (parallel && (with_args || !options_.keep_args))
        return parallel->read_parallel(std::move(in), per_file_, with_args ? &args : nullptr);
      return with_args ? with_args->read_with_args(std::move(in), args) : by->read(std::move(in));
    };
    model::Rank rank;
    try {
      const std::shared_ptr<const void> window_owner = t.window ? t.owner : nullptr;  // its size, once read
      const TextWindow* window = t.window;
      rank = read_with(imp, std::move(t));
      if (window) slots_.sizes[i] = window->size();
    } catch (const ReadAs& again) {
      // The head chose one importer, the whole file says another (its header after its events).
      const Importer* other = registry_.named(again.importer);
      if (!other || other == imp)
        throw trace::TraceError(name(i), 0, "unknown format: the importers disagree about it");
      args = {};
      rank = read_with(other, read_text(files_[i]));
    }
    deliver(i, rank, args);
  }

  // Steps the importer did not know to look for: --step-marker's, else the pattern's (an injected program's
  // NVTX "step 3"), else, with neither given, inferred from the optimizer's steps, else from the collectives'
  // repeating pattern.
  void own_steps(model::Rank& rank) const {
    const ReadRules& rules = options_.rules;
    std::vector<model::Step> own;
    model::StepRule rule = model::StepRule::StepMarker;
    if (!rules.step_marker.empty()) {
      own = model::steps_from_marker(rank, rules.step_marker);
    } else {
      own = model::steps_matching(rank, step_pattern_);
      rule = rules.step_pattern.empty() ? model::StepRule::NamedRanges : model::StepRule::StepPattern;
      if (own.empty() && rules.step_pattern.empty()) {
        own = model::steps_from_optimizer(rank);
        rule = model::StepRule::OptimizerStep;
      }
      if (own.empty() && rules.step_pattern.empty()) {
        own = model::steps_from_collectives(rank);
        rule = model::StepRule::Collectives;
      }
    }
    if (own.empty()) return;
    const bool device = std::any_of(rank.tracks.begin(), rank.tracks.end(), [](const model::Track& tr) {
      return std::any_of(tr.events.begin(), tr.events.end(),
                         [](const model::Event& e) { return e.is_device() && e.issued_ns != model::kUnknown; });
    });
    model::set_steps(rank, std::move(own), device);
    rank.step_rule = rule;
  }

  // One rank as the importer gives it: its steps where it found none, its number, then the sink.
  void deliver(size_t i, model::Rank& rank, model::EventArgs& args) {
    if (rank.steps.empty()) own_steps(rank);
    else if (rank.step_rule == model::StepRule::None)
      rank.step_rule = model::StepRule::Importer;  // a plugin's, made its own way
    std::vector<std::string> warnings;
    const bool given = rank.rank >= 0;
    if (!given) {
      const uint64_t place = options_.first_order + i;
      rank.rank = int(place);
      if ((options_.run_files ? options_.run_files : files_.size()) > 1)
        warnings.push_back(fmt::format("{}: the trace does not say its rank; using {} (its place among the files)",
                                       rank.source, place));
    }
    for (std::string& w : rank.warnings) warnings.push_back(w);
    RankHeader header = header_of(rank, given);
    LoadedRank loaded{options_.first_order + i, rank, args, header, warnings, slots_.sizes[i]};
    sink_(loaded);
    slots_.headers[i].push_back(std::move(header));
    for (std::string& w : warnings) slots_.warnings[i].push_back(std::move(w));
  }

  const LoadOptions& options_;
  const RankSink& sink_;
  const Registry& registry_;
  const std::vector<fs::path> files_;
  // A file found by listing a directory that no importer reads is passed over; one the user named is an error.
  const std::set<fs::path> named_;
  const model::StepPattern step_pattern_;
  unsigned per_file_ = 1;
  FileSlots slots_;
};

// The files' failures (thrown, or listed with keep_going), then the warnings and the one-run check.
LoadResult EachLoad::finish(LoadResult result) const {
  if (options_.cancel && options_.cancel->load()) throw Cancelled();
  const auto& errors = slots_.errors;
  size_t failed = 0;
  for (size_t i = 0; i < files_.size(); ++i) {
    if (!errors[i]) continue;
    if (!options_.keep_going) std::rethrow_exception(errors[i]);
    ++failed;
    try {
      std::rethrow_exception(errors[i]);
    } catch (const std::exception& e) {
      result.failures.push_back({name(i), e.what()});
    }
  }
  const size_t taken = size_t(std::count(slots_.ours.begin(), slots_.ours.end(), 1));
  if (taken == 0) return result;
  if (failed == taken)
    std::rethrow_exception(
        *std::find_if(errors.begin(), errors.end(), [](const std::exception_ptr& e) { return bool(e); }));
  // A share of a run (MPI) that holds no trace is no error: process 0 judges the run's files as a whole.
  const bool whole_run = !options_.mine && !options_.run_files;
  if (whole_run && size_t(std::count(slots_.skipped.begin(), slots_.skipped.end(), 1)) == taken)
    throw trace::TraceError(files_.front().parent_path().string(), 0, "no file here is a trace any importer reads");

  std::vector<RankHeader> loaded;
  for (size_t i = 0; i < files_.size(); ++i) {
    if (errors[i] || !slots_.ours[i]) continue;
    if (slots_.skipped[i]) {
      result.warnings.push_back(passed_over(name(i)));
      continue;
    }
    result.json_bytes += slots_.sizes[i];
    for (const std::string& w : slots_.warnings[i]) result.warnings.push_back(w);
    for (const RankHeader& h : slots_.headers[i]) loaded.push_back(h);
  }
  check_one_run(loaded, result.warnings, {.allow_mixed = options_.rules.allow_mixed, .complete = whole_run});
  return result;
}

}  // namespace

LoadResult load_each(const std::vector<fs::path>& paths, const LoadOptions& options, const RankSink& sink) {
  model::StepPattern step_pattern = step_pattern_of(options);  // refused before any file is looked at
  LoadResult result;
  Registry own;
  const Registry* registry = options.registry;
  if (!registry) {
    own = default_registry(result.warnings);
    registry = &own;
  }
  EachLoad each(paths, options, sink, std::move(step_pattern), *registry, expand_inputs(paths, registry));
  each.run(options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency()));
  return each.finish(std::move(result));
}

std::string passed_over(const std::string& path) {
  return fmt::format("{}: passed over: not a trace (no importer reads it)", path);
}

LoadResult load(const std::vector<fs::path>& paths, const LoadOptions& options) {
  std::mutex mu;
  std::vector<std::pair<uint64_t, model::Rank>> ranks;
  std::vector<model::EventArgs> args;
  LoadResult result = load_each(paths, options, [&](LoadedRank& r) {
    std::lock_guard lock(mu);
    ranks.emplace_back(r.order, std::move(r.rank));
    args.push_back(std::move(r.args));
  });
  // By rank, then by file (two files may claim one rank), the args with their ranks.
  std::vector<size_t> order(ranks.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(ranks[a].second.rank, ranks[a].first) < std::pair(ranks[b].second.rank, ranks[b].first);
  });
  for (size_t k : order) {
    result.trace.ranks.push_back(std::move(ranks[k].second));
    if (options.keep_args) result.trace.args.push_back(std::move(args[k]));
  }
  return result;
}

}  // namespace shardscope::plugins
