// NVTX extended payloads (NCCL's message size, reduction op, communicator, root, peer) read from CUPTI's
// MARKER_DATA records. Such a record carries a pointer to an nvtxPayloadData_t {schemaId, size, blob}. The
// blob is laid out by a schema that the library registered (nvtxPayloadSchemaRegister), and only CUPTI knows
// it. So the lookup sits behind SchemaSource, and tests hand in schemas built in memory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

struct nvtxPayloadData_v1;  // nvtxPayloadData_t, nvtx3/nvToolsExtPayload.h

namespace shardscope::tracer::cupti {

// A registered schema or enum, copied out of CUPTI (nothing of CUPTI's is held).
struct PayloadSchema {
  struct Entry {
    uint64_t flags = 0;  // NVTX_PAYLOAD_ENTRY_FLAG_*: arrays, pointers and the like are skipped
    uint64_t type = 0;   // NVTX_PAYLOAD_ENTRY_TYPE_*, or the schema id of a registered enum
    std::string name;
    uint64_t offset = 0;  // 0 past the first entry: natural alignment after the entry before
  };
  struct EnumValue {
    uint64_t value = 0;
    std::string name;
  };
  bool is_enum = false;
  uint64_t type = 0;         // schemas: NVTX_PAYLOAD_SCHEMA_TYPE_* (unions are not read)
  uint64_t static_size = 0;  // schemas: the declared payload size, 0 when not declared
  std::vector<Entry> entries;
  uint64_t enum_size = 0;  // enums: bytes of a value
  std::vector<EnumValue> values;
};

class SchemaSource {
 public:
  virtual ~SchemaSource() = default;
  // The schema or enum registered as schema_id in CUPTI's domain cupti_domain; nullopt when none is.
  virtual std::optional<PayloadSchema> lookup(uint32_t cupti_domain, uint64_t schema_id) = 0;
  // Called once per payload when it has been read. CUPTI mallocs the nvtxPayloadData_t and its blob and
  // leaves freeing them to the client (NVIDIA's cupti_nvtx_ext_payload sample).
  virtual void release(const nvtxPayloadData_v1* data) { (void)data; }
};

// The production source: cuptiActivityGetNvtxExtPayloadAttr, and free() on release.
std::shared_ptr<SchemaSource> cupti_schema_source();

// Reads payloads through a SchemaSource and remembers each lookup, including a failed one. That costs one
// CUPTI call per schema rather than one per NCCL call.
class PayloadDecoder {
 public:
  explicit PayloadDecoder(std::shared_ptr<SchemaSource> source) : source_(std::move(source)) {}
  // {entry name: value} for the scalar and enum entries that lie inside the payload; enum values by name
  // where the enum names them. {} for a null payload or an unknown schema. The payload is released.
  nlohmann::json decode(uint32_t cupti_domain, const nvtxPayloadData_v1* data);

 private:
  const PayloadSchema* schema(uint32_t domain, uint64_t id);

  std::shared_ptr<SchemaSource> source_;
  std::map<std::pair<uint32_t, uint64_t>, std::optional<PayloadSchema>> cache_;
};

}  // namespace shardscope::tracer::cupti
