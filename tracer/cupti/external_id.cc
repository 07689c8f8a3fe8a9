#include "tracer/cupti/external_id.h"

#include <atomic>

#include <cupti.h>

#include "tracer/format/keys.h"

namespace shardscope::tracer::cupti {
namespace {

constexpr CUpti_ExternalCorrelationKind kKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
static_assert(int(kKind) == keys::kExternalKindTrainerCollective, "the trace names the kind the tracer pushes");

// Off until the backend enables CUPTI: a push into a libcupti nobody subscribed to would start CUPTI up.
std::atomic<bool> g_on{false};

}  // namespace

void detail::set_external_ids_on(bool on) { g_on.store(on, std::memory_order_release); }

ExternalId::ExternalId(uint64_t id) noexcept {
  if (!g_on.load(std::memory_order_acquire)) return;
  pushed_ = cuptiActivityPushExternalCorrelationId(kKind, id) == CUPTI_SUCCESS;
}

ExternalId::~ExternalId() {
  // Popped even if tracing stopped meanwhile: the thread's stack in CUPTI must not keep our id.
  if (pushed_) cuptiActivityPopExternalCorrelationId(kKind, nullptr);
}

}  // namespace shardscope::tracer::cupti
