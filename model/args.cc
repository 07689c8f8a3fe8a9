#include "model/args.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <tuple>

#include "model/trace.h"

namespace shardscope::model {

namespace {

uint64_t read_varint(const uint8_t*& p) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    uint8_t b = *p++;
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
}

uint64_t zigzag(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }
int64_t unzigzag(uint64_t v) { return int64_t(v >> 1) ^ -int64_t(v & 1); }

}  // namespace

std::vector<Arg> EventArgs::of(uint32_t track, uint32_t index) const {
  std::vector<Arg> out;
  if (track >= ranges_.size() || index >= ranges_[track].size()) return out;
  const uint8_t* p = blob_.data() + ranges_[track][index].begin;
  const uint8_t* end = blob_.data() + ranges_[track][index].end;
  while (p < end) {
    uint64_t head = read_varint(p);
    Arg a;
    a.key = keys_[head >> 3];
    a.value.kind = ArgKind(head & 7);
    switch (a.value.kind) {
      case ArgKind::Int: a.value.i = unzigzag(read_varint(p)); break;
      case ArgKind::Bool: a.value.i = *p++; break;
      case ArgKind::Double: {
        uint64_t bits;
        std::memcpy(&bits, p, 8);
        p += 8;
        a.value.d = std::bit_cast<double>(bits);
        break;
      }
      case ArgKind::String:
      case ArgKind::Json: a.value.s = StringId(read_varint(p)); break;
    }
    out.push_back(a);
  }
  return out;
}

std::optional<ArgValue> EventArgs::find(uint32_t track, uint32_t index, StringId key) const {
  for (const Arg& a : of(track, index))
    if (a.key == key) return a.value;
  return std::nullopt;
}

// The blob's bytes, not its capacity: it is the builder's, grown by doubling, and the room past its end was
// never written, so it holds no memory.
size_t EventArgs::memory_bytes() const {
  size_t n = blob_.size() + keys_.capacity() * sizeof(StringId) + ranges_.capacity() * sizeof(ranges_[0]);
  for (const auto& r : ranges_) n += r.capacity() * sizeof(Range);
  return n;
}

size_t EventArgs::events_with_args() const {
  size_t n = 0;
  for (const auto& r : ranges_)
    for (const Range& x : r) n += x.end > x.begin;
  return n;
}

void ArgsBuilder::begin(uint32_t track, uint32_t index) {
  // Offsets are 32-bit: past 4 GiB of args the rest are not kept (the events still are).
  open_ = blob_.size() < UINT32_MAX - (uint64_t(1) << 20);
  if (!open_) return;
  if (!spans_.empty() && spans_.back().track == track && spans_.back().index == index)
    return;  // the same event again: append
  spans_.push_back({track, index, uint32_t(blob_.size()), uint32_t(blob_.size())});
  prev_ = 0;
}

void ArgsBuilder::close_arg() {
  if (blob_.size() < UINT32_MAX) {
    spans_.back().end = uint32_t(blob_.size());
    return;
  }
  blob_.resize(spans_.back().end);  // one event's args across the bound: the rest of them are not kept
  open_ = false;
}

void ArgsBuilder::put_varint(uint64_t v) {
  while (v >= 0x80) {
    blob_.push_back(uint8_t(v | 0x80));
    v >>= 7;
  }
  blob_.push_back(uint8_t(v));
}

bool ArgsBuilder::put_key(std::string_view key, ArgKind kind) {
  if (!open_) return false;
  // Events of one kind list the same keys in the same order: try the key that followed the previous one
  // last time (a compare) before the hash.
  uint32_t number = prev_ < next_.size() ? next_[prev_] : UINT32_MAX;
  if (number == UINT32_MAX || strings_.str(keys_[number]) != key) {
    auto it = key_numbers_.find(key);
    if (it == key_numbers_.end()) {
      StringId id = strings_.intern(key);
      it = key_numbers_.emplace(strings_.str(id), uint32_t(keys_.size())).first;
      keys_.push_back(id);
      next_.resize(keys_.size() + 1, UINT32_MAX);
    }
    number = it->second;
    next_[prev_] = number;
  }
  prev_ = number + 1;
  put_varint((uint64_t(number) << 3) | uint64_t(kind));
  return true;
}

