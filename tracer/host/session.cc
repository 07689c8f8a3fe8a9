// The tracing session: thread registration, the background flusher, and record serialization.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tracer/format/keys.h"
#include "tracer/format/serialize.h"
#include "tracer/format/writer.h"
#include "tracer/tracer.h"

namespace shardscope::tracer {
namespace detail {
std::atomic<bool> g_on{false};
std::atomic<uint64_t> g_generation{0};
thread_local ThreadBuffer* t_buffer = nullptr;
thread_local uint64_t t_generation = 0;
}  // namespace detail

namespace {

using detail::g_generation;
using detail::g_on;
using json = nlohmann::json;

// How often a (monotonic, realtime) pair goes into the file besides start and stop.
constexpr int64_t kClockSyncEveryNs = 1'000'000'000;

// Keeps the thread's buffer alive while the thread runs, even across a stop; kept apart from t_buffer so the
// hot path reads only trivially-destructible thread_locals.
thread_local std::shared_ptr<ThreadBuffer> t_owner;

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

int64_t os_tid() { return int64_t(syscall(SYS_gettid)); }

// A backend's hooks (see detail::set_backend_hooks); atomics so the flusher reads them without a lock.
std::atomic<void (*)()> g_on_flush{nullptr};
std::atomic<void (*)()> g_before_stop{nullptr};

void run_flush_hook() {
  if (auto f = g_on_flush.load()) f();
}

class Session {
 public:
  explicit Session(const Options& o) : opts_(o), generation_(g_generation.load() + 1), writer_(o.path, header(o)) {
    std::string pname = o.process_name.empty() ? "rank " + std::to_string(o.rank) : o.process_name;
    meta_event(keys::kProcessName, 0, {{keys::kName, pname}});
    meta_event(keys::kProcessSortIndex, 0, {{keys::kSortIndex, o.rank}});
    tsc_.sample();
    write_clock_sync();
    writer_.flush();
    flusher_ = std::thread([this] { run(); });
  }

  uint64_t generation() const { return generation_; }

  ThreadBuffer* add_thread() {
    char name[32] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    std::lock_guard<std::mutex> lock(mu_);
    uint32_t track = next_track_++;
    auto buf = std::make_shared<ThreadBuffer>(track, os_tid());
    buffers_.push_back(buf);
    // Named in the file only once the thread records on its own track (see drain): a thread that only
    // records on named tracks would otherwise leave an empty track behind.
    thread_names_[buf.get()] = {name[0] ? name : "thread", false};
    t_owner = std::move(buf);
    return t_owner.get();
  }

  uint32_t add_track(std::string_view name) {
    std::lock_guard<std::mutex> lock(mu_);
    uint32_t track = next_track_++;
    queue_track_name(track, name, -1);
    return track;
  }

  void rename_thread(ThreadBuffer* b, std::string_view name) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = thread_names_.find(b);
    if (it == thread_names_.end()) return;
    it->second.name = std::string(name);
    if (it->second.announced) queue_track_name(b->track(), name, b->os_tid());
  }

  int rank() const { return opts_.rank; }

  void queue_serialized(std::vector<std::string>&& events) {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::string& e : events) pending_.push_back(std::move(e));
  }

  void queue_metadata(const json& patch) {
    std::string s;
    trace::append_event(s, trace::Event{'M', keys::kMetadataPatch, "", opts_.rank, 0, 0, 0, "", patch});
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back(std::move(s));
  }

  uint64_t dropped() {
    std::lock_guard<std::mutex> lock(flush_mu_);
    return dropped_written_;
  }

  // Drains every buffer and hands the file to the kernel; from the flusher, or from tracer::flush().
  void flush_now() {
    std::lock_guard<std::mutex> lock(flush_mu_);
    try {
      drain();
      if (now_ns() - last_clock_sync_ >= kClockSyncEveryNs) write_clock_sync();
      writer_.flush();
    } catch (const std::exception& e) {
      // A full disk must not take the traced program down: stop tracing, keep what was written.
      std::fprintf(stderr, "shardscope tracer: %s; tracing stops here\n", e.what());
      g_on.store(false);
    }
  }

