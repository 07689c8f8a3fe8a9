// `report --mpi`. The map runs where the files are: process p summarises the files whose place among the
// inputs is p modulo the process count. The summaries (CBOR) are gathered to process 0, which puts them
// through the same load-and-reduce as a one-process report (so the output is the same, byte for byte), writes
// it, and sends every process the exit code. A process that fails sends its error instead of summaries: no
// process waits on one that gave up.
#include <mpi.h>

#include <mutex>
#include <ostream>

#include <fmt/format.h>

#include "analyzer/analysis/run.h"
#include "analyzer/analysis/summary_codec.h"
#include "analyzer/cli/output.h"
#include "analyzer/cli/report.h"

namespace shardscope::cli {
namespace {

// This process's share, as CBOR: {"summaries": [...]} or {"error": "..."}.
std::vector<uint8_t> map_share(const std::vector<std::string>& paths, const std::string& step_pattern, int me, int procs) {
  nlohmann::json out;
  try {
    nlohmann::json summaries = nlohmann::json::array();
    std::mutex mu;
    plugins::LoadOptions options{.step_pattern = step_pattern, .mine = [&](uint64_t order) { return order % uint64_t(procs) == uint64_t(me); }};
    analysis::summarize_each(paths, options, analysis::Scope::Everything, [&](analysis::RankSummary&& s) {
      nlohmann::json j = analysis::encode(s);
      std::lock_guard lock(mu);
      summaries.push_back(std::move(j));
    });
    out["summaries"] = std::move(summaries);
  } catch (const std::exception& e) {
    out["error"] = e.what();
  }
  return nlohmann::json::to_cbor(out);
}

// Process 0: every process's share, in process order.
std::vector<std::vector<uint8_t>> gather(const std::vector<uint8_t>& mine, int me, int procs) {
  // Sizes first (a share is far below 2 GiB: a summary is a few kB a rank).
  int size = int(mine.size());
  std::vector<int> sizes(size_t(me == 0 ? procs : 0)), offsets(sizes.size());
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<uint8_t> all;
  if (me == 0) {
    size_t total = 0;
    for (int p = 0; p < procs; ++p) offsets[size_t(p)] = int(total), total += size_t(sizes[size_t(p)]);
    all.resize(total);
  }
  MPI_Gatherv(mine.data(), size, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
  std::vector<std::vector<uint8_t>> out;
  for (int p = 0; p < (me == 0 ? procs : 0); ++p)
    out.emplace_back(all.begin() + offsets[size_t(p)], all.begin() + offsets[size_t(p)] + sizes[size_t(p)]);
  return out;
}

// Process 0: the reduce and the report; the exit code.
int reduce_and_write(const std::vector<std::string>& paths, const std::string& format, const std::string& output, std::ostream& out,
                     std::ostream& err, const std::string& step_pattern, const report::Selection& sel, const std::vector<std::vector<uint8_t>>& shares) {
  try {
    std::map<uint64_t, analysis::RankSummary> given;
    for (size_t p = 0; p < shares.size(); ++p) {
      const nlohmann::json share = nlohmann::json::from_cbor(shares[p]);
      if (share.contains("error")) {
        err << fmt::format("shardscope: error: {} (MPI process {} of {})\n", share["error"].get<std::string>(), p, shares.size());
        return 2;
      }
      for (const nlohmann::json& j : share.at("summaries")) {
        analysis::RankSummary s = analysis::decode_summary(j);
        given.emplace(s.key().order, std::move(s));
      }
    }
    analysis::AnalysedRun run = analysis::analyse_stream(paths, {.step_pattern = step_pattern}, analysis::Scope::Everything, false,
                                                         [&](uint64_t order) -> std::optional<analysis::RankSummary> {
                                                           auto it = given.find(order);
                                                           if (it == given.end()) return std::nullopt;
                                                           return std::move(it->second);
                                                         });
    print_warnings(run.warnings, err);
    return write_output(output, render(run.report, format, sel), out, err) ? 0 : 2;
  } catch (const std::exception& e) {
    print_error(err, e.what());
    return 2;
  }
}

}  // namespace

int report_mpi(const std::vector<std::string>& paths, const std::string& format, const std::string& output, std::ostream& out, std::ostream& err,
               const std::string& step_pattern, const report::Selection& sel) {
  MPI_Init(nullptr, nullptr);
  int me = 0, procs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &procs);
  const std::vector<std::vector<uint8_t>> shares = gather(map_share(paths, step_pattern, me, procs), me, procs);
  int rc = me == 0 ? reduce_and_write(paths, format, output, out, err, step_pattern, sel, shares) : 0;
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}

}  // namespace shardscope::cli
