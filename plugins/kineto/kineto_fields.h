// One Kineto event's fields, as far as the importer uses them, read from simdjson's ondemand object.
#pragma once

#include <simdjson.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/args.h"

namespace shardscope::plugins {

// One arg as the file gives it, when the importer keeps args (views as Fields' below).
struct RawArg {
  std::string_view key;
  model::ArgKind kind;
  int64_t i = 0;
  double d = 0;
  std::string_view text;  // String, Json
};

// What one event says, as far as the importer uses it. Views point into the parser's buffers until the
// next batch, then, stored, into their chunk's arena.
struct Fields {
  std::string_view ph, cat, name;
  bool pid_ok = false, tid_ok = false;
  int64_t pid = 0, tid = 0;
  std::string_view pid_name;  // a pid given as a string ("CPU functions", Kineto's "Spans"): pid_ok is false
  std::optional<int64_t> ts, dur;
  bool has_stream = false;
  int64_t stream = -1, correlation = -1, ext = -1;
  std::string_view coll_name, dtype, meta_name, pg_name;
  int64_t seq = -1;
  // A CPU op that launches a collective (model::collective_from_launching_op): its first tensor input's
  // element count and dtype, as "Input Dims" and "Input type" give them. Read for no other op.
  int64_t op_in_numel = -1;
  std::string_view op_in_type;
  int64_t in_nelems = -1, out_nelems = -1, group = -1, bytes = -1, device_type = -1;
  double total_allocated = NAN;
  // A [memory] event's: Bytes, Total Reserved, Addr (an address; read as int64), Device Id.
  int64_t mem_bytes = 0, total_reserved = -1, addr = 0, device_id = 0;
  bool mem_bytes_ok = false;
  std::vector<RawArg>* raw = nullptr;     // set while parsing: every arg is kept here too
  uint32_t raw_begin = 0, raw_count = 0;  // once stored: the args' place in their chunk's args
  size_t index = 0;                       // once stored: its place among its chunk's events
};

// Whether the importer reads events of this phase ("X", "i", "I", "M"); the others are only counted.
inline bool phase_read(std::string_view ph) {
  return ph.size() == 1 && (ph[0] == 'X' || ph[0] == 'i' || ph[0] == 'I' || ph[0] == 'M');
}

// Reads one event object into `f` (an odd type is not an error: the field stays as it was). Throws
// simdjson::simdjson_error on malformed JSON.
void read_event(simdjson::ondemand::object obj, Fields& f);

// Replaces every byte that does not start or continue a valid UTF-8 sequence with '?'.
void replace_invalid_utf8(std::string& s);

}  // namespace shardscope::plugins
