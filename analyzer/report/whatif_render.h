// `shardscope whatif`'s sentences and JSON: the answer first (predicted step time, exposed communication,
// backward all-gathers' hidden share, each beside the measured run), then the units whose exposure changes
// most, the model's error on the unchanged run and the steps.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analyzer/metrics/whatif.h"

namespace shardscope::report {

// "backward prefetch pre, comm ×2" (the change as asked; "no change" when nothing is).
std::string change_text(const metrics::WhatIfChange& c);
std::string whatif_text(const metrics::WhatIf& w, const metrics::WhatIfChange& c);
nlohmann::json whatif_json(const metrics::WhatIf& w, const metrics::WhatIfChange& c);
// check-prefetch's line under a "not effective" verdict: what the replay with BACKWARD_PRE predicts.
std::string prefetch_saving_sentence(const metrics::WhatIf& w);
// The same line where the replay gives no number, with why.
std::string prefetch_saving_na_sentence(metrics::WhatIfNa why, size_t ranks);
// Its JSON name: "cpu_run", "many_ranks", "not_replayable".
std::string whatif_na_name(metrics::WhatIfNa why);

}  // namespace shardscope::report
