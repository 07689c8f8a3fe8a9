// What the window's parts share: the open run, the selected event, the measured time range and the search
// hits and the marks, held here only. The timeline draws them and writes its clicks, ranges and Esc here; the docks observe
// it (each connects to the signals it needs) and write it too, so a new dock is one class that reads this and
// never reaches into the window, the timeline or another dock.
#pragma once

#include <QObject>

#include <memory>
#include <optional>

#include "analyzer/analysis/run.h"
#include "model/index.h"
#include "viewer/model/across_ranks.h"
#include "viewer/model/area_slices.h"
#include "viewer/model/marks.h"
#include "viewer/model/search.h"
#include "viewer/model/timeline_layout.h"

namespace shardscope::viewer {

struct EventSelection {
  uint32_t rank = 0;  // layout rank
  model::EventRef event;
};

struct TimeRange {
  uint32_t rank = 0;  // the rank measured
  int64_t lo = 0, hi = 0;
  std::vector<TrackRef> tracks;  // the rows the Shift+drag crossed (an area): what the Area dock lists
};

class SelectionModel : public QObject {
  Q_OBJECT
 public:
  explicit SelectionModel(QObject* parent = nullptr) : QObject(parent) {}

  // Both null while nothing is open; they must outlive their use here (the window owns them).
  void setRun(const analysis::AnalysedRun* run, const TimelineLayout* layout);
  const analysis::AnalysedRun* run() const { return run_; }
  const TimelineLayout* layout() const { return layout_; }
  // The run's collective instances across ranks (for the flows of a selected collective); built on the
  // first ask, since most selections are not collectives. Null while nothing is open.
  const AcrossRanks* across() const;

  void setEvent(std::optional<EventSelection> e);
  const std::optional<EventSelection>& event() const { return event_; }
  void setRange(std::optional<TimeRange> r);
  const std::optional<TimeRange>& range() const { return range_; }
  // Search hits to outline; `hits` must outlive its use here (null: none).
  void setHighlights(const SearchResult* hits);
  const SearchResult* highlights() const { return highlights_; }
  // Marks (M): bands across every row until cleared; a new run clears them.
  void toggleMark(int64_t lo, int64_t hi);
  void clearMarks();
  const std::vector<TimeMark>& marks() const { return marks_; }

  // A dock asks for the timeline to show [lo, hi) on (rank, track), and optionally to select an event there.
  void requestJump(uint32_t rank, uint32_t track, int64_t lo, int64_t hi, std::optional<model::EventRef> select = {}) {
    emit jumpRequested(rank, track, lo, hi, select);
  }
  // Asks for the instance of the collective `event` on layout rank `rank` to be shown on every rank (the
  // Ranks dock aligns on it and comes to the front); `rank` is also the one whose late peer is marked.
  void showAcrossRanks(uint32_t rank, model::EventRef event) { emit acrossRanksRequested(rank, event); }

 signals:
  void runChanged();
  void eventChanged();
  void rangeChanged();
  void highlightsChanged();
  void marksChanged();
  void jumpRequested(uint32_t rank, uint32_t track, qint64 lo, qint64 hi, std::optional<model::EventRef> select);
  void acrossRanksRequested(uint32_t rank, model::EventRef event);

 private:
  const analysis::AnalysedRun* run_ = nullptr;
  const TimelineLayout* layout_ = nullptr;
  mutable std::unique_ptr<AcrossRanks> across_;
  std::optional<EventSelection> event_;
  std::optional<TimeRange> range_;
  const SearchResult* highlights_ = nullptr;
  std::vector<TimeMark> marks_;
};

}  // namespace shardscope::viewer
