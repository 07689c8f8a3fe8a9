#include "analyzer/cli/inspect.h"
#include "analyzer/cli/output.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>

#include "analyzer/analysis/summary_file.h"
#include "plugins/common/magic.h"
#include "plugins/load/load.h"
#include "tracer/format/error.h"
#include "tracer/format/keys.h"
#include "tracer/format/reader.h"

namespace shardscope::cli {
namespace {

using json = nlohmann::json;

struct TrackSummary {
  std::string name;
  uint64_t events = 0;
};

struct Summary {
  std::map<std::pair<int64_t, int64_t>, TrackSummary> tracks;  // (pid, tid)
  std::map<int64_t, std::string> processes;
  std::map<char, uint64_t> by_phase;
  std::map<std::string, uint64_t> counters;  // counter name -> samples
  int64_t first_ns = std::numeric_limits<int64_t>::max();
  int64_t last_ns = std::numeric_limits<int64_t>::min();
};

Summary summarize(const trace::TraceFile& f) {
  Summary s;
  for (const trace::Event& e : f.events) {
    ++s.by_phase[e.ph];
    if (e.ph == 'M') {
      // Names only when they are strings: a metadata event is not worth refusing the file over.
      if (e.name == keys::kThreadName && e.args.contains(keys::kName) && e.args[keys::kName].is_string())
        s.tracks[{e.pid, e.tid}].name = e.args[keys::kName].get<std::string>();
      if (e.name == keys::kProcessName && e.args.contains(keys::kName) && e.args[keys::kName].is_string())
        s.processes[e.pid] = e.args[keys::kName].get<std::string>();
      continue;
    }
    ++s.tracks[{e.pid, e.tid}].events;
    if (e.ph == 'C') ++s.counters[e.name];
    s.first_ns = std::min(s.first_ns, e.ts_ns);
    s.last_ns = std::max(s.last_ns, e.ts_ns + e.dur_ns);  // the reader refused events whose end overflows
  }
  return s;
}

std::string seconds(int64_t ns) { return fmt::format("{:.6f} s", double(ns) / 1e9); }

// last - first, saturated: a hostile file's events may lie at both ends of the int64 range.
int64_t span(int64_t first, int64_t last) {
  int64_t d;
  return __builtin_sub_overflow(last, first, &d) ? INT64_MAX : d;
}

json to_json(const trace::TraceFile& f, const Summary& s) {
  json tracks = json::array();
  for (const auto& [key, t] : s.tracks)
    tracks.push_back({{"pid", key.first}, {"tid", key.second}, {"name", t.name}, {"events", t.events}});
  json phases = json::object();
  for (const auto& [ph, n] : s.by_phase) phases[std::string(1, ph)] = n;
  json j = {{"file", f.name},
            {"gzip", f.gzip},
            {"json_bytes", f.json_bytes},
            {"shardscope", f.shardscope},
            {"events", f.events.size()},
            {"events_by_phase", phases},
            {"tracks", tracks},
            {"counters", s.counters},
            {"truncated", nullptr}};
  if (s.first_ns <= s.last_ns)
    j["span_ns"] = {{"first", s.first_ns}, {"last", s.last_ns}, {"duration", span(s.first_ns, s.last_ns)}};
  if (f.truncated) j["truncated"] = {{"offset", f.truncated->offset}, {"detail", f.truncated->detail}};
  return j;
}

void print_text(const trace::TraceFile& f, const Summary& s, std::ostream& out) {
  const json& h = f.shardscope;
  auto field = [&](const char* k) { return h.contains(k) ? h[k].dump() : std::string("?"); };
  fmt::print(out, "{}\n", f.name);
  fmt::print(out, "  format      shardscope schema {}{}, {} bytes of JSON\n", field(keys::kSchemaVersion),
             f.gzip ? " (gzip)" : "", f.json_bytes);
  fmt::print(out, "  rank        {} of {} on host {}, os pid {}\n", field(keys::kRank), field(keys::kWorldSize),
             h.value(keys::kHost, std::string("?")), field(keys::kOsPid));
  if (h.contains(keys::kClock)) fmt::print(out, "  clock       {}\n", h[keys::kClock].dump());
  if (h.contains(keys::kTracer)) fmt::print(out, "  tracer      {}\n", h[keys::kTracer].dump());
  if (h.contains(keys::kRunConfig) && !h[keys::kRunConfig].empty())
    fmt::print(out, "  run config  {}\n", h[keys::kRunConfig].dump());
  std::string phases;
  for (const auto& [ph, n] : s.by_phase) phases += fmt::format("{}{} {}", phases.empty() ? "" : ", ", ph, n);
  fmt::print(out, "  events      {} ({})\n", f.events.size(), phases);
  if (s.first_ns <= s.last_ns)
    fmt::print(out, "  span        {} (from {} to {} on the trace clock)\n", seconds(span(s.first_ns, s.last_ns)),
               seconds(s.first_ns), seconds(s.last_ns));
  else
    fmt::print(out, "  span        none (no timed events)\n");
  fmt::print(out, "  tracks       pid   tid  events  name\n");
  for (const auto& [key, t] : s.tracks)
    fmt::print(out, "             {:>4} {:>5} {:>7}  {}\n", key.first, key.second, t.events,
               t.name.empty() ? "-" : t.name);
  if (!s.counters.empty()) {
    fmt::print(out, "  counters    ");
    bool first = true;
    for (const auto& [name, n] : s.counters) {
      fmt::print(out, "{}{} ({} samples)", first ? "" : ", ", name, n);
      first = false;
    }
    fmt::print(out, "\n");
  }
  if (h.value(keys::kDroppedRecords, uint64_t(0)) > 0)
    fmt::print(out, "  DROPPED     {} records: the tracer's buffers were full\n",
               h[keys::kDroppedRecords].get<uint64_t>());
  if (h.value(keys::kDroppedGpuRecords, uint64_t(0)) > 0)
    fmt::print(out, "  DROPPED GPU {} records: CUPTI's activity buffers were full\n",
               h[keys::kDroppedGpuRecords].get<uint64_t>());
  if (f.truncated)
    fmt::print(out, "  TRUNCATED   at byte {}: {} complete events before the cut were loaded\n", f.truncated->offset,
               f.events.size());
}

// A format whose descriptor says so (shardscope's own traces) is listed event by event by the trace reader;
// every other (Kineto JSON in either form, an Nsight Systems export, a plugin's) through the loader, each rank
// it holds, as `report` reads it. The format is known by the file's first bytes, a gzip file's inflated.
bool read_by_importer(const std::string& path, const plugins::Registry& registry) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return false;  // a FIFO would block the read; read_trace refuses it by name
  if (registry.not_read(std::filesystem::path(path).filename().string())) return true;  // the loader says why
  std::string head(64 * 1024, '\0');
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  head.resize(std::fread(head.data(), 1, head.size(), f));
  std::fclose(f);
  if (plugins::is_gzip(head)) {
    std::string inflated;  // the first 64 KiB compressed: a stream cut short, inflated as far as it goes
    try {
      trace::inflate_gzip(head, path, inflated);
    } catch (const trace::TraceError&) {
      return false;  // damaged: the trace reader names where
    }
    head = std::move(inflated);
  }
  const std::optional<plugins::Format> format = registry.sniff(head);
  return format && !format->lists_events;
}

json inspect_ranks(const std::string& path, std::ostream& out, std::ostream& err, bool as_json,
                   const plugins::Registry* registry) {
  plugins::LoadResult r = plugins::load({path}, {.registry = registry});
  print_warnings(r.warnings, err);  // each one line, cut to a line's length
  json ranks = json::array();
  if (!as_json) fmt::print(out, "{}\n", path);
  for (const model::Rank& rank : r.trace.ranks) {
    int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
    json tracks = json::array();
    for (const model::Track& t : rank.tracks) {
      tracks.push_back({{"pid", t.pid}, {"tid", t.tid}, {"name", t.name}, {"events", t.events.size()}});
      for (const model::Event& e : t.events) first = std::min(first, e.ts_ns), last = std::max(last, e.end_ns());
    }
    json j = {{"file", path},
              {"format", rank.format},
              {"rank", rank.rank},
              {"world_size", rank.world_size},
              {"metadata", rank.metadata},
              {"events", rank.event_count()},
              {"steps", rank.steps.size()},
              {"tracks", tracks}};
    if (first <= last) j["span_ns"] = {{"first", first}, {"last", last}, {"duration", span(first, last)}};
    if (as_json) {
      ranks.push_back(std::move(j));
      continue;
    }
    const std::string of =
        rank.world_size > 0 ? fmt::format("of {}", rank.world_size) : std::string("(the world size is not recorded)");
    fmt::print(out, "  rank {} {} ({}){}\n", rank.rank, of, rank.format,
               rank.metadata.is_null() || rank.metadata.empty() ? "" : ": " + rank.metadata.dump());
    fmt::print(out, "    events    {} on {} tracks, {} steps\n", rank.event_count(), rank.tracks.size(),
               rank.steps.size());
    if (first <= last)
      fmt::print(out, "    span      {} (from {} to {} on the trace clock)\n", seconds(span(first, last)),
                 seconds(first), seconds(last));
    fmt::print(out, "    tracks       pid   tid  events  name\n");
    for (const model::Track& t : rank.tracks)
      fmt::print(out, "             {:>5} {:>5} {:>7}  {}\n", t.pid, t.tid, t.events.size(), t.name);
  }
  return ranks;
}

}  // namespace

