#include "tracer/cupti/nvtx_payload.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include <nvtx3/nvToolsExtPayload.h>

namespace shardscope::tracer::cupti {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxCachedSchemas = 1024;  // a library registering schemas without end

struct Scalar {
  size_t size = 0;  // 0: not a type read here
  char kind = 0;    // 'i' signed, 'u' unsigned, 'f' floating point
};

// The payload comes from this process, so the C types have this build's sizes.
Scalar scalar(uint64_t type) {
  switch (type) {
    case NVTX_PAYLOAD_ENTRY_TYPE_CHAR: return {sizeof(char), std::is_signed_v<char> ? 'i' : 'u'};
    case NVTX_PAYLOAD_ENTRY_TYPE_UCHAR: return {sizeof(unsigned char), 'u'};
    case NVTX_PAYLOAD_ENTRY_TYPE_SHORT: return {sizeof(short), 'i'};
    case NVTX_PAYLOAD_ENTRY_TYPE_USHORT: return {sizeof(unsigned short), 'u'};
    case NVTX_PAYLOAD_ENTRY_TYPE_INT: return {sizeof(int), 'i'};
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT: return {sizeof(unsigned), 'u'};
    case NVTX_PAYLOAD_ENTRY_TYPE_LONG: return {sizeof(long), 'i'};
    case NVTX_PAYLOAD_ENTRY_TYPE_ULONG: return {sizeof(unsigned long), 'u'};
    case NVTX_PAYLOAD_ENTRY_TYPE_LONGLONG: return {sizeof(long long), 'i'};
    case NVTX_PAYLOAD_ENTRY_TYPE_ULONGLONG: return {sizeof(unsigned long long), 'u'};
    case NVTX_PAYLOAD_ENTRY_TYPE_INT8: return {1, 'i'};
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT8: return {1, 'u'};
    case NVTX_PAYLOAD_ENTRY_TYPE_INT16: return {2, 'i'};
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT16: return {2, 'u'};
    case NVTX_PAYLOAD_ENTRY_TYPE_INT32: return {4, 'i'};
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT32: return {4, 'u'};
    case NVTX_PAYLOAD_ENTRY_TYPE_INT64: return {8, 'i'};
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT64: return {8, 'u'};
    case NVTX_PAYLOAD_ENTRY_TYPE_FLOAT: return {sizeof(float), 'f'};
    case NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE: return {sizeof(double), 'f'};
    case NVTX_PAYLOAD_ENTRY_TYPE_SIZE: return {sizeof(size_t), 'u'};
    case NVTX_PAYLOAD_ENTRY_TYPE_ADDRESS: return {sizeof(void*), 'u'};
    default: return {};
  }
}

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // the blob need not be aligned for T
  return v;
}

// Sizes are 1, 2, 4 or 8 (checked by the caller).
uint64_t read_unsigned(const uint8_t* p, size_t size) {
  switch (size) {
    case 1: return load<uint8_t>(p);
    case 2: return load<uint16_t>(p);
    case 4: return load<uint32_t>(p);
    default: return load<uint64_t>(p);
  }
}

json read_scalar(const uint8_t* p, Scalar s) {
  if (s.kind == 'f') return s.size == sizeof(float) ? json(load<float>(p)) : json(load<double>(p));
  if (s.kind == 'u') return read_unsigned(p, s.size);
  switch (s.size) {
    case 1: return load<int8_t>(p);
    case 2: return load<int16_t>(p);
    case 4: return load<int32_t>(p);
    default: return load<int64_t>(p);
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

}  // namespace

const PayloadSchema* PayloadDecoder::schema(uint32_t domain, uint64_t id) {
  auto key = std::make_pair(domain, id);
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, source_->lookup(domain, id)).first;
  return it->second ? &*it->second : nullptr;
}

json PayloadDecoder::decode(uint32_t domain, const nvtxPayloadData_v1* data) {
  json out = json::object();
  if (!data || !source_) return out;
  // Cleared only here, between payloads: schema() pointers held while decoding one stay valid.
  if (cache_.size() >= kMaxCachedSchemas) cache_.clear();
  const auto* blob = static_cast<const uint8_t*>(data->payload);
  const PayloadSchema* s =
      blob && data->schemaId >= NVTX_PAYLOAD_SCHEMA_ID_STATIC_START ? schema(domain, data->schemaId) : nullptr;
  bool layout =
      s && !s->is_enum && (s->type == NVTX_PAYLOAD_SCHEMA_TYPE_STATIC || s->type == NVTX_PAYLOAD_SCHEMA_TYPE_DYNAMIC);
  // Never read past the blob CUPTI copied, nor past what the schema declares. SIZE_MAX means "unknown";
  // with no declared size either, nothing can be read safely.
  uint64_t bound = data->size;
  if (layout && s->static_size != 0) bound = std::min<uint64_t>(bound, s->static_size);
  if (bound == SIZE_MAX) layout = false;
  // `next` is where an entry without an offset begins; unknown once an entry of unknown size is skipped.
  uint64_t next = 0;
  bool next_known = true;
  for (size_t i = 0; layout && i < s->entries.size(); ++i) {
    const PayloadSchema::Entry& e = s->entries[i];
    Scalar sc = e.flags == 0 ? scalar(e.type) : Scalar{};
    const PayloadSchema* en = nullptr;
    if (e.flags == 0 && sc.size == 0 && e.type >= NVTX_PAYLOAD_SCHEMA_ID_STATIC_START) {
      en = schema(domain, e.type);  // a registered enum, as NCCL's "Reduction operation"
      if (en && en->is_enum) sc = {size_t(en->enum_size), 'u'};
    }
    if (sc.size != 1 && sc.size != 2 && sc.size != 4 && sc.size != 8) {
      next_known = false;
      continue;  // a type not read here: arrays, strings, nested schemas, unions, unknown types
    }
    bool explicit_offset = e.offset != 0 || i == 0;
    if (!explicit_offset && !next_known) continue;
    uint64_t at = explicit_offset ? e.offset : (next + sc.size - 1) / sc.size * sc.size;
    if (at > bound || sc.size > bound - at) {
      next_known = false;
      continue;  // past the payload: a short payload or a schema that does not fit it
    }
    next = at + sc.size;
    json value = read_scalar(blob + at, sc);
    if (en && en->is_enum) {
      uint64_t v = value.get<uint64_t>();
      for (const PayloadSchema::EnumValue& ev : en->values)
        if (ev.value == v && !ev.name.empty()) value = lower(ev.name);
    }
    if (!e.name.empty()) out[e.name] = std::move(value);
  }
  source_->release(data);
  return out;
}

}  // namespace shardscope::tracer::cupti
