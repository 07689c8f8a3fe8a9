// Perfetto's habits in the window: M marks (the timeline's key; View > Clear marks), `/` focuses the search
// box, `?` opens the keyboard map, Esc closes what is open over the timeline (the keyboard map, the search),
// and the Area dock for a Shift+drag across rows.
#include <QAction>
#include <QDockWidget>
#include <QKeyEvent>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QShortcut>

#include "viewer/app/docks/area_dock.h"
#include "viewer/app/main_window.h"
#include "viewer/app/timeline_widget.h"

namespace shardscope::viewer {

void MainWindow::buildKeys() {
  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->setObjectName("viewMenu");
  // M itself is the timeline's key (it marks what is under the cursor too); the menu offers it by name.
  view->addAction(tr("&Mark the selection (M)"), timeline_, &TimelineWidget::markSelection)
      ->setObjectName("markAction");
  view->addAction(tr("&Clear marks"), selection_, &SelectionModel::clearMarks)->setObjectName("clearMarksAction");

  // A text box keeps its characters: QLineEdit takes "/" and "?" before these shortcuts see them.
  new QShortcut(QKeySequence(Qt::Key_Slash), this, [this] {
    search_edit_->setFocus(Qt::ShortcutFocusReason);
    search_edit_->selectAll();
  });
  new QShortcut(QKeySequence(Qt::Key_Question), this, [this] { showKeyboardHelp(); });

  // A tab beside the Steps and Prefetch tables, in front once an area is chosen.
  auto* area = new AreaDock(selection_, this);
  addDock(area, Qt::BottomDockWidgetArea);
  if (auto* steps = findChild<QDockWidget*>("Steps")) tabifyDockWidget(steps, area);
  if (auto* prefetch = findChild<QDockWidget*>("Prefetch")) prefetch->raise();  // still the tab in front
  connect(selection_, &SelectionModel::rangeChanged, area, [this, area] {
    if (selection_->range() && !selection_->range()->tracks.empty()) area->raise();
  });
}

bool MainWindow::closeOverlay() {
  if (keyboard_help_ && keyboard_help_->isVisible()) {
    keyboard_help_->hide();
    return true;
  }
  if (!search_text_.empty() || !search_edit_->text().isEmpty()) {
    search_edit_->clear();  // clears the hits, their outlines and the count
    search(QString());
    timeline_->setFocus(Qt::OtherFocusReason);
    return true;
  }
  return false;
}

void MainWindow::keyPressEvent(QKeyEvent* e) {
  // Esc the timeline did not use (no measured range to clear) reaches here.
  if (e->key() == Qt::Key_Escape && closeOverlay()) {
    e->accept();
    return;
  }
  QMainWindow::keyPressEvent(e);
}

}  // namespace shardscope::viewer
