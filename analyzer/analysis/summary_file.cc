#include "analyzer/analysis/summary_file.h"

#include "model/saturating.h"

#include <algorithm>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zlib.h>

#include "analyzer/analysis/summary_codec.h"
#include "analyzer/analysis/summary_tables.h"
#include "plugins/common/magic.h"
#include "plugins/common/sqlite_db.h"
#include "plugins/load/load.h"
#include "tracer/format/error.h"
#include "tracer/format/limits.h"

namespace shardscope::analysis {
namespace fs = std::filesystem;

namespace {

constexpr size_t kDeviceTimeRows = 20;  // the device_time table's rows

// The tables without a row type of their own; summary_tables.cc declares the others.
constexpr const char* kMetaTable = "\nCREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;\n";
constexpr const char* kOtherTables = R"sql(CREATE TABLE device_time(name TEXT, total_ns INTEGER);
CREATE TABLE warnings(message TEXT);
CREATE TABLE report(cbor BLOB);
)sql";

// The schema as one script, in the order the tables have always been created (the file's bytes follow it).
std::string schema() {
  return kMetaTable + create_statement(kStepsTable) + create_statement(kCollectivesTable) +
         create_statement(kCollectiveStatsTable) + create_statement(kPrefetchUnitsTable) +
         create_statement(kMemoryTable) + kOtherTables;
}

// A summary's errors: "summary: " and SQLite's reason, about the file.
constexpr sqlite::Wording kSummaryWording{.cannot_open = "summary: cannot open: ", .before = "summary: ", .after = ""};

using sqlite::Db;
using sqlite::Stmt;

// nlohmann's message without its "[json.exception.parse_error.110] " tag, cut to a line's part.
std::string without_tag(const std::string& what) {
  const size_t close = what.find("] ");
  std::string m = what.starts_with("[json.exception.") && close != std::string::npos ? what.substr(close + 2) : what;
  return m.size() > 200 ? m.substr(0, 200) + "..." : m;
}

model::CollectiveKind kind_named(std::string_view name, const std::string& file) {
  for (int k = 0; k <= int(model::kLastCollectiveKind); ++k)
    if (model::to_string(model::CollectiveKind(k)) == name) return model::CollectiveKind(k);
  throw trace::TraceError(file, 0,
                          fmt::format("summary: collectives.kind '{}' is not a collective kind", name.substr(0, 40)));
}

// zlib, after the 8-byte little-endian size of what it holds.
std::vector<uint8_t> zip_record(const std::vector<uint8_t>& raw, const std::string& file) {
  uLongf n = compressBound(uLong(raw.size()));
  std::vector<uint8_t> out(8 + n);
  for (int i = 0; i < 8; ++i) out[size_t(i)] = uint8_t(uint64_t(raw.size()) >> (8 * i));
  if (compress2(out.data() + 8, &n, raw.data(), uLong(raw.size()), 6) != Z_OK)
    throw trace::TraceError(file, 0, "summary: cannot compress the report record");
  out.resize(8 + n);
  return out;
}

// What a record may inflate to: a rank's report is kilobytes to a few megabytes; deflate never packs more
// than 1032 bytes into one, so a record claiming more than that of its stream is damaged, whatever its size.
constexpr uint64_t kMaxRecordBytes = uint64_t(256) << 20;
constexpr uint64_t kMaxDeflateRatio = 1032;

std::vector<uint8_t> unzip_record(std::span<const uint8_t> z, const std::string& file) {
  if (z.size() < 8) throw trace::TraceError(file, 0, "summary: the report record is damaged (too short)");
  uint64_t size = 0;
  for (int i = 0; i < 8; ++i) size |= uint64_t(z[size_t(i)]) << (8 * i);
  // Checked before anything is allocated or inflated.
  if (size > kMaxRecordBytes)
    throw trace::TraceError(file, 0,
                            fmt::format("summary: the report record says it holds {} bytes, over the {} a record may "
                                        "hold: refused",
                                        size, trace::show_bytes(kMaxRecordBytes)));
  if (size / kMaxDeflateRatio > z.size())
    throw trace::TraceError(file, 0,
                            fmt::format("summary: the report record is damaged (says it holds {} bytes, more than "
                                        "its {} bytes of zlib data can)",
                                        size, z.size() - 8));
  std::vector<uint8_t> out(size);
  uLongf n = uLongf(size);
  if (uncompress(out.data(), &n, z.data() + 8, uLong(z.size() - 8)) != Z_OK || n != size)
    throw trace::TraceError(file, 0, "summary: the report record is damaged (not zlib data of its size)");
  return out;
}

// Walks a JSON text or a CBOR value, building nothing, and stops at the first object or array deeper than
// the traces' limit: the real parse that follows (nlohmann's CBOR reader recurses a level per container,
// and a value's copy and destruction do) then never goes deeper than that.
class DepthCheck : public nlohmann::json_sax<nlohmann::json> {
 public:
  // "" when `in` is well formed and shallow enough, else what is wrong.
  template <class Input>
  static std::string problem(const Input& in, nlohmann::json::input_format_t format) {
    DepthCheck c;
    if (nlohmann::json::sax_parse(in, &c, format)) return "";
    if (c.too_deep_)
      return fmt::format("nests objects and arrays deeper than {} levels: refused", trace::limits().max_depth);
    return c.error_.empty() ? "not well formed" : c.error_;
  }

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool key(string_t&) override { return true; }
  bool start_object(std::size_t) override { return enter(); }
  bool start_array(std::size_t) override { return enter(); }
  bool end_object() override { return --depth_, true; }
  bool end_array() override { return --depth_, true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception& e) override {
    error_ = without_tag(e.what());
    return false;
  }

