#include "model/strings.h"

namespace shardscope::model {

StringId StringTable::intern(std::string_view s) {
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  StringId id = StringId(strings_.size());
  strings_.emplace_back(s);
  ids_.emplace(strings_.back(), id);
  return id;
}

StringId StringTable::find(std::string_view s) const {
  auto it = ids_.find(s);
  return it == ids_.end() ? kNoString : it->second;
}

}  // namespace shardscope::model
