#include "plugins/kineto/kineto_fields.h"

#include "model/classify.h"
#include "plugins/kineto/kineto_keys.h"
#include "tracer/format/serialize.h"

namespace shardscope::plugins {
namespace {

namespace od = simdjson::ondemand;
namespace kk = kineto_keys;

// Reads a value when it has the expected type; leaves `out` as it was otherwise (an odd type is not an error).
template <class R, class T>
void try_get(R&& r, T& out) {
  if (std::forward<R>(r).get(out) != simdjson::SUCCESS) return;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// A key as the batch's text writes it (no copy into the parser's string buffer); one with an escape, unescaped.
// The text's strings are closed (simdjson checked them before the walk), so the loop ends at its quote.
template <class Field>
std::string_view key_of(Field& field) {
  const char* k = field.key().value().raw();
  const char* q = k;
  while (*q != '"' && *q != '\\') ++q;
  if (*q == '"') return {k, size_t(q - k)};
  return field.unescaped_key().value();
}

bool get_int(od::value& v, int64_t& out) {
  // A failed get leaves the value unread, so no type() first: strings, true and null fail both gets.
  if (v.get_int64().get(out) == simdjson::SUCCESS) return true;
  double d;
  if (v.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && std::fabs(d) < 9e18)
    return out = int64_t(d), true;
  return false;
}

std::optional<int64_t> get_us(od::value& v) {
  od::json_type t;
  if (v.type().get(t) != simdjson::SUCCESS || t != od::json_type::number) return std::nullopt;
  return trace::parse_us(trim(v.raw_json_token()));
}

std::string_view skip_ws(std::string_view s) {
  while (!s.empty() && (s[0] == ' ' || s[0] == '\n' || s[0] == '\r' || s[0] == '\t')) s.remove_prefix(1);
  return s;
}

// Whether the event is a CPU op that launches a collective; its name is read before its args in Kineto's
// files (an op whose name comes later goes without its input's size).
bool launches_collective(const Fields& f) {
  return model::collective_from_launching_op(f.name) != model::CollectiveKind::None;
}

// The first tensor's element count in an "Input Dims" arg's JSON text ("[[888, 2880], []]": 2557440;
// "[[], ...]" is a scalar: 1); -1 when the text is not so shaped or the count overflows.
int64_t first_input_numel(std::string_view json) {
  json = skip_ws(json);
  if (json.empty() || json[0] != '[') return -1;
  json = skip_ws(json.substr(1));
  if (json.empty() || json[0] != '[') return -1;
  json.remove_prefix(1);
  int64_t numel = 1;
  for (bool first = true;; first = false) {
    json = skip_ws(json);
    if (json.empty()) return -1;
    if (json[0] == ']') return numel;
    if (!first) {
      if (json[0] != ',') return -1;
      json = skip_ws(json.substr(1));
    }
    int64_t dim = 0;
    size_t digits = 0;
    for (; digits < json.size() && json[digits] >= '0' && json[digits] <= '9'; ++digits)
      if (__builtin_mul_overflow(dim, int64_t(10), &dim) ||
          __builtin_add_overflow(dim, int64_t(json[digits] - '0'), &dim))
        return -1;
    if (digits == 0 || __builtin_mul_overflow(numel, dim, &numel)) return -1;
    json.remove_prefix(digits);
  }
}

// The first string of an "Input type" arg's JSON text (["c10::BFloat16", ""]); "" when there is none or it
// is escaped.
std::string_view first_input_type(std::string_view json) {
  size_t open = json.find('"');
  if (open == std::string_view::npos) return {};
  size_t close = json.find('"', open + 1);
  if (close == std::string_view::npos) return {};
  std::string_view t = json.substr(open + 1, close - open - 1);
  return t.find('\\') == std::string_view::npos ? t : std::string_view{};
}

void read_args(od::object args, Fields& f) {
  for (auto field : args) {
    std::string_view k = key_of(field);
    od::value v = field.value();
    switch (k.size()) {  // a cheap first cut: most args are none of ours
      case 6:
        if (k == kk::kStream) f.has_stream = get_int(v, f.stream);
        break;
      case 11:
        if (k == kk::kCorrelation) get_int(v, f.correlation);
        else if (k == kk::kExternalId)
          get_int(v, f.ext);
        else if (k == kk::kDeviceType)
          get_int(v, f.device_type);
        break;
      case 15:  // "Collective name", "Total Allocated"
        if (k == kk::kCollectiveName) try_get(v.get_string(), f.coll_name);
        else if (k == kk::kTotalAllocated)
          try_get(v.get_double(), f.total_allocated);
        break;
      case 13:
        if (k == kk::kInMsgNelems) get_int(v, f.in_nelems);
        break;
      case 14:
        if (k == kk::kOutMsgNelems) get_int(v, f.out_nelems);
        else if (k == kk::kTotalReserved)
          get_int(v, f.total_reserved);
        break;
      case 9:
        if (k == kk::kDeviceId) get_int(v, f.device_id);
        break;
      case 10:
        if (k == kk::kGroupSize) get_int(v, f.group);
        else if ((k == kk::kInputDims || k == kk::kInputType) && launches_collective(f)) {
          std::string_view text;
          if (simdjson::to_json_string(v).get(text) != simdjson::SUCCESS) break;
          if (k == kk::kInputDims) f.op_in_numel = first_input_numel(text);
          else
            f.op_in_type = first_input_type(text);
        }
        break;
      case 5:
        if (k == kk::kDtype) try_get(v.get_string(), f.dtype);
        else if (k == kk::kBytes)
          get_int(v, f.bytes);
        else if (k == kk::kMemBytes)
          f.mem_bytes_ok = get_int(v, f.mem_bytes);
        break;
      case 4:
        if (k == kk::kMetaName) try_get(v.get_string(), f.meta_name);
        else if (k == kk::kAddr)
          get_int(v, f.addr);
        break;
      case 3:
        if (k == kk::kSeq) get_int(v, f.seq);
        break;
      case 18:
        if (k == kk::kProcessGroupName) try_get(v.get_string(), f.pg_name);
        break;
      default: break;
    }
  }
}

// read_args when args are kept: each value is read once, generically, then mapped into the fields it feeds.
void read_args_keeping(od::object args, Fields& f) {
  for (auto field : args) {
    RawArg a;
    a.key = key_of(field);
    od::value v = field.value();
    od::json_type t;
    if (v.type().get(t) != simdjson::SUCCESS) continue;
    switch (t) {
      case od::json_type::number:
        if (v.get_int64().get(a.i) == simdjson::SUCCESS) a.kind = model::ArgKind::Int;
        else if (v.get_double().get(a.d) == simdjson::SUCCESS)
          a.kind = model::ArgKind::Double;
        else
          continue;
        break;
      case od::json_type::string:
        if (v.get_string().get(a.text) != simdjson::SUCCESS) continue;
        a.kind = model::ArgKind::String;
        break;
      case od::json_type::boolean: {
        bool b;
        if (v.get_bool().get(b) != simdjson::SUCCESS) continue;
        a.kind = model::ArgKind::Bool, a.i = b;
        break;
      }
      default:  // object, array, null
        if (simdjson::to_json_string(v).get(a.text) != simdjson::SUCCESS) continue;
        a.kind = model::ArgKind::Json;
        break;
    }
    f.raw->push_back(a);
    // The fields the importer maps, as read_args does.
    const bool number = a.kind == model::ArgKind::Int || a.kind == model::ArgKind::Double;
    int64_t n = a.i;
    const bool whole = a.kind == model::ArgKind::Int || (a.kind == model::ArgKind::Double && std::isfinite(a.d) &&
                                                         std::fabs(a.d) < 9e18 && (n = int64_t(a.d), true));
    const double d = a.kind == model::ArgKind::Int ? double(a.i) : a.d;
    const bool str = a.kind == model::ArgKind::String;
    std::string_view k = a.key;
    if (k == kk::kStream) f.has_stream = whole, f.stream = whole ? n : f.stream;
    else if (whole && k == kk::kCorrelation)
      f.correlation = n;
    else if (whole && k == kk::kExternalId)
      f.ext = n;
    else if (whole && k == kk::kDeviceType)
      f.device_type = n;
    else if (str && k == kk::kCollectiveName)
      f.coll_name = a.text;
    else if (number && k == kk::kTotalAllocated)
      f.total_allocated = d;
    else if (whole && k == kk::kInMsgNelems)
      f.in_nelems = n;
    else if (whole && k == kk::kOutMsgNelems)
      f.out_nelems = n;
    else if (whole && k == kk::kGroupSize)
      f.group = n;
    else if (str && k == kk::kDtype)
      f.dtype = a.text;
    else if (whole && k == kk::kBytes)
      f.bytes = n;
    else if (whole && k == kk::kMemBytes)
      f.mem_bytes = n, f.mem_bytes_ok = true;
    else if (whole && k == kk::kTotalReserved)
      f.total_reserved = n;
    else if (whole && k == kk::kAddr)
      f.addr = n;
    else if (whole && k == kk::kDeviceId)
      f.device_id = n;
    else if (str && k == kk::kMetaName)
      f.meta_name = a.text;
    else if (whole && k == kk::kSeq)
      f.seq = n;
    else if (str && k == kk::kProcessGroupName)
      f.pg_name = a.text;
    else if (a.kind == model::ArgKind::Json && k == kk::kInputDims && launches_collective(f))
      f.op_in_numel = first_input_numel(a.text);
    else if (a.kind == model::ArgKind::Json && k == kk::kInputType && launches_collective(f))
      f.op_in_type = first_input_type(a.text);
  }
}

}  // namespace

void read_event(od::object obj, Fields& f) {
  for (auto field : obj) {
    std::string_view k = key_of(field);
    od::value v = field.value();
    if (k == kk::kPh) try_get(v.get_string(), f.ph);
    else if (k == kk::kName)
      try_get(v.get_string(), f.name);
    else if (k == kk::kCat)
      try_get(v.get_string(), f.cat);
    else if (k == kk::kTs)
      f.ts = get_us(v);
    else if (k == kk::kDur)
      f.dur = get_us(v);
    else if (k == kk::kPid) {
      f.pid_ok = get_int(v, f.pid);
      if (!f.pid_ok) try_get(v.get_string(), f.pid_name);
    } else if (k == kk::kTid)
      f.tid_ok = get_int(v, f.tid);
    else if (k == kk::kArgs) {
      od::object args;
      if (v.get_object().get(args) == simdjson::SUCCESS) f.raw ? read_args_keeping(args, f) : read_args(args, f);
    }
  }
}

void replace_invalid_utf8(std::string& s) {
  auto cont = [&](size_t i) { return i < s.size() && (uint8_t(s[i]) & 0xC0) == 0x80; };
  for (size_t i = 0; i < s.size();) {
    uint8_t c = uint8_t(s[i]);
    size_t n = c < 0x80                        ? 1
               : (c >> 5) == 0x6 && c >= 0xC2  ? 2
               : (c >> 4) == 0xE               ? 3
               : (c >> 3) == 0x1E && c <= 0xF4 ? 4
                                               : 0;
    bool ok = n > 0;
    for (size_t k = 1; ok && k < n; ++k) ok = cont(i + k);
    if (ok && n == 3) {  // no overlong forms, no surrogates
      uint8_t c1 = uint8_t(s[i + 1]);
      ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
    }
    if (ok && n == 4) {
      uint8_t c1 = uint8_t(s[i + 1]);
      ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (!ok) {
      s[i++] = '?';
      continue;
    }
    i += n;
  }
}

}  // namespace shardscope::plugins
