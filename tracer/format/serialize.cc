#include "tracer/format/serialize.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "tracer/format/keys.h"

namespace shardscope::trace {

void append_us(std::string& out, int64_t ns) {
  // Work on the magnitude in unsigned so INT64_MIN does not overflow.
  uint64_t mag = ns < 0 ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
  if (ns < 0) out.push_back('-');
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, mag / 1000);
  (void)ec;
  out.append(buf, end);
  unsigned frac = unsigned(mag % 1000);
  out.push_back('.');
  out.push_back(char('0' + frac / 100));
  out.push_back(char('0' + frac / 10 % 10));
  out.push_back(char('0' + frac % 10));
}

std::optional<int64_t> parse_us(std::string_view t) {
  if (t.empty()) return std::nullopt;
  size_t i = 0;
  bool neg = false;
  if (t[0] == '-') {
    neg = true;
    i = 1;
  }
  uint64_t whole = 0;
  size_t digits = 0;
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i, ++digits) {
    if (whole > (UINT64_MAX - 9) / 10) return std::nullopt;
    whole = whole * 10 + uint64_t(t[i] - '0');
  }
  if (digits == 0) return std::nullopt;
  uint64_t frac = 0;
  int frac_digits = 0;
  bool exact = true;
  if (i < t.size() && t[i] == '.') {
    ++i;
    for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
      if (frac_digits < 3) {
        frac = frac * 10 + uint64_t(t[i] - '0');
        ++frac_digits;
      } else if (t[i] != '0') {
        exact = false;  // sub-nanosecond digits: round below
      }
    }
  }
  if (i != t.size()) exact = false;  // exponent form
  if (!exact) {
    double v = std::strtod(std::string(t).c_str(), nullptr);
    if (!std::isfinite(v) || std::fabs(v) > 9.2e15) return std::nullopt;
    return int64_t(std::llround(v * 1000.0));
  }
  while (frac_digits < 3) {
    frac *= 10;
    ++frac_digits;
  }
  // Past INT64_MAX ns (about 292 years of µs) the value does not fit: refused, never wrapped.
  if (whole > uint64_t(INT64_MAX) / 1000 || whole * 1000 + frac > uint64_t(INT64_MAX)) return std::nullopt;
  int64_t ns = int64_t(whole * 1000 + frac);
  return neg ? -ns : ns;
}

void append_json_string(std::string& out, std::string_view s) {
  bool plain = true;
  for (unsigned char c : s) {
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) {
      plain = false;
      break;
    }
  }
  if (plain) {
    out.push_back('"');
    out.append(s);
    out.push_back('"');
    return;
  }
  out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void append_event(std::string& out, const Event& e) {
  out += "{\"";
  out += keys::kPh;
  out += "\":\"";
  out.push_back(e.ph);
  out += "\",\"";
  out += keys::kName;
  out += "\":";
  append_json_string(out, e.name);
  if (!e.cat.empty()) {
    out += ",\"";
    out += keys::kCat;
    out += "\":";
    append_json_string(out, e.cat);
  }
  out += ",\"";
  out += keys::kPid;
  out += "\":";
  out += std::to_string(e.pid);
  out += ",\"";
  out += keys::kTid;
  out += "\":";
  out += std::to_string(e.tid);
  if (e.ph != 'M') {
    out += ",\"";
    out += keys::kTs;
    out += "\":";
    append_us(out, e.ts_ns);
  }
  if (e.ph == 'X') {
    out += ",\"";
    out += keys::kDur;
    out += "\":";
    append_us(out, e.dur_ns);
  }
  if (e.ph == 'i') {
    out += ",\"";
    out += keys::kScope;
    out += "\":\"t\"";
  }
  if (!e.id.empty()) {
    out += ",\"";
    out += keys::kId;
    out += "\":";
    append_json_string(out, e.id);
  }
  if (e.ph == 'f') {
    out += ",\"";
    out += keys::kBindingPoint;
    out += "\":\"e\"";
  }
  if (!e.args.is_null()) {
    out += ",\"";
    out += keys::kArgs;
    out += "\":";
    out += e.args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  out.push_back('}');
}

}  // namespace shardscope::trace
