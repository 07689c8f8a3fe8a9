#include "viewer/app/selection_model.h"

namespace shardscope::viewer {

void SelectionModel::setRun(const analysis::AnalysedRun* run, const TimelineLayout* layout) {
  // A new run: nothing of the old one's selection holds.
  run_ = run;
  layout_ = layout;
  across_.reset();
  event_.reset();
  range_.reset();
  highlights_ = nullptr;
  marks_.clear();
  emit runChanged();
  emit eventChanged();
  emit rangeChanged();
  emit highlightsChanged();
  emit marksChanged();
}

const AcrossRanks* SelectionModel::across() const {
  if (!run_) return nullptr;
  if (!across_) across_ = std::make_unique<AcrossRanks>(*run_);
  return across_.get();
}

void SelectionModel::setEvent(std::optional<EventSelection> e) {
  event_ = e;
  emit eventChanged();
}

void SelectionModel::setRange(std::optional<TimeRange> r) {
  range_ = r;
  emit rangeChanged();
}

void SelectionModel::setHighlights(const SearchResult* hits) {
  highlights_ = hits;
  emit highlightsChanged();
}

void SelectionModel::toggleMark(int64_t lo, int64_t hi) {
  toggle_mark(marks_, lo, hi);
  emit marksChanged();
}

void SelectionModel::clearMarks() {
  if (marks_.empty()) return;
  marks_.clear();
  emit marksChanged();
}

}  // namespace shardscope::viewer