  // Stops the flusher, writes what is left and closes the file. Tracing is already off.
  void finish() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    flusher_.join();
    drain();
    write_clock_sync();
    writer_.close();
  }

 private:
  static json header(const Options& o) {
    ClockPair c = sample_clock_pair();
    return {
        {keys::kSchemaVersion, keys::kSchemaVersionValue},
        {keys::kRank, o.rank},
        {keys::kWorldSize, o.world_size},
        {keys::kHost, host_name()},
        {keys::kOsPid, int64_t(getpid())},
        {keys::kClock,
         {{keys::kClockDomain, keys::kClockMonotonic},
          {keys::kClockUnit, keys::kUnitNs},
          {keys::kClockSync,
           {{keys::kMonotonicNs, c.monotonic_ns},
            {keys::kRealtimeNs, c.realtime_ns},
            {keys::kBracketNs, c.bracket_ns}}}}},
        {keys::kRunConfig, o.run_config},
        {keys::kTracer,
         {{keys::kTracerVersion, SHARDSCOPE_VERSION},
          {keys::kFlushIntervalMs, o.flush_interval.count()},
          {keys::kNvtx, bool(SHARDSCOPE_HAVE_NVTX)},
          {keys::kTimestampSource,
           detail::g_use_tsc.load() ? "tsc interpolated to CLOCK_MONOTONIC" : "clock_gettime"}}},
    };
  }

  void queue_track_name(uint32_t track, std::string_view name, int64_t tid) {
    json args = {{keys::kName, std::string(name)}};
    if (tid >= 0) args[keys::kOsTid] = tid;
    std::string s;
    trace::append_event(s, trace::Event{'M', keys::kThreadName, "", opts_.rank, track, 0, 0, "", args});
    pending_.push_back(std::move(s));
    s.clear();
    trace::append_event(
        s, trace::Event{'M', keys::kThreadSortIndex, "", opts_.rank, track, 0, 0, "", {{keys::kSortIndex, track}}});
    pending_.push_back(std::move(s));
  }

  void meta_event(const char* name, uint32_t track, json args) {
    std::string s;
    trace::append_event(s, trace::Event{'M', name, "", opts_.rank, track, 0, 0, "", std::move(args)});
    writer_.append_serialized(s);
  }

  void write_clock_sync() {
    ClockPair c = sample_clock_pair();
    meta_event(
        keys::kClockSyncEvent, 0,
        {{keys::kMonotonicNs, c.monotonic_ns}, {keys::kRealtimeNs, c.realtime_ns}, {keys::kBracketNs, c.bracket_ns}});
    last_clock_sync_ = c.monotonic_ns;
  }

  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, opts_.flush_interval, [this] { return stopping_; });
      if (stopping_) break;
      lock.unlock();
      run_flush_hook();
      flush_now();
      lock.lock();
    }
  }

  // Writes every pending metadata event and every committed record; forgets buffers whose thread has exited.
  void drain() {
    tsc_.sample();  // every record drained below was stamped before this sample (or just after)
    std::vector<std::string> pending;
    std::vector<std::shared_ptr<ThreadBuffer>> buffers;
    std::vector<ThreadBuffer*> exited;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending.swap(pending_);
      buffers = buffers_;
      // Two owners (buffers_ and our copy) means the thread's t_owner is gone: this drain is its last.
      for (auto& b : buffers)
        if (b.use_count() == 2) exited.push_back(b.get());
    }
    for (const std::string& s : pending) writer_.append_serialized(s);
    for (auto& b : buffers) {
      uint32_t thread_track = b->track();
      b->drain([&](const Record& r) {
        if (r.track == 0) announce(b.get());
        scratch_.clear();
        serialize(r, r.track ? r.track : thread_track);
        writer_.append_serialized(scratch_);
      });
    }
    uint64_t dropped = dropped_exited_;
    for (auto& b : buffers) dropped += b->dropped();
    if (dropped != dropped_written_) {
      // The total so far, as a header patch: the last one read wins, so a cut file still tells its losses.
      std::string s;
      trace::append_event(
          s, trace::Event{'M', keys::kMetadataPatch, "", opts_.rank, 0, 0, 0, "", {{keys::kDroppedRecords, dropped}}});
      writer_.append_serialized(s);
      dropped_written_ = dropped;
    }
    if (exited.empty()) return;
    for (auto& b : buffers)
      if (std::find(exited.begin(), exited.end(), b.get()) != exited.end()) dropped_exited_ += b->dropped();
    std::lock_guard<std::mutex> lock(mu_);
    std::erase_if(buffers_, [&](const std::shared_ptr<ThreadBuffer>& b) {
      return std::find(exited.begin(), exited.end(), b.get()) != exited.end();
    });
    for (ThreadBuffer* b : exited) thread_names_.erase(b);
  }

  // Writes a thread's track name the first time the thread records on its own track.
  void announce(ThreadBuffer* b) {
    std::lock_guard<std::mutex> lock(mu_);
    ThreadName& n = thread_names_[b];
    if (n.announced) return;
    n.announced = true;
    queue_track_name(b->track(), n.name, b->os_tid());
    for (const std::string& s : pending_) writer_.append_serialized(s);
    pending_.clear();
  }

  int64_t to_ns(int64_t stamp) const {
    return detail::g_use_tsc.load(std::memory_order_relaxed) ? tsc_.to_ns(stamp) : stamp;
  }

  void serialize(const Record& r, uint32_t track) {
    std::string& o = scratch_;
    o += "{\"ph\":\"";
    o.push_back(r.kind == Record::Kind::Complete ? 'X' : r.kind == Record::Kind::Instant ? 'i' : 'C');
    o += "\",\"name\":";
    trace::append_json_string(o, r.name);
    o += ",\"cat\":";
    trace::append_json_string(o, r.cat);
    o += ",\"pid\":";
    o += std::to_string(opts_.rank);
    o += ",\"tid\":";
    o += std::to_string(track);
    int64_t ts = r.ns_times ? r.ts : to_ns(r.ts);
    o += ",\"ts\":";
    trace::append_us(o, ts);
    if (r.kind == Record::Kind::Complete) {
      o += ",\"dur\":";
      trace::append_us(o, r.ns_times ? r.dur : std::max<int64_t>(0, to_ns(r.dur) - ts));
    } else if (r.kind == Record::Kind::Instant) {
      o += ",\"s\":\"t\"";
    }
    o += ",\"args\":{";
    if (r.kind == Record::Kind::Counter) {
      o += "\"value\":";
      o += std::to_string(r.dur);
    } else if (r.kind == Record::Kind::CounterDouble) {
      double d;
      std::memcpy(&d, &r.dur, sizeof d);
      o += "\"value\":";
      o += json(d).dump();
    }
    for (uint8_t i = 0; i < r.nargs; ++i) {
      const Arg& a = r.args[i];
      if (i > 0 || r.kind == Record::Kind::Counter || r.kind == Record::Kind::CounterDouble) o.push_back(',');
      trace::append_json_string(o, a.key);
      o.push_back(':');
      switch (a.kind) {
        case Arg::Kind::Int: o += std::to_string(a.i); break;
        case Arg::Kind::Double: o += json(a.d).dump(); break;
        case Arg::Kind::String: trace::append_json_string(o, a.s); break;
      }
    }
    o += "}}";
  }

  Options opts_;
  const uint64_t generation_;
  trace::Writer writer_;
  std::mutex mu_;        // buffers_, pending_, next_track_, stopping_
  std::mutex flush_mu_;  // the writer and the drain state, shared by the flusher and tracer::flush()
  std::condition_variable cv_;
  bool stopping_ = false;
  uint32_t next_track_ = 1;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers_;
  std::vector<std::string> pending_;
  struct ThreadName {
    std::string name;
    bool announced;
  };
  std::unordered_map<ThreadBuffer*, ThreadName> thread_names_;
  std::thread flusher_;
  std::string scratch_;
  int64_t last_clock_sync_ = 0;
  TscClock tsc_;
  uint64_t dropped_written_ = 0;
  uint64_t dropped_exited_ = 0;  // from buffers already forgotten
};