void ArgsBuilder::add(std::string_view key, int64_t v) {
  if (put_key(key, ArgKind::Int)) put_varint(zigzag(v)), close_arg();
}
void ArgsBuilder::add(std::string_view key, double v) {
  if (!put_key(key, ArgKind::Double)) return;
  uint64_t bits = std::bit_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) blob_.push_back(uint8_t(bits >> (8 * i)));
  close_arg();
}
void ArgsBuilder::add(std::string_view key, bool v) {
  if (put_key(key, ArgKind::Bool)) blob_.push_back(v ? 1 : 0), close_arg();
}
void ArgsBuilder::add_string(std::string_view key, std::string_view v) {
  if (put_key(key, ArgKind::String)) put_varint(strings_.intern(v)), close_arg();
}
void ArgsBuilder::add_json(std::string_view key, std::string_view text) {
  if (put_key(key, ArgKind::Json)) put_varint(strings_.intern(text)), close_arg();
}

void ArgsBuilder::relocate(const std::vector<std::pair<uint32_t, uint32_t>>& where) {
  for (Span& s : spans_) std::tie(s.track, s.index) = where[s.index];
}

// Each event's spans are chained in the order they were given (the spans are not sorted: a sort held a copy
// of half of them), and an event with one span, which is nearly every one, points at it where it lies: the
// blob becomes the table's as it is, not copied in the events' order (which held a second blob at once).
EventArgs ArgsBuilder::finalize(Rank& rank) {
  constexpr uint32_t kNoSpan = UINT32_MAX;
  EventArgs out;
  std::erase_if(spans_, [](const Span& s) { return s.begin == s.end; });
  std::vector<std::vector<uint32_t>> first(rank.tracks.size());  // per track, event -> its first span
  std::vector<uint32_t> next(spans_.size(), kNoSpan);
  uint64_t extra = 0;  // the bytes of the events given in several spans, laid end to end after the blob
  for (size_t k = spans_.size(); k-- > 0;) {
    const Span& s = spans_[k];
    if (s.track >= rank.tracks.size() || s.index >= rank.tracks[s.track].events.size()) continue;
    std::vector<uint32_t>& f = first[s.track];
    if (f.empty()) f.assign(rank.tracks[s.track].events.size(), kNoSpan);
    if (const uint32_t was = f[s.index]; was != kNoSpan)
      extra += s.end - s.begin + (next[was] == kNoSpan ? spans_[was].end - spans_[was].begin : 0);
    next[k] = f[s.index];
    f[s.index] = uint32_t(k);
  }
  // Such events (an importer that gave one event's args in pieces) are copied whole past the blob's end, the
  // room made first so that the blob never moves under the spans being read; past 4 GiB they keep their
  // first piece only.
  const bool join = extra && blob_.size() + extra < UINT32_MAX;
  if (join) blob_.reserve(blob_.size() + extra);
  out.ranges_.resize(rank.tracks.size());
  std::vector<uint32_t> order;
  for (uint32_t t = 0; t < rank.tracks.size(); ++t) {
    std::vector<Event>& ev = rank.tracks[t].events;
    if (first[t].empty()) {
      sort_events(ev);
      continue;
    }
    // Sort positions, not events, to know where each event went (none moves when they are in order).
    const bool in_order = std::is_sorted(ev.begin(), ev.end(), event_before);
    order.resize(ev.size());
    std::iota(order.begin(), order.end(), 0u);
    if (!in_order)
      std::stable_sort(order.begin(), order.end(),
                       [&ev](uint32_t a, uint32_t b) { return event_before(ev[a], ev[b]); });
    std::vector<EventArgs::Range>& ranges = out.ranges_[t];
    ranges.resize(ev.size());
    for (size_t j = 0; j < order.size(); ++j) {
      const uint32_t k = first[t][order[j]];
      if (k == kNoSpan) continue;
      ranges[j] = {spans_[k].begin, spans_[k].end};
      if (next[k] == kNoSpan || !join) continue;
      ranges[j].begin = uint32_t(blob_.size());
      for (uint32_t x = k; x != kNoSpan; x = next[x]) {
        const size_t at = blob_.size(), n = spans_[x].end - spans_[x].begin;
        blob_.resize(at + n);  // within the room reserved: no move
        std::memcpy(blob_.data() + at, blob_.data() + spans_[x].begin, n);
      }
      ranges[j].end = uint32_t(blob_.size());
    }
    std::vector<uint32_t>().swap(first[t]);
    permute_events(ev, order);  // in place: a sorted copy held every event twice
    ev.shrink_to_fit();         // an importer's reserve or doubling is not kept
  }
  sort_counters(rank);
  out.keys_ = std::move(keys_);
  out.blob_ = std::move(blob_);
  std::vector<Span>().swap(spans_);
  if (out.events_with_args() == 0) out = EventArgs{};
  return out;
}

}  // namespace shardscope::model
