// A planted upward include: the trainer reading the analyzer. check_includes.sh must reject this tree.
#include "analyzer/metrics/memory_model.h"
#include "sizing/zero_model.h"
