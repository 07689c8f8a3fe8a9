// Reading one completed CUPTI activity buffer into record pointers (cuptiActivityGetNextRecord, which only
// walks memory and works without a GPU). The pointers stay valid until the buffer goes back to the pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cupti.h>

namespace shardscope::tracer::cupti {

// Appends every record in buffer[0, valid) to out. Returns "" at a clean end of the buffer, else what went
// wrong (the records before it are kept).
std::string read_buffer(uint8_t* buffer, size_t valid, std::vector<const CUpti_Activity*>& out);

}  // namespace shardscope::tracer::cupti
