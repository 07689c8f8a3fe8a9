#include "analyzer/report/sections/whole_trace.h"

#include <fmt/format.h>

#include "analyzer/report/cells.h"
#include "analyzer/report/report_keys.h"
#include "analyzer/report/sentences.h"
#include "model/saturating.h"

namespace shardscope::report {
namespace {

namespace k = report_keys;

class WholeTrace final : public Section {
 public:
  std::string_view key() const override { return k::kWholeTrace; }

  void text(const Context& c, TextOut& out) const override {
    const RankReport& rr = *c.rank;
    if (!rr.whole) return out.para("whole trace: " + na_text(rr.whole_na));
    const metrics::HtaBreakdown& w = *rr.whole;
    out.para(fmt::format(
        "whole trace ({}): window {:.3f} ms | overlap {} | idle {:.2f} % | compute {:.2f} % | non-compute {:.2f} "
        "%; {}",
        whole_trace_setting(w), double(w.window_us) / 1e3, pct_or(w.overlap_pct(), na_overlap()), w.idle_pct(),
        w.compute_pct(), w.non_compute_pct(), exact_line(w)));
  }

  void json(const Context& c, nlohmann::json& o) const override {
    const RankReport& rr = *c.rank;
    if (!rr.whole) {
      o[k::kWholeTrace] = nullptr;
      o[k::kNa][k::kWholeTrace] = na_text(rr.whole_na);
      return;
    }
    const metrics::HtaBreakdown& whole = *rr.whole;
    nlohmann::json w;
    w[k::kWindowNs] = model::sat_mul(whole.window_us, 1000);  // a hostile span may pass int64 in ns
    put_pct(w, k::kOverlapPct, whole.overlap_pct(), na_overlap());
    w[k::kIdlePct] = pct_json(whole.idle_pct());
    w[k::kComputePct] = pct_json(whole.compute_pct());
    w[k::kNonComputePct] = pct_json(whole.non_compute_pct());
    w[k::kHtaSetting] = metrics::kHtaSetting;
    w[k::kLeftOutEvents] = whole.left_out;
    const metrics::WindowMetrics x = whole.exact();
    nlohmann::json e = {{k::kWindowNs, x.window_ns},
                        {k::kBusyNs, x.busy_ns},
                        {k::kComputeNs, x.compute_ns},
                        {k::kCommNs, x.comm_ns},
                        {k::kOverlapNs, x.overlap_ns}};
    put_pct(e, k::kOverlapPct, x.overlap_pct(), na_overlap());
    put_pct(e, k::kIdlePct, x.idle_pct(), na_text(analysis::Na::EmptyWindow));
    put_pct(e, k::kComputePct, x.compute_pct(), na_text(analysis::Na::EmptyWindow));
    put_pct(e, k::kNonComputePct, whole.exact_non_compute_pct(), na_text(analysis::Na::EmptyWindow));
    w[k::kExact] = e;
    o[k::kWholeTrace] = w;
  }

  void html(const Context& c, std::string& h) const override {
    const RankReport& rr = *c.rank;
    if (!rr.whole) {
      h += "<p>Whole trace: " + html_escape(na_text(rr.whole_na)) + "</p>\n";
      return;
    }
    h += fmt::format(
        "<p>Whole trace ({}): window {:.3f} ms, overlap {}, idle {:.2f} %, compute {:.2f} %, non-compute {:.2f} "
        "%; {}</p>\n",
        html_escape(whole_trace_setting(*rr.whole)), rr.whole->window_us / 1e3,
        html_escape(pct_or(rr.whole->overlap_pct(), na_overlap())), rr.whole->idle_pct(), rr.whole->compute_pct(),
        rr.whole->non_compute_pct(), html_escape(exact_line(*rr.whole)));
  }
};

}  // namespace

const Section& whole_trace_section() {
  static const WholeTrace s;
  return s;
}

}  // namespace shardscope::report
