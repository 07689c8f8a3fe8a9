// NVTX binary payloads as an export describes them: NVTX_PAYLOAD_SCHEMAS (per domain and schemaId: the
// payload's size) and NVTX_PAYLOAD_SCHEMA_ENTRIES (each field's name, type and offset), which real exports
// carry for NCCL's schemas (nccl src/include/nvtx_payload_schemas.h) even when the events' payloads were not
// exported. An event's binaryData is read as the payload's bytes (a BLOB, or its bytes as hex text).
//
// An exported event does not say which schema its binaryData follows (not that we could confirm), so a field
// is read by name from the schemas of the event's domain whose size is the payload's: where every such schema
// that has the field puts it at the same offset with the same integer type. NCCL's schemas all agree on
// "Message size [bytes]" (offset 8) and, among the send and receive ones, on "Peer rank"; a field they do not
// describe stays unknown and is counted for the load's warnings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/nsys/nsys_export.h"
#include "plugins/nsys/nsys_payload.h"

namespace shardscope::nsys {

class NvtxSchemas {
 public:
  // Reads both tables where they have the columns read; `missing` gets what was looked for and not found.
  NvtxSchemas(Export& x, std::vector<std::string>& missing);
  bool empty() const { return schemas_.empty(); }

  // NCCL's fields of one range's binary payload: the communicator and bytes of any, the peer of ncclSend /
  // ncclRecv, the rank and ranks of a communicator's init (ncclCommInit*, ncclCommSplit). `undescribed` counts the fields wanted that the schemas did not say.
  NcclPayload decode(int64_t domain, std::string_view range, std::string_view binary, size_t& undescribed) const;

 private:
  struct Entry {
    std::string name;
    int64_t type = 0, offset = 0;
  };
  struct Schema {
    int64_t domain = 0, id = 0, size = -1;  // size -1: the table does not say
    std::vector<Entry> entries;
  };
  std::vector<Schema> schemas_;
  // The field `name` as every candidate schema that has it describes it: false when none does or they differ.
  bool field(int64_t domain, size_t size, std::string_view name, const std::string& bytes, int64_t& value) const;
  // Its bits as read (sign-extended where signed), whatever its value.
  bool bits(int64_t domain, size_t size, std::string_view name, const std::string& bytes, uint64_t& u,
            bool& is_signed) const;
};

}  // namespace shardscope::nsys
