#include "analyzer/report/sections/memory.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/report/cells.h"
#include "analyzer/report/definitions.h"
#include "analyzer/report/html_parts.h"
#include "analyzer/report/memory_render.h"
#include "analyzer/report/report_keys.h"
#include "model/saturating.h"

namespace shardscope::report {
namespace {

namespace k = report_keys;

bool any_value(const metrics::RankMemory& m) {
  return std::any_of(m.rows.begin(), m.rows.end(),
                     [](const metrics::MemoryRow& row) { return row.measured || row.predicted; });
}

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// Each input: its value (null when unknown), where it came from, and in words from what or why not.
nlohmann::json inputs_json(const metrics::MemoryInputs& in) {
  nlohmann::json o = nlohmann::json::object();
  const std::pair<const metrics::MemoryInput*, const char*> all[] = {{&in.world_size, "world_size"},
                                                                     {&in.sharding, "sharding"},
                                                                     {&in.params, "params"},
                                                                     {&in.dtype, "dtype"},
                                                                     {&in.optimizer, "optimizer"}};
  for (const auto& [input, name] : all) {
    nlohmann::json j;
    const std::string v = input_value(*input, name);
    if (v.empty()) j[k::kValue] = nullptr;
    else if (input->origin != metrics::InputOrigin::None &&
             (std::string_view(name) == "world_size" || std::string_view(name) == "params"))
      j[k::kValue] = input->value;
    else
      j[k::kValue] = v;
    j[k::kOrigin] = origin_name(input->origin);
    if (input->origin == metrics::InputOrigin::Inferred) j[k::kFrom] = basis_text(*input, in);
    if (!input->known()) j[k::kReason] = infer_na_text(input->na, input->text);
    o[name] = j;
  }
  return o;
}

// Each category against its own prediction, on its own scale (the longer of the two fills the row), so a
// small category's departure shows as clearly as a large one's; the allocator's total, which the model does
// not predict, is a line of text apart.
std::string bars(const metrics::RankMemory& m) {
  std::string h;
  std::vector<const metrics::MemoryRow*> rows;
  for (const metrics::MemoryRow& row : m.rows)
    if (row.category == "allocator_total") {
      if (row.measured) h += fmt::format("<p>allocator total (not predicted): {}</p>\n", bytes_text(*row.measured));
    } else {
      rows.push_back(&row);
    }
  h += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"860\" height=\"{}\" role=\"img\">",
                   30 * rows.size() + 10);
  for (size_t i = 0; i < rows.size(); ++i) {
    const metrics::MemoryRow& row = *rows[i];
    // A value out of range has no bar (its text says so).
    auto drawn = [](const std::optional<double>& v) { return v && bytes_in_range(*v) ? v : std::nullopt; };
    const std::optional<double> measured = drawn(row.measured), predicted = drawn(row.predicted);
    const double scale = std::max({1.0, measured.value_or(0), predicted.value_or(0)});
    double y = 5 + 30.0 * double(i);
    h += fmt::format("<text x=\"0\" y=\"{:.1f}\" font-size=\"12\">{}</text>", y + 14, html_escape(row.category));
    if (measured)
      h += fmt::format(
          "<rect x=\"150\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"11\" fill=\"#4e79a7\"><title>measured {:.3f} "
          "MB</title></rect>",
          y, 560 * *measured / scale, *measured / 1e6);
    if (predicted)
      h += fmt::format(
          "<rect x=\"150\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"11\" fill=\"#f28e2b\"><title>predicted {:.3f} "
          "MB</title></rect>",
          y + 12, 560 * *predicted / scale, *predicted / 1e6);
    std::string values = row.measured ? mb_cell(*row.measured) : "n/a";
    values += " / " + (row.predicted ? mb_cell(*row.predicted) + " MB" : std::string("n/a"));
    if (row.measured && row.predicted && *row.predicted > 0)
      values += " (" + change_pct(*row.measured, *row.predicted, true) + ")";
    h += fmt::format("<text x=\"716\" y=\"{:.1f}\" font-size=\"11\">{}</text>", y + 14, html_escape(values));
  }
  return h + "</svg>\n<p class=\"legend\"><span style=\"color:#4e79a7\">■</span> <span title=\"" +
         html_escape(definition("memory", "measured MB")) +
         "\">measured MB</span> <span style=\"color:#f28e2b\">■</span> <span title=\"" +
         html_escape(definition("memory", "predicted MB")) +
         "\">predicted MB</span> (each category on its own scale; MB measured / predicted)</p>\n";
}

// The groups alive at the peak with the prediction beside each, what was there before the trace, their sum.
Table alive_table(const metrics::RankMemory& r, NaNotes& na) {
  const metrics::MeasuredMemory& m = r.measured;
  Table t{{"alive at the peak", "MB", "allocations", "predicted MB"}, {}, 1};
  int64_t sum = m.before_trace_left;
  for (const metrics::MeasuredGroup& g : m.alive) {
    const std::string name = made_name(g.made);
    const std::optional<double> p = predicted_for(r, g.made);
    // "other" stands beside no category of the model: its cell stays empty.
    const bool beside = !metrics::zero_counterpart(g.made).empty();
    t.rows.push_back({name, mb_cell(double(g.bytes)), std::to_string(g.allocations),
                      p        ? mb_cell(*p)
                      : beside ? na.cell(name, "predicted MB", predicted_na(r, g.made))
                               : ""});
    sum = model::sat_add(sum, g.bytes);
  }
  t.rows.push_back({"allocated before the trace began", mb_cell(double(m.before_trace_left)), "", ""});
  t.rows.push_back({"total", mb_cell(double(sum)), "", ""});
  return t;
}

// The steps the report shows, and the one the peak falls in.
Table step_table(const metrics::MeasuredMemory& m, const Context& c) {
  Table t{{"step", "peak allocated MB", "peak reserved MB"}, {}, 1};
  for (const metrics::MeasuredStep& st : m.steps)
    if (c.steps.empty() || c.step_shown(st.step) || (m.peak_in_step && st.step == m.peak_step))
      t.rows.push_back({std::to_string(st.step), mb_cell(double(st.peak_allocated)),
                        st.peak_reserved >= 0 ? mb_cell(double(st.peak_reserved)) : "n/a"});
  return t;
}

std::string measured_heading(const metrics::MeasuredMemory& m) {
  return fmt::format("memory measured (the GPU allocator's events, device {}): {}", m.device, measured_peak(m));
}

// "allocated before the trace began": the first event's total less its bytes, and what of it is left.
std::string before_sentence(const metrics::MeasuredMemory& m) {
  return fmt::format(
      "allocated before the trace began: {} (the first event's total less its own bytes), {} of it still allocated at "
      "the peak; the trace cannot say what made it",
      bytes_text(double(m.before_trace)), bytes_text(double(m.before_trace_left)));
}

// Whether the ZeRO comparison's own table has anything the measured one does not show: a trainer counter
// or a prediction.
// A total or a remainder, which the model has no category for: the legend says so once, not a note a row.
bool not_modelled(const metrics::MemoryRow& row) {
  using Code = sizing::MemoryNa::Code;
  return !row.predicted && (row.predicted_na.code == Code::AllocatorTotal || row.predicted_na.code == Code::Rest);
}

// The trainer's per-category counters measure what the allocator's events cannot name; the allocator total
// alone repeats the measured peak.
bool counters_add(const metrics::RankMemory& m) {
  return std::any_of(m.rows.begin(), m.rows.end(),
                     [](const metrics::MemoryRow& row) { return row.measured && row.category != "allocator_total"; });
}

void measured_text(const Context& c, TextOut& out) {
  const metrics::RankMemory& r = c.rank->memory;
  const metrics::MeasuredMemory& m = r.measured;
  out.para(measured_heading(m));
  NaNotes na;
  Table t = alive_table(r, na);
  out.table(t, na);
  out.legend(t.header);
  out.para(before_sentence(m));
  if (Table s = step_table(m, c); !s.rows.empty()) out.table(s);
  if (const std::string cv = measured_caveats(m); !cv.empty()) out.para(cv);
}

nlohmann::json measured_json(const metrics::RankMemory& r) {
  const metrics::MeasuredMemory& m = r.measured;
  nlohmann::json o = {{k::kAllocatorEvents, m.events},
                      {k::kDevice, m.device},
                      {k::kPeak, measured_peak(m)},
                      {k::kPeakAllocatedBytes, m.peak_allocated},
                      {k::kPeakReservedBytes, m.peak_reserved >= 0 ? nlohmann::json(m.peak_reserved) : nullptr},
                      {k::kPeakStep, m.peak_in_step ? nlohmann::json(m.peak_step) : nullptr},
                      {k::kPeakAgain, m.peak_again},
                      {k::kBeforeTraceBytes, m.before_trace},
                      {k::kBeforeTraceLeftBytes, m.before_trace_left}};
  o[k::kAliveAtPeak] = nlohmann::json::array();
  for (const metrics::MeasuredGroup& g : m.alive) {
    const std::optional<double> p = predicted_for(r, g.made);
    nlohmann::json go = {{k::kMade, made_key(g.made)},
                         {k::kBytes, g.bytes},
                         {k::kAllocations, g.allocations},
                         {k::kPredictedBytes, optional_number(p)}};
    if (!p) go[k::kNa][k::kPredictedBytes] = predicted_na(r, g.made);
    o[k::kAliveAtPeak].push_back(go);
  }
  o[k::kSteps] = nlohmann::json::array();
  for (const metrics::MeasuredStep& st : m.steps)
    o[k::kSteps].push_back(
        {{k::kStep, st.step},
         {k::kPeakAllocatedBytes, st.peak_allocated},
         {k::kPeakReservedBytes, st.peak_reserved >= 0 ? nlohmann::json(st.peak_reserved) : nullptr}});
  const std::string cv = measured_caveats(m);
  o[k::kCaveats] = cv.empty() ? nlohmann::json(nullptr) : nlohmann::json(cv);
  return o;
}

void measured_html(const Context& c, std::string& h) {
  const metrics::RankMemory& r = c.rank->memory;
  const metrics::MeasuredMemory& m = r.measured;
  h += "<p>" + html_escape(measured_heading(m)) + "</p>\n";
  NaNotes na;
  h += html::number_table(alive_table(r, na), na);
  h += "<p>" + html_escape(before_sentence(m)) + "</p>\n";
  if (Table s = step_table(m, c); !s.rows.empty()) h += html::number_table(s, {});
  if (const std::string cv = measured_caveats(m); !cv.empty()) h += "<p>" + html_escape(cv) + "</p>\n";
}

// A PyTorch profiler trace recorded without profile_memory, an Nsight export without --cuda-memory-usage:
// how to get the events.
bool needs_hint(const Context& c) {
  return c.rank->memory.measured.events == 0 && (c.rank->format == "kineto" || c.rank->format == "nsys");
}

class Memory final : public Section {
 public:
  std::string_view key() const override { return k::kMemory; }

