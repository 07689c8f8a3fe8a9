#include "analyzer/report/sections/definitions.h"

#include "analyzer/report/definitions.h"
#include "analyzer/report/report_keys.h"

namespace shardscope::report {
namespace {

class Definitions final : public Section {
 public:
  std::string_view key() const override { return report_keys::kDefinitions; }
  void json(const Context&, nlohmann::json& into) const override {
    into[report_keys::kDefinitions] = definitions_json();
  }
};

}  // namespace

const Section& definitions_section() {
  static const Definitions s;
  return s;
}

}  // namespace shardscope::report
