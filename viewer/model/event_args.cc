#include "viewer/model/event_args.h"

#include <charconv>

namespace shardscope::viewer {

std::string arg_text(const model::Rank& rank, const model::ArgValue& v, size_t max_chars) {
  std::string s;
  switch (v.kind) {
    case model::ArgKind::Int: s = std::to_string(v.i); break;
    case model::ArgKind::Bool: s = v.i ? "true" : "false"; break;
    case model::ArgKind::Double: {
      char buf[32];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.d);  // shortest text that reads back the same
      s.assign(buf, ec == std::errc() ? end : buf);
      break;
    }
    case model::ArgKind::String:
    case model::ArgKind::Json: s = rank.str(v.s); break;
  }
  if (s.size() > max_chars) {
    size_t cut = max_chars;
    while (cut > 0 && (uint8_t(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
    s.resize(cut);
    s += "\u2026";
  }
  return s;
}

std::vector<ArgRow> arg_rows(const model::Rank& rank, const model::EventArgs* args, uint32_t track, uint32_t index,
                             size_t max_chars) {
  std::vector<ArgRow> rows;
  if (!args) return rows;
  for (const model::Arg& a : args->of(track, index))
    rows.push_back({std::string(rank.str(a.key)), arg_text(rank, a.value, max_chars)});
  return rows;
}

}  // namespace shardscope::viewer
