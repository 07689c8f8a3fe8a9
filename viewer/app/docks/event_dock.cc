#include "viewer/app/docks/event_dock.h"

#include <QLineEdit>
#include <QLocale>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "viewer/app/selection_model.h"
#include "viewer/app/timeline_widget.h"
#include "viewer/model/event_args.h"

namespace shardscope::viewer {

namespace {
// Table cells are elided in the middle: a template name's start and end say more than its middle.
constexpr int kMaxCell = 60;
QString cell(std::string_view s) {
  QString q = QString::fromUtf8(s.data(), qsizetype(s.size()));
  if (q.size() > kMaxCell) q = q.left(kMaxCell / 2 - 1) + QStringLiteral("…") + q.right(kMaxCell / 2 - 1);
  return q.toHtmlEscaped();
}
}  // namespace

EventDock::EventDock(SelectionModel* selection, QWidget* parent)
    : QDockWidget(tr("Event"), parent), selection_(selection) {
  setObjectName("Event");
  auto* box = new QWidget(this);
  auto* v = new QVBoxLayout(box);
  v->setContentsMargins(4, 4, 4, 4);
  name_ = new QLineEdit(box);
  name_->setObjectName("eventName");
  name_->setReadOnly(true);
  name_->setPlaceholderText(tr("Click an event to see it here."));
  details_ = new QTextBrowser(box);
  details_->setObjectName("eventDetails");
  details_->setOpenLinks(false);
  v->addWidget(name_);
  v->addWidget(details_, 1);
  // A fixed width: neither the line edit's nor the browser's size hint follows their text, and the dock
  // does not grow past this when its contents change.
  box->setMinimumWidth(kWidth);
  box->setMaximumWidth(kWidth);
  setWidget(box);
  connect(selection_, &SelectionModel::eventChanged, this, &EventDock::refresh);
}

QString EventDock::name() const { return name_->text(); }
QString EventDock::details() const { return details_->toPlainText(); }

void EventDock::refresh() {
  const TimelineLayout* layout = selection_->layout();
  const auto& sel = selection_->event();
  if (!layout || !sel) {
    name_->clear();
    details_->clear();
    return;
  }
  const RankView& rv = layout->ranks()[sel->rank];
  const model::Rank& r = *rv.rank;
  const uint32_t track = sel->event.track, index = sel->event.index;
  const model::Track& t = r.tracks[track];
  const model::Event& e = t.events[index];
  std::string_view full = r.str(e.name);
  name_->setText(QString::fromUtf8(full.data(), qsizetype(full.size())));
  name_->setCursorPosition(0);  // the name's start in view, not its end
  name_->setToolTip(name_->text());
  double origin = double(layout->start_ns());
  QString kind = QString::fromUtf8(model::to_string(e.cls).data());
  if (e.coll != model::CollectiveKind::None) kind += " / " + QString::fromUtf8(model::to_string(e.coll).data());
  QString html = "<table>";
  auto row = [&html](const QString& k, const QString& v) {
    html += "<tr><td>" + k + "&nbsp;</td><td>" + v + "</td></tr>";
  };
  row(tr("rank"), QString::number(r.rank));
  row(tr("track"), cell(track_label(t)));
  row(tr("start"), format_ns(double(e.ts_ns) - origin));
  row(tr("duration"), format_ns(double(e.dur_ns)));
  row(tr("class"), kind);
  if (e.unit >= 0) row(tr("unit"), QString::number(e.unit));
  if (e.bytes != model::kUnknown) row(tr("bytes"), QLocale().toString(qlonglong(e.bytes)));
  if (e.group_size > 0) row(tr("group"), tr("%1 ranks").arg(e.group_size));
  if (e.step >= 0 && size_t(e.step) < r.steps.size()) row(tr("step"), QString::number(r.steps[size_t(e.step)].number));
  if (const model::LaunchLink* l = rv.index.launch_of({track, index})) {
    const model::Event& h = r.tracks[l->launch.track].events[l->launch.index];
    row(tr("launched by"), cell(r.str(h.name)) + " @ " + format_ns(double(h.ts_ns) - origin));
  }
  // The trace's own args, as it gave them.
  std::vector<ArgRow> args = arg_rows(r, rv.args, track, index);
  if (!args.empty()) html += "<tr><td colspan=\"2\"><b>" + tr("args") + "</b></td></tr>";
  for (const ArgRow& a : args)
    row(cell(a.key), QString::fromStdString(a.value).toHtmlEscaped());  // cut at 240 by arg_rows; wraps
  html += "</table>";
  details_->setHtml(html);
}

}  // namespace shardscope::viewer
