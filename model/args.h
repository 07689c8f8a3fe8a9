// Each event's args (the trace's "args" object: a kernel's grid and block, a collective's in_msg_nelems,
// Kineto's "External id", a range's payload), kept in a side table so the 56-byte event stays as it is.
// Keys and strings are interned in the rank's string table; values are int64, double, string, bool, or the
// JSON text of a nested object or array. Per track a range array (8 bytes an event) points into one byte
// blob where an event's args are varint-encoded (key and kind in one byte for a trace's first 31 keys): a
// Kineto event's five to fifteen args cost tens of bytes, not 16 bytes an arg as a plain struct would. The
// blob is the importer's, in the order it read the args: the table is not laid out again when it is made.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/strings.h"

namespace shardscope::model {

struct Rank;

enum class ArgKind : uint8_t { Int, Double, String, Bool, Json };

struct ArgValue {
  ArgKind kind = ArgKind::Int;
  int64_t i = 0;   // Int; Bool as 0/1
  double d = 0;    // Double
  StringId s = 0;  // String, Json (the text of a nested object or array)
  bool operator==(const ArgValue&) const = default;
};

struct Arg {
  StringId key = 0;
  ArgValue value;
};

class EventArgs {
 public:
  bool empty() const { return blob_.empty(); }
  // The args of rank.tracks[track].events[index] in the order the importer gave them (Kineto: the file's;
  // shardscope files: by key, as their reader keeps them); empty when none.
  std::vector<Arg> of(uint32_t track, uint32_t index) const;
  std::optional<ArgValue> find(uint32_t track, uint32_t index, StringId key) const;
  size_t memory_bytes() const;  // what the table holds on the heap
  size_t events_with_args() const;

 private:
  friend class ArgsBuilder;
  struct Range {
    uint32_t begin = 0, end = 0;  // into blob_
  };
  std::vector<std::vector<Range>> ranges_;  // per track: one an event, or none (no args on it)
  std::vector<uint8_t> blob_;
  std::vector<StringId> keys_;  // the table's key numbers -> the rank's string ids
};

// Collects args while an importer builds a rank (events in any order, before Rank::finalize sorts them),
// then finalizes the rank and lays the table out in the sorted order.
class ArgsBuilder {
 public:
  explicit ArgsBuilder(StringTable& strings) : strings_(strings) {}
  // Starts the args of the event that is now rank.tracks[track].events[index]; add() appends to it.
  void begin(uint32_t track, uint32_t index);
  void add(std::string_view key, int64_t v);
  void add(std::string_view key, double v);
  void add(std::string_view key, bool v);
  void add_string(std::string_view key, std::string_view v);
  void add_json(std::string_view key, std::string_view text);  // a nested object or array, as JSON text
  // Moves the args given to begin(0, i) onto the event now at (where[i].first, where[i].second): for an
  // importer that numbers its events in one array before it deals them onto tracks.
  void relocate(const std::vector<std::pair<uint32_t, uint32_t>>& where);
  // rank.finalize(), keeping the args with their events. The builder is spent.
  EventArgs finalize(Rank& rank);

 private:
  struct Span {
    uint32_t track, index;
    uint32_t begin, end;  // into blob_ (begin() keeps it under 4 GiB)
  };
  bool put_key(std::string_view key, ArgKind kind);
  void put_varint(uint64_t v);
  void close_arg();  // the arg just written ends its event's span (or is dropped at the 4 GiB bound)
  StringTable& strings_;
  std::vector<Span> spans_;
  std::vector<uint8_t> blob_;
  std::vector<StringId> keys_;
  std::unordered_map<std::string_view, uint32_t> key_numbers_;  // views into strings_ (they never move)
  std::vector<uint32_t> next_ = {UINT32_MAX};  // [k + 1]: the key number that followed key k last; [0]: first
  uint32_t prev_ = 0;
  bool open_ = false;  // begin() was called and the blob has room (offsets are 32-bit)
};

}  // namespace shardscope::model
