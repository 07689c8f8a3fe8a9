#include "plugins/kineto/kineto_fields.h"

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
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool get_int(od::value& v, int64_t& out) {
  od::json_type t;
  if (v.type().get(t) != simdjson::SUCCESS || t != od::json_type::number) return false;
  if (v.get_int64().get(out) == simdjson::SUCCESS) return true;
  double d;
  if (v.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && std::fabs(d) < 9e18) return out = int64_t(d), true;
  return false;
}

std::optional<int64_t> get_us(od::value& v) {
  od::json_type t;
  if (v.type().get(t) != simdjson::SUCCESS || t != od::json_type::number) return std::nullopt;
  return trace::parse_us(trim(v.raw_json_token()));
}

void read_args(od::object args, Fields& f) {
  for (auto field : args) {
    std::string_view k = field.unescaped_key();
    od::value v = field.value();
    switch (k.size()) {  // a cheap first cut: most args are none of ours
      case 6:
        if (k == kk::kStream) f.has_stream = get_int(v, f.stream);
        break;
      case 11:
        if (k == kk::kCorrelation) get_int(v, f.correlation);
        else if (k == kk::kExternalId) get_int(v, f.ext);
        else if (k == kk::kDeviceType) get_int(v, f.device_type);
        break;
      case 15:  // "Collective name", "Total Allocated"
        if (k == kk::kCollectiveName) try_get(v.get_string(), f.coll_name);
        else if (k == kk::kTotalAllocated) try_get(v.get_double(), f.total_allocated);
        break;
      case 13:
        if (k == kk::kInMsgNelems) get_int(v, f.in_nelems);
        break;
      case 14:
        if (k == kk::kOutMsgNelems) get_int(v, f.out_nelems);
        break;
      case 10:
        if (k == kk::kGroupSize) get_int(v, f.group);
        break;
      case 5:
        if (k == kk::kDtype) try_get(v.get_string(), f.dtype);
        else if (k == kk::kBytes) get_int(v, f.bytes);
        break;
      case 4:
        if (k == kk::kMetaName) try_get(v.get_string(), f.meta_name);
        break;
      default:
        break;
    }
  }
}

// read_args when args are kept: each value is read once, generically, then mapped into the fields it feeds.
void read_args_keeping(od::object args, Fields& f) {
  for (auto field : args) {
    RawArg a;
    a.key = field.unescaped_key();
    od::value v = field.value();
    od::json_type t;
    if (v.type().get(t) != simdjson::SUCCESS) continue;
    switch (t) {
      case od::json_type::number:
        if (v.get_int64().get(a.i) == simdjson::SUCCESS) a.kind = model::ArgKind::Int;
        else if (v.get_double().get(a.d) == simdjson::SUCCESS) a.kind = model::ArgKind::Double;
        else continue;
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
    const bool whole = a.kind == model::ArgKind::Int || (a.kind == model::ArgKind::Double && std::isfinite(a.d) && std::fabs(a.d) < 9e18 && (n = int64_t(a.d), true));
    const double d = a.kind == model::ArgKind::Int ? double(a.i) : a.d;
    const bool str = a.kind == model::ArgKind::String;
    std::string_view k = a.key;
    if (k == kk::kStream) f.has_stream = whole, f.stream = whole ? n : f.stream;
    else if (whole && k == kk::kCorrelation) f.correlation = n;
    else if (whole && k == kk::kExternalId) f.ext = n;
    else if (whole && k == kk::kDeviceType) f.device_type = n;
    else if (str && k == kk::kCollectiveName) f.coll_name = a.text;
    else if (number && k == kk::kTotalAllocated) f.total_allocated = d;
    else if (whole && k == kk::kInMsgNelems) f.in_nelems = n;
    else if (whole && k == kk::kOutMsgNelems) f.out_nelems = n;
    else if (whole && k == kk::kGroupSize) f.group = n;
    else if (str && k == kk::kDtype) f.dtype = a.text;
    else if (whole && k == kk::kBytes) f.bytes = n;
    else if (str && k == kk::kMetaName) f.meta_name = a.text;
  }
}

}  // namespace

void read_event(od::object obj, Fields& f) {
  for (auto field : obj) {
    std::string_view k = field.unescaped_key();
    od::value v = field.value();
    if (k == kk::kPh) try_get(v.get_string(), f.ph);
    else if (k == kk::kName) try_get(v.get_string(), f.name);
    else if (k == kk::kCat) try_get(v.get_string(), f.cat);
    else if (k == kk::kTs) f.ts = get_us(v);
    else if (k == kk::kDur) f.dur = get_us(v);
    else if (k == kk::kPid) f.pid_ok = get_int(v, f.pid);
    else if (k == kk::kTid) f.tid_ok = get_int(v, f.tid);
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
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 && c >= 0xC2 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E && c <= 0xF4 ? 4 : 0;
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
