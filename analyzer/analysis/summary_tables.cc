#include "analyzer/analysis/summary_tables.h"

namespace shardscope::analysis {
namespace {

using report::StepRow;
using V = ColumnValue;

const Column<StepRow> kSteps[] = {
    {"step", "INTEGER", [](const StepRow& r) -> V { return r.step.number; }},
    {"start_ns", "INTEGER", [](const StepRow& r) -> V { return r.step.start_ns; }},
    {"end_ns", "INTEGER", [](const StepRow& r) -> V { return r.step.end_ns; }},
    {"aborted", "INTEGER", [](const StepRow& r) -> V { return int64_t(r.step.aborted); }},
    {"window_ns", "INTEGER", [](const StepRow& r) -> V { return r.m.window_ns; }},
    {"compute_ns", "INTEGER", [](const StepRow& r) -> V { return r.m.compute_ns; }},
    {"comm_ns", "INTEGER", [](const StepRow& r) -> V { return r.m.comm_ns; }},
    {"overlap_ns", "INTEGER", [](const StepRow& r) -> V { return r.m.overlap_ns; }, true},
    {"exposed_ns", "INTEGER", [](const StepRow& r) -> V { return r.m.exposed_ns(); }},
    {"busy_ns", "INTEGER", [](const StepRow& r) -> V { return r.m.busy_ns; }},
    {"idle_ns", "INTEGER", [](const StepRow& r) -> V { return r.m.idle_ns(); }},
};

using Rec = CollectiveRecord;
const Column<Rec> kCollectives[] = {
    {"kind", "TEXT", [](const Rec& c) -> V { return model::to_string(c.kind); }},
    {"ordinal", "INTEGER", [](const Rec& c) -> V { return c.ordinal; }},
    {"unit", "INTEGER", [](const Rec& c) -> V { return int64_t(c.unit); }},
    {"group_size", "INTEGER", [](const Rec& c) -> V { return int64_t(c.group_size); }},
    {"bytes", "INTEGER", [](const Rec& c) -> V { return KnownInt{c.bytes}; }},
    {"issued_ns", "INTEGER", [](const Rec& c) -> V { return KnownInt{c.issued_ns}; }},
    {"start_ns", "INTEGER", [](const Rec& c) -> V { return c.start_ns; }},
    {"end_ns", "INTEGER", [](const Rec& c) -> V { return c.end_ns; }, true},
    {"wall_start_ns", "INTEGER", [](const Rec& c) -> V { return c.wall_start_ns; }},
    {"seq", "INTEGER", [](const Rec& c) -> V { return KnownInt{c.seq >= 0 ? c.seq : model::kUnknown}; }},
    {"process_group", "TEXT", [](const Rec& c) -> V { return std::string_view(c.group); }},
};

using Stats = metrics::CollectiveStats;
const Column<Stats> kCollectiveStats[] = {
    {"kind", "TEXT", [](const Stats& c) -> V { return model::to_string(c.kind); }},
    {"count", "INTEGER", [](const Stats& c) -> V { return c.count; }},
    {"time_ns", "INTEGER", [](const Stats& c) -> V { return c.time_ns; }},
    {"bytes", "INTEGER", [](const Stats& c) -> V { return c.bytes; }},
    {"sized_count", "INTEGER", [](const Stats& c) -> V { return c.sized_count; }},
    {"sized_time_ns", "INTEGER", [](const Stats& c) -> V { return c.sized_time_ns; }},
    {"algbw_gbps", "REAL", [](const Stats& c) -> V { return c.algbw_gbps(); }, true},
    {"busbw_gbps", "REAL", [](const Stats& c) -> V { return c.busbw_gbps(); }},
    {"group_size", "INTEGER", [](const Stats& c) -> V { return int64_t(c.group_size); }},
};

using Unit = PrefetchUnitRow;
const Column<Unit> kPrefetchUnits[] = {
    {"step", "INTEGER", [](const Unit& r) -> V { return r.step; }},
    {"unit", "INTEGER", [](const Unit& r) -> V { return int64_t(r.unit->unit); }},
    {"next_unit", "INTEGER", [](const Unit& r) -> V { return int64_t(r.unit->next_unit); }},
    {"issued_ns", "INTEGER", [](const Unit& r) -> V { return r.unit->issued_ns; }},
    {"ag_start_ns", "INTEGER", [](const Unit& r) -> V { return r.unit->ag_start_ns; }},
    {"ag_end_ns", "INTEGER", [](const Unit& r) -> V { return r.unit->ag_end_ns; }},
    {"issue_lead_ns", "INTEGER", [](const Unit& r) -> V { return r.unit->issue_lead_ns; }, true},
    {"ag_ns", "INTEGER", [](const Unit& r) -> V { return r.unit->ag_ns; }},
    {"hidden_ns", "INTEGER", [](const Unit& r) -> V { return r.unit->hidden_ns; }},
    {"exposed_wait_ns", "INTEGER", [](const Unit& r) -> V { return r.unit->exposed_wait_ns; }},
    {"cause", "INTEGER", [](const Unit& r) -> V { return int64_t(r.unit->cause); }},
    {"all_gather_ordinal", "INTEGER", [](const Unit& r) -> V { return r.unit->all_gather_ordinal; }, true},
    {"all_gather_group", "TEXT", [](const Unit& r) -> V { return std::string_view(r.unit->all_gather_group); }},
    {"all_gather_by_seq", "INTEGER", [](const Unit& r) -> V { return int64_t(r.unit->all_gather_by_seq); }},
};

using Mem = metrics::MemoryRow;
const Column<Mem> kMemory[] = {
    {"category", "TEXT", [](const Mem& m) -> V { return std::string_view(m.category); }},
    {"measured_bytes", "REAL", [](const Mem& m) -> V { return m.measured; }},
    {"predicted_bytes", "REAL", [](const Mem& m) -> V { return m.predicted; }},
    {"at_fullest_bytes", "REAL", [](const Mem& m) -> V { return m.at_fullest; }},
};

}  // namespace

const Table<StepRow> kStepsTable{"steps", kSteps};
const Table<CollectiveRecord> kCollectivesTable{"collectives", kCollectives};
const Table<metrics::CollectiveStats> kCollectiveStatsTable{"collective_stats", kCollectiveStats};
const Table<PrefetchUnitRow> kPrefetchUnitsTable{"prefetch_units", kPrefetchUnits};
const Table<metrics::MemoryRow> kMemoryTable{"memory", kMemory};

}  // namespace shardscope::analysis
