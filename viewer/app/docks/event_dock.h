// The Event dock: the selected event's name, times, class, unit, bytes, group, step, the host call that
// launched it and its args. The dock keeps one width whatever the name: a 500-character template kernel
// name sits in a read-only line edit (scrolls, selectable, copyable) and long values are elided in the
// table, so selecting such a kernel never widens the dock nor shrinks the timeline.
#pragma once

#include <QDockWidget>

class QLineEdit;
class QTextBrowser;

namespace shardscope::viewer {

class SelectionModel;

class EventDock : public QDockWidget {
  Q_OBJECT
 public:
  static constexpr int kWidth = 300;  // the dock's width, whatever it shows
  EventDock(SelectionModel* selection, QWidget* parent = nullptr);
  QString name() const;     // the full name of the selected event ("" when none)
  QString details() const;  // the table, as plain text

 private:
  void refresh();
  SelectionModel* selection_;
  QLineEdit* name_;
  QTextBrowser* details_;
};

}  // namespace shardscope::viewer
