// Interned strings: every event names itself by a 32-bit id into one table per rank, so ten million
// events with a few thousand distinct kernel names cost 4 bytes a name, not a std::string each.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace shardscope::model {

using StringId = uint32_t;

class StringTable {
 public:
  StringTable() { intern(""); }  // id 0 is the empty string
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;
  StringTable(StringTable&&) = default;
  StringTable& operator=(StringTable&&) = default;

  StringId intern(std::string_view s);
  // The id of s if it was interned, else UINT32_MAX (lets a query skip work for names a trace never had).
  StringId find(std::string_view s) const;
  std::string_view str(StringId id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;  // a deque never moves its elements, so the map's views stay valid
  std::unordered_map<std::string_view, StringId> ids_;
};

inline constexpr StringId kNoString = UINT32_MAX;

}  // namespace shardscope::model