std::mutex g_lifecycle;
Session* g_session = nullptr;  // guarded by g_lifecycle

std::mutex g_intern_mu;
std::unordered_set<std::string>* g_interned = new std::unordered_set<std::string>;  // never freed: names outlive us

void after_fork_in_child() {
  // The flusher thread does not exist in the child; writing to the parent's file would corrupt it.
  g_on.store(false);
  g_on_flush.store(nullptr);
  g_before_stop.store(nullptr);
  g_session = nullptr;  // leaked on purpose: its mutexes may be held by threads that are gone
}

}  // namespace

namespace detail {

ThreadBuffer* register_thread() {
  std::lock_guard<std::mutex> lock(g_lifecycle);
  if (!g_session) return nullptr;
  ThreadBuffer* b = g_session->add_thread();
  t_buffer = b;
  t_generation = g_session->generation();
  return b;
}

void record(const char* name, const char* cat, Record::Kind kind, int64_t ts, int64_t dur, uint32_t track,
            bool ns_times, std::initializer_list<Arg> args) {
  ThreadBuffer* b = local_buffer();
  if (!b) return;
  Record* r = b->reserve();
  if (!r) return;
  r->ts = ts;
  r->dur = dur;
  r->name = name;
  r->cat = cat;
  r->track = track;
  r->kind = kind;
  r->ns_times = ns_times;
  r->nargs = 0;
  for (const Arg& a : args)
    if (r->nargs < kMaxArgs) r->args[r->nargs++] = a;
  b->commit();
}

}  // namespace detail