  void text(const Context& c, TextOut& out) const override {
    const metrics::RankMemory& m = c.rank->memory;
    if (m.measured.events > 0) {
      measured_text(c, out);
      if (!counters_add(m)) {  // the alive table already sits beside the prediction
        if (const std::string in = inputs_line(m); !in.empty()) out.para("model inputs: " + in);
        return;
      }
    }
    if (needs_hint(c)) out.para(profile_memory_hint(c.rank->format));
    if (!any_value(m)) {
      if (!needs_hint(c)) out.para("memory: " + memory_not_applicable(m));
      if (const std::string in = inputs_line(m); !in.empty()) out.para("model inputs: " + in);
      return;
    }
    const bool split = std::any_of(m.rows.begin(), m.rows.end(), [](const auto& r) { return r.at_fullest; });
    Table t{{"memory", "measured MB", "predicted MB"}, {}, 1};
    if (split) t.header.push_back("at fullest MB");
    NaNotes na;
    for (const metrics::MemoryRow& row : m.rows) {
      t.rows.push_back({row.category,
                        na.value_or(row.measured ? mb_cell(*row.measured) : "", row.category, "measured MB",
                                    na_text(row.measured_na)),
                        not_modelled(row) ? "-"
                                          : na.value_or(row.predicted ? mb_cell(*row.predicted) : "", row.category,
                                                        "predicted MB", na_text(row.predicted_na))});
      if (split) t.rows.back().push_back(row.at_fullest ? mb_cell(*row.at_fullest) : "-");
    }
    out.para("memory (peak per category vs the ZeRO model):");
    out.table(t, na);
    out.legend(t.header);
    // Why rest is one row: detail, as the model's states are (the JSON keeps it as rest_split).
    if (const std::string r = rest_unsplit(m); !r.empty() && !c.sel.is_default()) out.para("rest: " + r);
    if (const std::string in = inputs_line(m); !in.empty()) out.para("model inputs: " + in);
    // How the model predicted: detail, shown beside every selection but the default.
    if (const std::string s = states_model(m); !s.empty() && !c.sel.is_default()) out.para("model states: " + s);
    // The estimate and how it compares with the measured peak, on one line.
    const std::string vs = activations_vs_measured(m);
    if (m.activations)
      out.para("activations: " + activations_how(*m.activations) + (vs.empty() ? "" : "; vs measured: " + vs));
    else if (!vs.empty())
      out.para("activations vs measured: " + vs);
    if (const std::string d = departs_most(m); !d.empty()) out.para("departs most: " + d);
    if (const std::string why = memory_not_applicable(m); !why.empty()) out.para(why);
  }

