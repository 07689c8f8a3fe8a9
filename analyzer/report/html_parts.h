// The pieces the HTML sections share: table cells, the n/a lines under a table, the time axis and the
// stacked bar of a window (the per-rank bars and each rank's per-step strip draw the same bar).
#pragma once

#include <string>
#include <vector>

#include "analyzer/metrics/breakdown.h"
#include "analyzer/report/table.h"

namespace shardscope::report::html {

// A name from a trace in a table cell: at most a few hundred bytes shown, the whole name (to a limit) in its
// tooltip, so a megabyte-long kernel name neither stretches the page nor bloats the file.
std::string name_cell(const std::string& s, const char* cls, bool title_always = false);
// A cell, right-aligned when `num`.
std::string td(const std::string& s, bool num = false);
// Under a table, one paragraph per reason its "n/a" cells have.
std::string na_lines(const NaNotes& na);
// A table of numbers (the first column a label, the others right-aligned), then its n/a lines. The headers
// are the report's own words, not a trace's.
std::string number_table(const Table& t, const NaNotes& na);

// Tick marks for an axis from 0 to `max`: a step of 1, 2 or 5 times a power of ten, about five of them.
std::vector<double> ticks(double max);
// A horizontal axis at y for values 0..max drawn over [x0, x0 + width]: a line, ticks and the unit.
std::string axis(double x0, double y, double width, double max, const char* unit);

// A window as one bar split into SPEC's parts (compute only, overlapped, exposed communication, other device
// work, idle), each with its definition as a tooltip; `what` prefixes the tooltips ("rank 3, all steps, ").
std::string stacked_bar(const metrics::WindowMetrics& m, double x, double y, double width, double height,
                        const std::string& what = "");
// The bar's colours and what each part is.
std::string bar_legend();
// The whole-trace breakdown as a window, for ranks without steps.
metrics::WindowMetrics from_whole(const metrics::HtaBreakdown& w);

}  // namespace shardscope::report::html
