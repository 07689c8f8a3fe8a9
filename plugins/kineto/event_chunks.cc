#include "plugins/kineto/event_chunks.h"

#include <simdjson.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "plugins/common/text_window.h"
#include "tracer/format/error.h"
#include "tracer/format/parse_progress.h"

namespace shardscope::plugins {
namespace {

// Copies of the parser's strings, which the next batch overwrites; blocks never move.
class Arena {
 public:
  std::string_view keep(std::string_view s) {
    if (s.empty()) return {};
    if (s.size() > left_) {
      size_t n = std::max<size_t>(s.size(), 64 << 10);
      blocks_.push_back(std::make_unique<char[]>(n));
      at_ = blocks_.back().get(), left_ = n;
      if (blocks_.size() == 1) first_size_ = n;
    }
    std::memcpy(at_, s.data(), s.size());
    std::string_view out(at_, s.size());
    at_ += s.size(), left_ -= s.size();
    return out;
  }
  // Forgets the strings, keeping the first block for the next chunk.
  void clear() {
    if (blocks_.size() > 1) blocks_.resize(1);
    at_ = blocks_.empty() ? nullptr : blocks_[0].get(), left_ = blocks_.empty() ? 0 : first_size_;
  }

 private:
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* at_ = nullptr;
  size_t left_ = 0, first_size_ = 0;
};

struct Chunk {
  enum class End { Region, ArrayEnd, Truncated, Overrun, NotObject };
  const char* start = nullptr;  // where the scan began; nullptr: no plausible event start in the region
  const char* stop = nullptr;   // Region: the next chunk's start; ArrayEnd: after ']'; Truncated, NotObject: the byte
  const char* text_end = nullptr;  // where the text it scanned ended (a window's: the part read by then)
  End end = End::Region;
  size_t events = 0;                  // whole events scanned
  size_t parsed = 0;                  // of them, parsed (before any parse error)
  size_t skipped = 0;                 // of those, of a phase the importer does not read
  std::vector<Fields> fields;         // the others, parsed
  std::vector<const char*> batch_of;  // the start of each parsed event's batch
  std::vector<RawArg> raw;
  Arena arena;
  std::optional<std::pair<const char*, std::string>> parse_error;  // after `fields`: batch start, simdjson's words

  // Empty again, keeping its memory: fresh pages for every chunk would cost as much as parsing it.
  void clear() {
    start = stop = text_end = nullptr, end = End::Region, events = parsed = skipped = 0;
    fields.clear(), batch_of.clear(), raw.clear(), arena.clear(), parse_error.reset();
  }
};

// Parses the events [first, last) of one batch into the chunk; stops parsing at the first error.
class BatchParser {
 public:
  explicit BatchParser(bool keep_args) : keep_args_(keep_args) {}
  // True when the text parsed whole, as one array of objects and nothing after it.
  bool parse(const char* first, const char* last, Chunk& c) {
    buf_.clear();
    buf_.push_back('[');
    buf_.append(first, size_t(last - first));
    buf_.push_back(']');
    size_t len = buf_.size();
    // Old Kineto wrote names byte for byte, invalid UTF-8 included; simdjson rejects such text, so replace
    // the bad bytes rather than refuse the whole file.
    if (!simdjson::validate_utf8(buf_.data(), len)) replace_invalid_utf8(buf_);
    buf_.append(simdjson::SIMDJSON_PADDING, '\0');
    try {
      // The parser grows by half again at least: simdjson would reallocate (fresh pages) for each batch a
      // little longer than any before.
      if (parser_.capacity() < len)
        if (auto e = parser_.allocate(std::max(len, parser_.capacity() * 3 / 2))) throw simdjson::simdjson_error(e);
      simdjson::ondemand::document doc = parser_.iterate(buf_.data(), len, buf_.size());
      for (auto elem : doc.get_array()) {
        Fields& f = c.fields.emplace_back();  // read in place: a copy of its 360 bytes was 3 % of the parse
        if (keep_args_) raw_.clear(), f.raw = &raw_;
        read_event(elem.get_object(), f);
        if (phase_read(f.ph)) {
          f.index = c.parsed;
          store(f, c);
          c.batch_of.push_back(first);
        } else {
          c.fields.pop_back();
          ++c.skipped;
        }
        ++c.parsed;
      }
      const char* after = nullptr;
      return doc.current_location().get(after) == simdjson::OUT_OF_BOUNDS;
    } catch (const simdjson::simdjson_error& e) {
      if (c.fields.size() > c.batch_of.size()) c.fields.pop_back();  // the event that failed
      c.parse_error.emplace(first, e.what());
      return false;
    }
  }

