// The sentences of the ZeRO memory comparison (metrics/memory_model.h), for the report's renderers and
// `shardscope memory`: one wording in one place.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "analyzer/metrics/memory_model.h"

namespace shardscope::report {

// One line saying how predict() counts.
std::string describe(const sizing::MemoryConfig& c);
// The `shardscope memory` command that prints the same prediction.
std::string memory_command(const sizing::MemoryConfig& c);
// How the model states were predicted: describe() and the command; "" without a configuration.
std::string states_model(const metrics::RankMemory& m);
// "n/a: the trace has no run_config (...)", ...; "" for Code::None.
std::string na_text(const sizing::MemoryNa& why);
// One model input and where it came from: "sharding FULL_SHARD (inferred: units all-gathered again for
// backward in step 3, 10 all-gathers)", "params 7000000000 (given)", "dtype n/a: ...".
std::string input_text(const metrics::MemoryInput& in, std::string_view name, const metrics::MemoryInputs& all);
// Why an input could not be inferred.
std::string infer_na_text(metrics::InferNa na, const std::string& text);
// The five inputs, "; "-joined, when the strategy was inferred or any input given (MemoryInputs::
// inferred_or_given); "" otherwise (all from run_config, or a trace with no collectives).
std::string inputs_line(const metrics::RankMemory& m);
// "inferred", "given", "run_config", "unknown".
std::string_view origin_name(metrics::InputOrigin o);
// What an inferred input was read from, in words ("" for other origins).
std::string basis_text(const metrics::MemoryInput& in, const metrics::MemoryInputs& all);
// The input's value as shown ("2", "FULL_SHARD", "20980736"); "" when unknown.
std::string input_value(const metrics::MemoryInput& in, std::string_view name);

// "predicted by Korthikanti et al. 2022 ...": the formula, its inputs and the dtype scaling.
std::string activations_how(const sizing::ActivationPrediction& p);
// How the activations were predicted, or why they were not.
std::string activations_model(const metrics::RankMemory& m);
// The estimate beside the activations measured: within 15 %, or not and the assumption that explains it;
// "" without both (metrics::check_activations).
std::string activations_vs_measured(const metrics::RankMemory& m);
// Why the rest row is not split into cached_free and other_allocated; "" where it is, or there is none.
std::string rest_unsplit(const metrics::RankMemory& m);
// Why there is no comparison, or only a prediction; "" when both sides are there.
std::string memory_not_applicable(const metrics::RankMemory& m);
// "optimizer_state: measured 1.000 MB vs predicted 0.667 MB (+50.0%)", "none: every predicted category is
// within 5% of the model", or "" when no category has both values.
std::string departs_most(const metrics::RankMemory& m);

// The measured memory (metrics/memory_measured.h), from the allocator's own events.
// "all-gather outputs (unsharded parameters)", ...: a group's name in the table.
std::string made_name(metrics::Made m);
// "all_gather", ...: its JSON key.
std::string made_key(metrics::Made m);
// The answer first: "peak 675.766 MB allocated in step 1 (reached again in steps 2, 3, 4); at most 864.027 MB
// reserved", from the rank's allocator events.
std::string measured_peak(const metrics::MeasuredMemory& m);
// What the table's last rows and the events cannot explain: lost events, other devices; "" when nothing.
std::string measured_caveats(const metrics::MeasuredMemory& m);
// The ZeRO model's prediction beside a group (the row of memory_model.h it stands beside), nullopt none.
std::optional<double> predicted_for(const metrics::RankMemory& r, metrics::Made m);
// Why a group has no prediction beside it.
std::string predicted_na(const metrics::RankMemory& r, metrics::Made m);
// One line for a PyTorch profiler trace without [memory] events, or an Nsight Systems export without CUDA's
// memory records (format "nsys"): how to record them.
std::string profile_memory_hint(std::string_view format = "kineto");

}  // namespace shardscope::report
