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
  if (track >= offsets_.size() || size_t(index) + 1 >= offsets_[track].size()) return out;
  const uint8_t* p = blob_.data() + offsets_[track][index];
  const uint8_t* end = blob_.data() + offsets_[track][index + 1];
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

size_t EventArgs::memory_bytes() const {
  size_t n = blob_.capacity() + keys_.capacity() * sizeof(StringId) + offsets_.capacity() * sizeof(offsets_[0]);
  for (const auto& o : offsets_) n += o.capacity() * sizeof(uint32_t);
  return n;
}

size_t EventArgs::events_with_args() const {
  size_t n = 0;
  for (const auto& o : offsets_)
    for (size_t i = 0; i + 1 < o.size(); ++i) n += o[i + 1] > o[i];
  return n;
}

void ArgsBuilder::begin(uint32_t track, uint32_t index) {
  // Offsets are 32-bit: past 4 GiB of args the rest are not kept (the events still are).
  open_ = blob_.size() < UINT32_MAX - (uint64_t(1) << 20);
  if (!open_) return;
  if (!spans_.empty() && spans_.back().track == track && spans_.back().index == index)
    return;  // the same event again: append
  spans_.push_back({track, index, blob_.size(), blob_.size()});
  prev_ = 0;
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
  if (put_key(key, ArgKind::Int)) put_varint(zigzag(v)), spans_.back().end = blob_.size();
}
void ArgsBuilder::add(std::string_view key, double v) {
  if (!put_key(key, ArgKind::Double)) return;
  uint64_t bits = std::bit_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) blob_.push_back(uint8_t(bits >> (8 * i)));
  spans_.back().end = blob_.size();
}
void ArgsBuilder::add(std::string_view key, bool v) {
  if (put_key(key, ArgKind::Bool)) blob_.push_back(v ? 1 : 0), spans_.back().end = blob_.size();
}
void ArgsBuilder::add_string(std::string_view key, std::string_view v) {
  if (put_key(key, ArgKind::String)) put_varint(strings_.intern(v)), spans_.back().end = blob_.size();
}
void ArgsBuilder::add_json(std::string_view key, std::string_view text) {
  if (put_key(key, ArgKind::Json)) put_varint(strings_.intern(text)), spans_.back().end = blob_.size();
}

void ArgsBuilder::relocate(const std::vector<std::pair<uint32_t, uint32_t>>& where) {
  for (Span& s : spans_) std::tie(s.track, s.index) = where[s.index];
}

EventArgs ArgsBuilder::finalize(Rank& rank) {
  EventArgs out;
  std::erase_if(spans_, [](const Span& s) { return s.begin == s.end; });
  // Importers mostly give events, and so spans, in order already: a check costs a pass, a sort a copy.
  const auto by_place = [](const Span& a, const Span& b) {
    return a.track != b.track ? a.track < b.track : a.index < b.index;
  };
  if (!std::is_sorted(spans_.begin(), spans_.end(), by_place)) std::stable_sort(spans_.begin(), spans_.end(), by_place);
  out.offsets_.resize(rank.tracks.size());
  out.blob_.reserve(blob_.size());
  size_t s = 0;
  std::vector<uint32_t> order;
  std::vector<size_t> first_span;  // old index -> its first span in spans_, or SIZE_MAX
  for (uint32_t t = 0; t < rank.tracks.size(); ++t) {
    std::vector<Event>& ev = rank.tracks[t].events;
    const size_t lo = s;
    while (s < spans_.size() && spans_[s].track == t) ++s;
    if (lo == s) {
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
    first_span.assign(ev.size(), SIZE_MAX);
    for (size_t k = s; k-- > lo;)
      if (spans_[k].index < ev.size()) first_span[spans_[k].index] = k;
    std::vector<Event> sorted(in_order ? 0 : ev.size());
    std::vector<uint32_t>& off = out.offsets_[t];
    off.resize(ev.size() + 1);
    for (size_t j = 0; j < order.size(); ++j) {
      if (!in_order) sorted[j] = ev[order[j]];
      off[j] = uint32_t(out.blob_.size());
      for (size_t k = first_span[order[j]]; k < s && spans_[k].index == order[j]; ++k)
        out.blob_.insert(out.blob_.end(), blob_.begin() + int64_t(spans_[k].begin),
                         blob_.begin() + int64_t(spans_[k].end));
    }
    off[ev.size()] = uint32_t(out.blob_.size());
    if (!in_order) ev = std::move(sorted);
    else
      ev.shrink_to_fit();  // as the sorted copy was: an importer's reserve or doubling is not kept
  }
  sort_counters(rank);
  out.keys_ = std::move(keys_);
  std::vector<uint8_t>().swap(blob_);
  std::vector<Span>().swap(spans_);
  if (out.blob_.empty()) out = EventArgs{};
  return out;
}

}  // namespace shardscope::model