 private:
  void store(Fields& f, Chunk& c) {
    Arena& a = c.arena;
    for (std::string_view* s :
         {&f.ph, &f.cat, &f.name, &f.coll_name, &f.dtype, &f.meta_name, &f.op_in_type, &f.pg_name, &f.pid_name})
      *s = a.keep(*s);
    if (f.raw) {
      f.raw_begin = uint32_t(c.raw.size()), f.raw_count = uint32_t(f.raw->size());
      for (RawArg r : *f.raw) {
        r.key = a.keep(r.key), r.text = a.keep(r.text);
        c.raw.push_back(r);
      }
      f.raw = nullptr;
    }
  }

  bool keep_args_;
  simdjson::ondemand::parser parser_;
  std::string buf_;
  std::vector<RawArg> raw_;
};

bool is_json_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The first '{' in [from, to) that follows '}' and ',' (whitespace between, looking back no further than
// `lo`): where an event would start.
const char* guess_event_start(const char* lo, const char* from, const char* to) {
  for (const char* p = from; p < to; ++p) {
    p = static_cast<const char*>(std::memchr(p, '{', size_t(to - p)));
    if (!p) return nullptr;
    const char* q = p;
    while (q > lo && is_json_space(q[-1])) --q;
    if (q == lo || q[-1] != ',') continue;
    --q;
    while (q > lo && is_json_space(q[-1])) --q;
    if (q > lo && q[-1] == '}') return p;
  }
  return nullptr;
}

// The batch starting at event `p`, parsed without the byte scan: its end is guessed (the first "}" "," "{"
// in the next block) and simdjson's parse of [p, guess) as an array of objects proves the guess, since text
// cut inside a string or an object does not parse. Returns the next batch's start; nullptr (the chunk as it
// was) when there is no guess or it does not parse, and the batch is scanned as before: same events, errors.
const char* whole_batch(const ChunkText& t, const char* p, const char* limit, const ChunkOptions& o, BatchParser& bp,
                        Chunk& c) {
  const size_t next_block = (size_t(p - t.begin) / o.batch_bytes + 1) * o.batch_bytes;
  if (next_block >= size_t(limit - t.begin)) return nullptr;
  const char* from = t.begin + next_block;
  const char* next = guess_event_start(p, from, std::min(limit, from + o.batch_bytes));
  if (!next) return nullptr;
  const char* last = next;  // after the '}' before the guess
  while (is_json_space(last[-1])) --last;
  --last;  // the ','
  while (is_json_space(last[-1])) --last;
  const size_t fields = c.fields.size(), raw = c.raw.size(), parsed = c.parsed, skipped = c.skipped;
  if (bp.parse(p, last, c)) {
    c.events += c.parsed - parsed;
    return next;
  }
  c.fields.resize(fields), c.batch_of.resize(fields), c.raw.resize(raw);  // the arena's copies stay, unused
  c.parsed = parsed, c.skipped = skipped, c.parse_error.reset();
  return nullptr;
}

// Scans from `start` the events that start before `region_end` and parses them batch by batch. `limit`
// (below the text's end for a guessed start) bounds how far a scan may run: a wrong guess costs little.
void scan_chunk(const ChunkText& t, const char* start, const char* region_end, const char* limit, const ChunkOptions& o,
                BatchParser& bp, Chunk& c) {
  c.start = start, c.text_end = t.end;
  if (!c.fields.capacity()) {
    // Room for a region's events at once (Kineto's take 150 bytes and more): pages are touched as events
    // fill them, never twice over as each doubling would (half a small file's page faults were those).
    c.fields.reserve(o.chunk_bytes / 128), c.batch_of.reserve(o.chunk_bytes / 128);
  }
  const char* p = start;
  const char* batch = nullptr;
  const char* last_end = nullptr;
  auto block = [&](const char* q) { return size_t(q - t.begin) / o.batch_bytes; };
  auto flush = [&] {
    if (batch && !c.parse_error) bp.parse(batch, last_end, c);
    batch = nullptr;
  };
  // Ends the scan; the events of the last batch are parsed unless the chunk is void (an error, an overrun).
  auto done = [&](Chunk::End end, const char* stop) {
    if (end != Chunk::End::NotObject && end != Chunk::End::Overrun) flush();
    c.end = end, c.stop = stop;
  };
  for (;;) {
    p = skip_space(p, limit);
    if (p == t.end) return done(Chunk::End::Truncated, p);
    if (p == limit) return done(Chunk::End::Overrun, p);
    if (*p == ']') return done(Chunk::End::ArrayEnd, p + 1);
    if (*p == ',') {
      ++p;
      continue;
    }
    if (p >= region_end) return done(Chunk::End::Region, p);
    if (*p != '{') return done(Chunk::End::NotObject, p);
    if (o.guess_batches && !batch && !c.parse_error) {
      if (const char* next = whole_batch(t, p, limit, o, bp, c)) {
        p = next;
        continue;
      }
    }
    const char* e = skip_container(p, limit);
    if (!e) return done(limit == t.end ? Chunk::End::Truncated : Chunk::End::Overrun, p);
    if (batch && block(p) != block(batch)) flush();
    if (!batch) batch = p;
    last_end = e;
    ++c.events;
    p = e;
  }
}

// Chunks scanned ahead by worker threads, at most `window` regions beyond the one being consumed.
class Workers {
 public:
  Workers(const ChunkText& t, const char* begin, const ChunkOptions& o, bool keep_args)
      : t_(t), begin_(begin), o_(o), keep_args_(keep_args), first_(region(begin)), next_(first_), consumed_(first_) {
    regions_ = (size_t(t.end - t.begin) + o.chunk_bytes - 1) / o.chunk_bytes;
    done_.resize(regions_);
    window_ = o.threads + 1;  // each chunk holds its events' fields (over 300 bytes each): few at a time
    avail_ = t.window ? t.window->end() : t.end, whole_ = !t.window || t.window->whole();
    busy_.assign(o.threads, SIZE_MAX);
    for (unsigned k = 0; k < o.threads; ++k) pool_.emplace_back([this, k] { work(k); });
  }
  ~Workers() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& th : pool_) th.join();
  }
  size_t region(const char* p) const { return size_t(p - t_.begin) / o_.chunk_bytes; }
  const char* region_end(size_t k) const {
    return t_.begin + std::min(size_t(t_.end - t_.begin), (k + 1) * o_.chunk_bytes);
  }