 private:
  bool enter() { return !(too_deep_ = ++depth_ > trace::limits().max_depth); }
  int depth_ = 0;
  bool too_deep_ = false;
  std::string error_;
};

// Each row of `rows` into `t`, its columns bound in order.
template <class Row>
void insert_rows(Db& db, const Table<Row>& t, const std::vector<Row>& rows) {
  Stmt st(db, insert_statement(t));
  for (const Row& row : rows) {
    int i = 0;
    for (const Column<Row>& c : t.columns) {
      ++i;
      std::visit(
          [&](const auto& v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, KnownInt>) st.bind_or_null(i, v.v, model::kUnknown);
            else
              st.bind(i, v);
          },
          c.get(row));
    }
    st.run();
  }
}

void write_tables(Db& db, const RankSummary& s, const std::string& file) {
  const report::RankReport& r = s.report;
  {
    Stmt m(db, "INSERT INTO meta VALUES (?, ?)");
    auto put = [&](const char* k, auto v) { m.bind(1, std::string_view(k)).bind(2, v).run(); };
    put("schema_version", int64_t(kSummarySchemaVersion));
    put("rank", int64_t(r.rank));
    put("world_size", int64_t(s.header.world_size));
    put("rank_given", int64_t(s.header.rank_given));
    put("source", std::string_view(r.source));
    put("format", std::string_view(r.format));
    put("clock_mapped", int64_t(s.arrivals.clock_mapped));
    put("trace_bytes", int64_t(s.trace_bytes));
    put("run_config",
        std::string_view(s.header.run_config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
    if (s.header.wall_start) put("wall_start_ns", *s.header.wall_start);
    if (!s.header.distributed.is_null())
      put("distributed",
          std::string_view(s.header.distributed.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  }
  insert_rows(db, kStepsTable, r.steps);
  insert_rows(db, kCollectivesTable, s.collectives);
  insert_rows(db, kCollectiveStatsTable, r.collectives);
  std::vector<PrefetchUnitRow> units;
  for (const metrics::StepPrefetch& sp : r.prefetch.steps)
    for (const metrics::UnitPrefetch& u : sp.units) units.push_back({sp.step, &u});
  insert_rows(db, kPrefetchUnitsTable, units);
  insert_rows(db, kMemoryTable, r.memory.rows);
  // The table keeps the activities that took the most time (kernel names run to hundreds of characters, and a
  // trace may hold hundreds of them); every one is in the report record, for `diff`.
  std::vector<std::pair<int64_t, const std::string*>> by_time;
  for (const auto& [name, ns] : s.device_time) by_time.push_back({ns, &name});
  std::sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (by_time.size() > kDeviceTimeRows) by_time.resize(kDeviceTimeRows);
  Stmt dt(db, "INSERT INTO device_time VALUES (?,?)");
  for (const auto& [ns, name] : by_time) dt.bind(1, std::string_view(*name)).bind(2, ns).run();
  Stmt wa(db, "INSERT INTO warnings VALUES (?)");
  for (const std::string& w : s.warnings) wa.bind(1, std::string_view(w)).run();
  Stmt re(db, "INSERT INTO report VALUES (?)");
  nlohmann::json record = {{"report", encode(r)}, {"device_time", s.device_time}};
  re.bind_blob(1, zip_record(nlohmann::json::to_cbor(record), file)).run();
}

// The meta table into `s`'s header: each key present and of its type, the rank within the world and the
// run config shallow enough to build, else one error naming the file and the key.
void read_meta(Db& db, const std::string& file, RankSummary& s) {
  Stmt m(db, "SELECT key, value, typeof(value) = 'integer' FROM meta");
  struct Value {
    int64_t i = 0;
    std::string text;
    bool integer = false;
  };
  std::map<std::string, Value> meta;
  while (m.row()) meta[std::string(m.text(0))] = {m.i64(1), std::string(m.text(1)), m.i64(2) != 0};
  auto need = [&](const char* k) -> const Value& {
    auto it = meta.find(k);
    if (it == meta.end()) throw trace::TraceError(file, 0, fmt::format("summary: meta has no '{}'", k));
    return it->second;
  };
  // An integer key within [lo, hi].
  auto integer = [&](const char* k, int64_t lo, int64_t hi) {
    const Value& v = need(k);
    if (!v.integer || v.i < lo || v.i > hi)
      throw trace::TraceError(file, 0,
                              fmt::format("summary: meta.{} is {}, not an integer from {} to {}", k,
                                          v.integer ? std::to_string(v.i) : "'" + v.text.substr(0, 40) + "'", lo, hi));
    return v.i;
  };
  if (!meta.count("schema_version"))
    throw trace::TraceError(file, 0,
                            fmt::format("summary: meta has no 'schema_version' (this shardscope reads version {}; "
                                        "summarize the traces again)",
                                        kSummarySchemaVersion));
  if (need("schema_version").i != kSummarySchemaVersion || !need("schema_version").integer)
    throw trace::TraceError(
        file, 0,
        fmt::format("summary of schema version {}; this shardscope reads version {} (summarize the traces again)",
                    need("schema_version").text.substr(0, 40), kSummarySchemaVersion));
  // As a trace's header: world_size 0 is "not said"; a rank the file gives lies within the world (the
  // loader's check, which a rank numbered by its place among the files is not held to).
  s.header.world_size = int(integer("world_size", 0, INT32_MAX));
  s.header.rank = int(integer("rank", 0, INT32_MAX - 1));
  s.header.rank_given = need("rank_given").i != 0;
  if (s.header.rank_given && s.header.world_size > 0 && s.header.rank >= s.header.world_size)
    throw trace::TraceError(
        file, 0,
        fmt::format("summary: meta.rank is {} but meta.world_size is {}: a run of {} ranks has "
                    "ranks 0 to {}",
                    s.header.rank, s.header.world_size, s.header.world_size, s.header.world_size - 1));
  s.header.source = need("source").text;
  s.header.file = file;  // the summary itself, which messages about it name first
  s.arrivals.clock_mapped = need("clock_mapped").i != 0;
  s.trace_bytes = uint64_t(integer("trace_bytes", 0, INT64_MAX));
  if (meta.count("wall_start_ns")) s.header.wall_start = meta["wall_start_ns"].i;
  const std::string& config = need("run_config").text;
  if (std::string why = DepthCheck::problem(config, nlohmann::json::input_format_t::json); !why.empty())
    throw trace::TraceError(file, 0, "summary: meta.run_config is not JSON a trace may hold: " + why);
  s.header.run_config = nlohmann::json::parse(config, nullptr, false);
  if (s.header.run_config.is_discarded()) throw trace::TraceError(file, 0, "summary: meta.run_config is not JSON");
  if (meta.count("distributed")) {
    const std::string& distributed = meta["distributed"].text;
    if (std::string why = DepthCheck::problem(distributed, nlohmann::json::input_format_t::json); !why.empty())
      throw trace::TraceError(file, 0, "summary: meta.distributed is not JSON a trace may hold: " + why);
    s.header.distributed = nlohmann::json::parse(distributed, nullptr, false);
    if (s.header.distributed.is_discarded()) throw trace::TraceError(file, 0, "summary: meta.distributed is not JSON");
  }
}

}  // namespace

bool is_summary_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;  // a FIFO would block the read; the loader refuses it by name
  char head[16] = {};
  std::ifstream in(path, std::ios::binary);
  if (!in.read(head, sizeof head) || !plugins::is_sqlite({head, sizeof head})) return false;
  try {
    // Its meta table makes it one, so that a summary missing its schema version is refused as a summary.
    Db db(path.string(), path.string(), kSummaryWording);
    return db.has_table("meta") && db.has_column("meta", "key") && db.has_column("meta", "value");
  } catch (const trace::TraceError&) {
    return false;  // another SQLite file (an Nsight Systems export, say)
  }
}

plugins::Format summary_format() {
  return {.name = "summary",
          .title = "shardscope rank summaries",
          .extensions = {".sqlite"},
          .magic = std::string(plugins::kSqliteMagic)};
}

plugins::Registry formats_registry(std::vector<std::string>& refusals) {
  plugins::Registry r = plugins::default_registry(refusals);
  r.add_format(summary_format());
  return r;
}

void write_summary(const fs::path& path, const RankSummary& s) {
  const fs::path tmp = path.string() + fmt::format(".tmp{}", ::getpid());
  std::error_code ec;
  fs::remove(tmp, ec);
  try {
    // Created here first: SQLite's "unable to open database file" would hide why (a folder not writable, a
    // full disk); the system's error says it, about the summary asked for.
    if (const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644); fd < 0)
      throw trace::TraceError(path.string(), 0, fmt::format("cannot write the summary: {}", std::strerror(errno)));
    else
      ::close(fd);
    Db db(tmp.string(), tmp.string(), kSummaryWording, Db::Mode::kCreate);
    // Small pages: a summary of a small trace stays small. No journal: a crash leaves only the temporary file.
    db.exec("PRAGMA page_size = 1024; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN");
    db.exec(schema().c_str());
    write_tables(db, s, tmp.string());
    db.exec("COMMIT");
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw trace::TraceError(path.string(), 0, fmt::format("cannot write the summary: {}", ec.message()));
  }
}

RankSummary read_summary(const fs::path& path, uint64_t order) {
  const std::string file = path.string();
  Db db(path.string(), path.string(), kSummaryWording);
  // Only plain tables are read: a view or virtual table of one of these names would run the file's SQL.
  for (const char* t : {"meta", "report", "collectives", "warnings"})
    if (!db.has_table(t))
      throw trace::TraceError(file, 0,
                              db.skipped().empty() ? fmt::format("summary: it has no '{}' table", t)
                                                   : fmt::format("summary: '{}' is not a plain table ({}): refused", t,
                                                                 fmt::join(db.skipped(), ", ")));
  RankSummary s;
  read_meta(db, file, s);
  {
    Stmt q(db, "SELECT cbor FROM report");
    if (!q.row()) throw trace::TraceError(file, 0, "summary: the report table is empty");
    const std::vector<uint8_t> cbor = unzip_record(q.blob(0), file);
    if (std::string why = DepthCheck::problem(cbor, nlohmann::json::input_format_t::cbor); !why.empty())
      throw trace::TraceError(file, 0, "summary: the report record is damaged: " + why);
    try {
      const nlohmann::json record = nlohmann::json::from_cbor(cbor);
      s.report = decode_rank_report(record.at("report"));
      s.device_time = record.at("device_time").get<std::map<std::string, int64_t>>();
    } catch (const nlohmann::json::exception& e) {
      throw trace::TraceError(file, 0, "summary: the report record is damaged: " + without_tag(e.what()));
    }
  }
  // meta.rank is the rank (what a user edits to renumber a summary); the record follows it.
  s.report.rank = s.report.prefetch.rank = s.report.memory.rank = s.header.rank;
  s.arrivals.key = {s.header.rank, order};
  Stmt co(db,
          "SELECT kind, ordinal, unit, group_size, bytes, issued_ns, start_ns, end_ns, wall_start_ns, seq, "
          "process_group FROM collectives "
          "ORDER BY kind, process_group, ordinal");
  std::map<std::pair<model::CollectiveKind, std::string>, int64_t> next;  // the ordinal each (kind, group) is at
  while (co.row()) {
    const int64_t seq = co.i64_or(9, model::kUnknown);
    CollectiveRecord c{kind_named(co.text(0), file),
                       co.i64(1),
                       seq == model::kUnknown ? -1 : seq,
                       std::string(co.text(10)),
                       int32_t(co.i64(2)),
                       int32_t(co.i64(3)),
                       co.i64_or(4, model::kUnknown),
                       co.i64_or(5, model::kUnknown),
                       co.i64(6),
                       co.i64(7),
                       co.i64(8)};
    int64_t& expected = next[{c.kind, c.group}];
    if (c.ordinal != expected)
      throw trace::TraceError(
          file, 0, fmt::format("summary: collectives of kind {} skip ordinal {}", model::to_string(c.kind), expected));
    ++expected;
    const metrics::InstanceSize size{model::sat_sub(c.end_ns, c.start_ns), c.bytes, c.group_size};
    if (c.seq >= 0 || !c.group.empty()) {
      s.arrivals.keyed.push_back(
          {{c.kind, c.group, c.seq >= 0, c.seq >= 0 ? c.seq : c.ordinal}, c.wall_start_ns, size});
    } else {
      s.arrivals.wall_start[c.kind].push_back(c.wall_start_ns);
      s.arrivals.size[c.kind].push_back(size);
    }
    s.collectives.push_back(c);
  }
  Stmt wa(db, "SELECT message FROM warnings ORDER BY rowid");
  while (wa.row()) s.warnings.emplace_back(wa.text(0));
  return s;
}

}  // namespace shardscope::analysis