  void json(const Context& c, nlohmann::json& o) const override {
    const metrics::RankMemory& mem = c.rank->memory;
    nlohmann::json m;
    m[k::kRows] = nlohmann::json::array();
    for (const metrics::MemoryRow& row : mem.rows) {
      nlohmann::json ro = {{k::kCategory, row.category},
                           {k::kMeasuredBytes, optional_number(row.measured)},
                           {k::kPredictedBytes, optional_number(row.predicted)}};
      if (!row.measured) ro[k::kNa][k::kMeasuredBytes] = na_text(row.measured_na);
      if (!row.predicted) ro[k::kNa][k::kPredictedBytes] = na_text(row.predicted_na);
      if (row.at_fullest) ro[k::kAtFullestBytes] = *row.at_fullest;
      m[k::kRows].push_back(ro);
    }
    if (mem.config) m[k::kMemoryCommand] = memory_command(*mem.config);
    if (mem.inputs.inferred_or_given()) m[k::kModelInputs] = inputs_json(mem.inputs);
    const std::string departs = departs_most(mem), states = states_model(mem);
    m[k::kDepartsMost] = departs.empty() ? nlohmann::json(nullptr) : nlohmann::json(departs);
    m[k::kStatesModel] = states.empty() ? nlohmann::json(nullptr) : nlohmann::json(states);
    m[k::kActivationsModel] = activations_model(mem);
    const std::string vs = activations_vs_measured(mem), unsplit = rest_unsplit(mem);
    m[k::kActivationsVsMeasured] = vs.empty() ? nlohmann::json(nullptr) : nlohmann::json(vs);
    if (const auto check = metrics::check_activations(mem)) m[k::kActivationsWithin] = check->within;
    if (!unsplit.empty()) m[k::kRestSplit] = unsplit;
    if (const std::string why = memory_not_applicable(mem); !why.empty()) m[k::kReason] = why;
    m[k::kMeasured] = mem.measured.events > 0 ? measured_json(mem) : nlohmann::json(nullptr);
    if (needs_hint(c)) m[k::kHint] = profile_memory_hint(c.rank->format);
    o[k::kMemory] = m;
  }