  // A window's text has been read up to `avail` (`whole`: the file's end).
  void grown(const char* avail, bool whole) {
    {
      std::lock_guard lock(mu_);
      avail_ = avail, whole_ = whole;
    }
    cv_.notify_all();
  }
  // The first region a worker may still read: one it is scanning, or the next it may take (none: SIZE_MAX).
  // The next counts: when the consumer skips regions (an event across them), slide() runs before take()
  // moves next_ past them, and a worker could take a skipped region whose text was just given back.
  size_t lowest_busy() {
    std::lock_guard lock(mu_);
    const size_t next = next_ < regions_ ? next_ : SIZE_MAX;
    return std::min(next, *std::min_element(busy_.begin(), busy_.end()));
  }

  // Region k's chunk, as a worker scanned it; `used` (the previous one) goes back to be filled again.
  std::unique_ptr<Chunk> take(size_t k, std::unique_ptr<Chunk> used) {
    std::unique_lock lock(mu_);
    if (used) free_.push_back(std::move(used));
    consumed_ = k;
    next_ = std::max(next_, k);  // regions skipped (an event across them) are never scanned
    for (; released_ < k; ++released_)
      if (done_[released_]) free_.push_back(std::move(done_[released_]));
    cv_.notify_all();
    cv_.wait(lock, [&] { return done_[k] != nullptr; });
    return std::move(done_[k]);
  }

