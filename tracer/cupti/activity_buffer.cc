#include "tracer/cupti/activity_buffer.h"

namespace shardscope::tracer::cupti {

std::string read_buffer(uint8_t* buffer, size_t valid, std::vector<const CUpti_Activity*>& out) {
  CUpti_Activity* r = nullptr;
  CUptiResult rc;
  while ((rc = cuptiActivityGetNextRecord(buffer, valid, &r)) == CUPTI_SUCCESS) out.push_back(r);
  if (rc == CUPTI_ERROR_MAX_LIMIT_REACHED) return "";
  const char* name = nullptr;
  cuptiGetResultString(rc, &name);
  return "cuptiActivityGetNextRecord returned " + std::to_string(int(rc)) + " (" + (name ? name : "?") + ")";
}

}  // namespace shardscope::tracer::cupti
