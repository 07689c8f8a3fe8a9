// The production SchemaSource: NVTX payload schemas and enums as CUPTI recorded them from the program's
// nvtxPayloadSchemaRegister / nvtxPayloadEnumRegister calls.
#include <cstdlib>

#include <cupti.h>
#include <nvtx3/nvToolsExtPayload.h>

#include "tracer/cupti/nvtx_payload.h"

// Exported by libcupti 13.0 but declared in no header it ships; this declaration follows the CUPTI
// documentation ("CUPTI NVTX Extended Payload Support").
extern "C" CUptiResult CUPTIAPI cuptiActivityGetNvtxExtPayloadAttr(uint32_t cuptiDomainId, uint64_t schemaId,
                                                                   CUpti_NvtxExtPayloadAttr* pPayloadAttributes);

namespace shardscope::tracer::cupti {
namespace {

const char* or_empty(const char* s) { return s ? s : ""; }

class CuptiSchemaSource final : public SchemaSource {
 public:
  std::optional<PayloadSchema> lookup(uint32_t domain, uint64_t id) override {
    CUpti_NvtxExtPayloadAttr attr{};
    attr.structSize = sizeof attr;
    if (cuptiActivityGetNvtxExtPayloadAttr(domain, id, &attr) != CUPTI_SUCCESS || !attr.attributes) return std::nullopt;
    std::optional<PayloadSchema> out;
    // CUPTI mallocs the attributes and their entries array for the caller to free (as NVIDIA's
    // nvtx_payload_parser.cpp does); the strings they point to stay CUPTI's.
    if (attr.type == CUPTI_NVTX_EXT_PAYLOAD_TYPE_SCHEMA) {
      auto* a = static_cast<nvtxPayloadSchemaAttr_t*>(attr.attributes);
      out.emplace();
      out->type = a->type;
      out->static_size = a->payloadStaticSize;
      for (size_t i = 0; a->entries && i < a->numEntries; ++i) {
        const nvtxPayloadSchemaEntry_t& e = a->entries[i];
        out->entries.push_back({e.flags, e.type, or_empty(e.name), e.offset});
      }
      std::free(const_cast<nvtxPayloadSchemaEntry_t*>(a->entries));
    } else if (attr.type == CUPTI_NVTX_EXT_PAYLOAD_TYPE_ENUM) {
      auto* a = static_cast<nvtxPayloadEnumAttr_t*>(attr.attributes);
      out.emplace();
      out->is_enum = true;
      out->enum_size = a->sizeOfEnum;
      for (size_t i = 0; a->entries && i < a->numEntries; ++i)
        out->values.push_back({a->entries[i].value, or_empty(a->entries[i].name)});
      std::free(const_cast<nvtxPayloadEnum_t*>(a->entries));
    }
    std::free(attr.attributes);
    return out;
  }

  void release(const nvtxPayloadData_v1* data) override {
    if (!data) return;
    std::free(const_cast<void*>(data->payload));
    std::free(const_cast<nvtxPayloadData_v1*>(data));
  }
};

}  // namespace

std::shared_ptr<SchemaSource> cupti_schema_source() { return std::make_shared<CuptiSchemaSource>(); }

}  // namespace shardscope::tracer::cupti