int inspect(const std::vector<std::string>& files, bool as_json, std::ostream& out, std::ostream& err,
            const plugins::Registry* registry) {
  int rc = 0;
  std::optional<plugins::Registry> own;  // to tell formats by: the loader makes its own and warns of refusals
  if (!registry) {
    std::vector<std::string> refusals;
    own.emplace(analysis::formats_registry(refusals));
  }
  const plugins::Registry& formats = registry ? *registry : *own;
  json all = json::array();
  for (const std::string& path : files) {
    try {
      // A summary is no trace: said as such, rather than as an export that is not Nsight's.
      if (analysis::is_summary_file(path))
        throw trace::TraceError(path, 0,
                                "a shardscope rank summary, not a trace: inspect reads traces (report, "
                                "check-prefetch and diff read summaries)");
      if (read_by_importer(path, formats)) {
        for (json& j : inspect_ranks(path, out, err, as_json, registry)) all.push_back(std::move(j));
        continue;
      }
      trace::TraceFile f = trace::read_trace(path);
      Summary s = summarize(f);
      if (f.truncated)
        fmt::print(err,
                   "shardscope: warning: {}: file cut off at byte {} ({}); loaded the {} complete events before it\n",
                   path, f.truncated->offset, f.truncated->detail, f.events.size());
      if (as_json) all.push_back(to_json(f, s));
      else
        print_text(f, s, out);
    } catch (const trace::TraceError& e) {
      print_error(err, e.what());
      rc = 2;
    } catch (const std::bad_alloc&) {
      print_error(err,
                  fmt::format("{}: out of memory while reading it (--max-trace-bytes lowers the text limit)", path));
      rc = 2;
    } catch (const std::exception& e) {
      print_error(err, fmt::format("{}: {}", path, e.what()));
      rc = 2;
    }
  }
  if (as_json) out << all.dump(2) << "\n";
  return rc;
}

}  // namespace shardscope::cli