void start(const Options& options) {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit([] { stop(); });
    pthread_atfork(nullptr, nullptr, after_fork_in_child);
    // Once: a thread may still be ending a range stamped in an earlier session.
    detail::g_use_tsc.store(invariant_tsc() && std::getenv("SHARDSCOPE_NO_TSC") == nullptr);
  });
  std::lock_guard<std::mutex> lock(g_lifecycle);
  if (g_session) throw std::runtime_error("shardscope tracer: a session is already running");
  g_session = new Session(options);  // throws trace::TraceError if the file cannot be created
  g_generation.store(g_session->generation());
  g_on.store(true);
}

void stop() {
  if (!running()) return;
  // The backend's last events (a final CUPTI flush) must reach the session before it closes.
  if (auto f = g_before_stop.load()) f();
  Session* s;
  {
    std::lock_guard<std::mutex> lock(g_lifecycle);
    if (!g_session) return;
    g_on.store(false);
    s = g_session;
    g_session = nullptr;
  }
  try {
    s->finish();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shardscope tracer: %s\n", e.what());
  }
  delete s;
}

void flush() {
  run_flush_hook();
  std::lock_guard<std::mutex> lock(g_lifecycle);
  if (g_session) g_session->flush_now();
}

uint64_t dropped_records() {
  std::lock_guard<std::mutex> lock(g_lifecycle);
  return g_session ? g_session->dropped() : 0;
}

bool running() {
  std::lock_guard<std::mutex> lock(g_lifecycle);
  return g_session != nullptr;
}

const char* intern(std::string_view s) {
  std::lock_guard<std::mutex> lock(g_intern_mu);
  return g_interned->emplace(s).first->c_str();
}

uint32_t track(std::string_view name) {
  std::lock_guard<std::mutex> lock(g_lifecycle);
  return g_session ? g_session->add_track(name) : 0;
}

uint32_t this_thread_track() {
  ThreadBuffer* b = detail::local_buffer();
  return b ? b->track() : 0;
}

void name_this_thread(std::string_view name) {
  ThreadBuffer* b = detail::local_buffer();
  if (!b) return;
  std::lock_guard<std::mutex> lock(g_lifecycle);
  if (g_session) g_session->rename_thread(b, name);
}

void counter(const char* name, double value) {
  if (!enabled()) return;
  int64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  detail::record(name, "counter", Record::Kind::CounterDouble, stamp(), bits, 0, false, {});
}

void metadata(const nlohmann::json& patch) {
  std::lock_guard<std::mutex> lock(g_lifecycle);
  if (g_session) g_session->queue_metadata(patch);
}

void emit(const std::vector<trace::Event>& events) {
  if (!enabled() || events.empty()) return;
  int rank;
  {
    std::lock_guard<std::mutex> lock(g_lifecycle);
    if (!g_session) return;
    rank = g_session->rank();
  }
  // Serialized outside the lock: a batch of GPU records is large and Range's thread registration waits on it.
  std::vector<std::string> serialized(events.size());
  trace::Event copy;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].pid == rank) {
      trace::append_event(serialized[i], events[i]);
      continue;
    }
    copy = events[i];
    copy.pid = rank;
    trace::append_event(serialized[i], copy);
  }
  std::lock_guard<std::mutex> lock(g_lifecycle);
  if (g_session) g_session->queue_serialized(std::move(serialized));
}

namespace detail {
void set_backend_hooks(BackendHooks hooks) {
  g_on_flush.store(hooks.on_flush);
  g_before_stop.store(hooks.before_stop);
}
}  // namespace detail

}  // namespace shardscope::tracer