 private:
  // Whether region k's text, and the region after it that its last events may reach into, has been read.
  bool readable(size_t k) const { return whole_ || region_end(k) + o_.chunk_bytes <= avail_; }

  void work(unsigned id) {
    BatchParser bp(keep_args_);
    for (;;) {
      size_t k;
      ChunkText t = t_;  // the text as far as it is read now
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || next_ >= regions_ || (next_ < consumed_ + window_ && readable(next_)); });
        if (stop_ || next_ >= regions_) return;
        k = next_++;
        busy_[id] = k, t.end = avail_;
      }
      std::unique_ptr<Chunk> c;
      {
        std::lock_guard lock(mu_);
        if (!free_.empty()) c = std::move(free_.back()), free_.pop_back();
      }
      if (c) c->clear();
      else
        c = std::make_unique<Chunk>();
      try {
        // A window's worker looks back no further than its region, which the consumer keeps while it works.
        const char* from = t.begin + k * o_.chunk_bytes;
        const char* lo = t.window ? from : begin_;
        const char* start = k == first_    ? begin_
                            : from < t.end ? guess_event_start(lo, from, std::min(t.end, region_end(k)))
                                           : nullptr;
        const char* limit = k == first_ ? t.end : std::min(t.end, region_end(k) + o_.chunk_bytes);
        if (start) scan_chunk(t, start, region_end(k), limit, o_, bp, *c);
      } catch (...) {  // bad_alloc, say: the consumer scans the chunk again and meets it itself
        c->start = nullptr;
      }
      std::lock_guard lock(mu_);
      busy_[id] = SIZE_MAX;
      if (k >= consumed_) done_[k] = std::move(c);
      cv_.notify_all();
    }
  }

  const ChunkText& t_;
  const char* begin_;
  const ChunkOptions& o_;
  bool keep_args_;
  size_t regions_ = 0, window_ = 0, first_, next_, consumed_, released_ = first_;
  const char* avail_ = nullptr;  // how far the text is read (a window's; else its end)
  bool whole_ = true;
  std::vector<size_t> busy_;  // the region each worker is scanning; SIZE_MAX: none
  std::vector<std::unique_ptr<Chunk>> done_, free_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::thread> pool_;
};

// Reads a window's text on far enough for the workers' regions ahead of region k, and gives back what lies
// behind both k and the regions the workers are still scanning (the array's first piece and what precedes it
// stay: the members before the array are read after it).
void slide(const ChunkText& t, const char* begin, size_t k, const ChunkOptions& o, std::optional<Workers>& workers) {
  TextWindow* w = t.window;
  const size_t ahead = k + (workers ? o.threads + 2 : 1);
  w->extend(t.begin + std::min(size_t(t.end - t.begin), ahead * o.chunk_bytes + o.chunk_bytes));
  const size_t behind = workers ? std::min(k, workers->lowest_busy()) : k;
  w->release(begin, t.begin + behind * o.chunk_bytes);
  if (workers) workers->grown(w->end(), w->whole());
}

