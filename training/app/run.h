// One rank's run once its flags are settled (flags.h): the data, a resume's check, the rendezvous, the ranks'
// agreement on the configuration, the trace, then the steps, each printed and logged. It does not return: the
// process ends with 0, or with fail()'s code and line (2: a setting or file, 3: a failed step or collective).
#pragma once

#include "training/app/flags.h"

namespace shardscope::train {

[[noreturn]] void run(const Args& a, const Plan& p);

}  // namespace shardscope::train