  void html(const Context& c, std::string& h) const override {
    const metrics::RankMemory& m = c.rank->memory;
    h += "<h3>Memory, measured vs predicted</h3>\n";
    if (m.measured.events > 0) {
      measured_html(c, h);
      if (!counters_add(m)) {
        if (const std::string in = inputs_line(m); !in.empty()) h += "<p>Model inputs: " + html_escape(in) + "</p>\n";
        return;
      }
    }
    if (needs_hint(c)) h += "<p>" + html_escape(profile_memory_hint(c.rank->format)) + "</p>\n";
    if (!any_value(m)) {
      if (!needs_hint(c)) h += "<p>" + html_escape(memory_not_applicable(m)) + "</p>\n";
      if (const std::string in = inputs_line(m); !in.empty()) h += "<p>Model inputs: " + html_escape(in) + "</p>\n";
      return;
    }
    h += bars(m);
    if (std::any_of(m.rows.begin(), m.rows.end(), [](const auto& r) { return r.at_fullest; })) {
      std::string at;  // where the rows add up to the allocator total
      for (const metrics::MemoryRow& row : m.rows)
        if (row.at_fullest) at += (at.empty() ? "" : ", ") + row.category + " " + mb_cell(*row.at_fullest);
      h += "<p><span title=\"" + html_escape(definition("memory", "at fullest MB")) +
           "\">at fullest MB</span>: " + html_escape(at) + "</p>\n";
    }
    NaNotes na;
    for (const metrics::MemoryRow& row : m.rows) {
      if (!row.measured) na.cell(row.category, "measured", na_text(row.measured_na));
      if (!row.predicted) na.cell(row.category, "predicted", na_text(row.predicted_na));
    }
    h += html::na_lines(na);
    if (const std::string in = inputs_line(m); !in.empty()) h += "<p>Model inputs: " + html_escape(in) + "</p>\n";
    if (const std::string s = states_model(m); !s.empty()) h += "<p>Model states: " + html_escape(s) + "</p>\n";
    if (m.activations) h += "<p>Activations: " + html_escape(activations_how(*m.activations)) + "</p>\n";
    if (const std::string a = activations_vs_measured(m); !a.empty())
      h += "<p>Activations vs measured: " + html_escape(a) + "</p>\n";
    if (const std::string r = rest_unsplit(m); !r.empty()) h += "<p>Rest: " + html_escape(r) + "</p>\n";
    if (const std::string d = departs_most(m); !d.empty()) h += "<p>Departs most: " + html_escape(d) + "</p>\n";
    if (const std::string why = memory_not_applicable(m); !why.empty()) h += "<p>" + html_escape(why) + "</p>\n";
  }
};

}  // namespace

const Section& memory_section() {
  static const Memory s;
  return s;
}

}  // namespace shardscope::report
