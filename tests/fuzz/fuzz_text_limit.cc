// The libFuzzer set-up shared by the text targets: a text limit small enough that no input can exhaust the
// fuzzer's memory before the reader refuses it.
#include "tracer/format/limits.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  shardscope::trace::limits().max_text_bytes = 16 << 20;
  return 0;
}