// Region k's chunk from `at` scanned on this thread; through a window, read on and scanned again while its
// last event runs past the text read so far.
void scan_here(const ChunkText& t, const char* at, size_t k, const ChunkOptions& o, BatchParser& bp,
               std::optional<Workers>& workers, std::unique_ptr<Chunk>& c) {
  const char* region_end = t.begin + std::min(size_t(t.end - t.begin), (k + 1) * o.chunk_bytes);
  for (;;) {
    if (c) c->clear();
    else
      c = std::make_unique<Chunk>();
    ChunkText read = t;
    if (t.window) read.end = t.window->end();
    scan_chunk(read, at, region_end, read.end, o, bp, *c);
    if (!t.window || c->end != Chunk::End::Truncated || t.window->whole()) return;
    const char* end = t.window->end();
    t.window->extend(end + std::max<ptrdiff_t>(end - at, ptrdiff_t(o.chunk_bytes)));  // twice as far: few rescans
    if (workers) workers->grown(t.window->end(), t.window->whole());
  }
}

}  // namespace

ArrayEnd parse_event_array(const ChunkText& t, const char* begin, const ChunkOptions& o, bool keep_args, size_t& events,
                           size_t& skipped, const AddEvent& add, std::exception_ptr& pending) {
  const size_t batch = std::max<size_t>(o.batch_bytes, 1);
  const ChunkOptions opt{o.threads, std::max(batch, o.chunk_bytes / batch * batch), batch, o.guess_batches};
  BatchParser bp(keep_args);
  std::optional<Workers> workers;
  if (opt.threads > 1 && size_t(t.end - begin) > opt.chunk_bytes)
    workers.emplace(t, begin, opt, keep_args);  // one region: no threads
  auto region = [&](const char* p) { return size_t(p - t.begin) / opt.chunk_bytes; };
  const char* at = begin;
  std::unique_ptr<Chunk> c;
  for (;;) {
    const size_t k = region(at);
    if (t.window) slide(t, begin, k, opt, workers);
    if (workers) c = workers->take(k, std::move(c));
    // A worker's chunk counts only when it began where the chunk before it stopped and ran to its end (the
    // file's end, for a cut: not merely the end of the text read when it was scanned).
    const bool cut_short =
        c && c->end == Chunk::End::Truncated && t.window && !(t.window->whole() && c->text_end == t.window->end());
    if (!c || c->start != at || c->end == Chunk::End::Overrun || cut_short) scan_here(t, at, k, opt, bp, workers, c);
    if (c->end == Chunk::End::NotObject)
      throw trace::TraceError(t.name, uint64_t(c->stop - t.begin),
                              fmt::format("{}[{}] is not an object", t.array, events + c->events));
    if (!pending) skipped += c->skipped;
    for (size_t i = 0; i < c->fields.size() && !pending; ++i) {
      const Fields& f = c->fields[i];
      if (!add(f, std::span<const RawArg>(c->raw.data() + f.raw_begin, f.raw_count)))
        pending = std::make_exception_ptr(trace::TraceError(
            t.name, uint64_t(c->batch_of[i] - t.begin),
            fmt::format("{}[{}] (\"{}\", in the events that start here): its time is out of range (ts + "
                        "baseTimeNanoseconds or ts + dur past ±9.2e18 ns)",
                        t.array, events + f.index, std::string(f.name.substr(0, 60)))));
    }
    if (c->parse_error && !pending)
      pending = std::make_exception_ptr(
          trace::TraceError(t.name, uint64_t(c->parse_error->first - t.begin),
                            "not valid JSON in the events that start here: " + c->parse_error->second));
    events += c->events;
    trace::parse_progress(uint64_t(c->stop - t.begin),
                          events);  // once per chunk (2 MB): a loader's progress and cancel
    if (c->end == Chunk::End::ArrayEnd) return {c->stop, 0};
    if (c->end == Chunk::End::Truncated) return {nullptr, uint64_t(c->stop - t.begin)};
    at = c->stop;
  }
}

}  // namespace shardscope::plugins
