// Sets environment variables for the child processes a test runs (tests/support/run.h passes ours on), and
// restores them afterwards.
#pragma once

#include <stdlib.h>

#include <optional>
#include <string>
#include <vector>

namespace shardscope::test {

class ScopedEnv {
 public:
  ScopedEnv& set(const std::string& name, const std::optional<std::string>& value) {
    const char* old = getenv(name.c_str());
    saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
    if (value) setenv(name.c_str(), value->c_str(), 1);
    else
      unsetenv(name.c_str());
    return *this;
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else
        unsetenv(it->first.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

inline size_t count_lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace shardscope::test
