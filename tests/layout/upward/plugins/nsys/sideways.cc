// A planted sideways include: one importer reading another's folder rather than plugins/common/.
#include "plugins/kineto/kineto_keys.h"
#include "plugins/common/gpu_join.h"
