// What the timeline draws over its rows: the ruler, search hits, the measured range, the selected event. The
// rows themselves are in timeline_painter.cc.
#include <QObject>
#include <QPainter>

#include <cmath>

#include "viewer/app/timeline_painter.h"

namespace shardscope::viewer {

QString format_ns(double ns) {
  double a = std::fabs(ns);
  if (a >= 1e9) return QString::number(ns / 1e9, 'f', 3) + " s";
  if (a >= 1e6) return QString::number(ns / 1e6, 'f', 3) + " ms";
  if (a >= 1e3) return QString::number(ns / 1e3, 'f', 1) + QString::fromUtf8(" µs");
  return QString::number(ns, 'f', 0) + " ns";
}

namespace {
// A tick's label with as many decimals as the tick step needs, in the step's unit ("120 ms", "1.5 s").
QString tick_label(double ns, double step) {
  double unit = step >= 1e9 ? 1e9 : step >= 1e6 ? 1e6 : step >= 1e3 ? 1e3 : 1;
  const char* name = unit == 1e9 ? " s" : unit == 1e6 ? " ms" : unit == 1e3 ? " µs" : " ns";
  int decimals = std::max(0, int(-std::floor(std::log10(step / unit) + 1e-9)));
  return QString::number(ns / unit, 'f', decimals) + QString::fromUtf8(name);
}
}  // namespace

void TimelinePainter::clipToPlot() {
  p_.setClipRect(
      QRect(f_.label_width, TimelineFrame::kRulerHeight, f_.plot_width, f_.height - TimelineFrame::kRulerHeight));
}

void TimelinePainter::ruler() {
  const int h = TimelineFrame::kRulerHeight;
  const Viewport& vp = f_.vp;
  p_.fillRect(QRect(0, 0, f_.width, h), QColor(0xEE, 0xEE, 0xEE));
  p_.setPen(QColor(0x44, 0x44, 0x44));
  p_.drawText(QRect(4, 0, f_.label_width - 8, h), Qt::AlignVCenter | Qt::AlignLeft,
              format_ns(vp.ns_per_px * vp.width_px));
  // A tick every 1, 2 or 5 × 10^k ns, at least 100 px apart; labels relative to the trace's start.
  double raw = vp.ns_per_px * 100;
  double pow10 = std::pow(10.0, std::floor(std::log10(raw)));
  double step = raw / pow10 <= 1 ? pow10 : raw / pow10 <= 2 ? 2 * pow10 : raw / pow10 <= 5 ? 5 * pow10 : 10 * pow10;
  double origin = double(f_.layout->start_ns());
  double first = std::ceil((vp.start_ns - origin) / step) * step + origin;
  for (double t = first; t < vp.end_ns(); t += step) {
    int x = f_.label_width + int(std::lround(vp.x_of(t)));
    p_.drawLine(x, h - 6, x, h);
    p_.drawText(x + 3, h - 8, tick_label(t - origin, step));
  }
  p_.drawLine(0, h - 1, f_.width, h - 1);
}

void TimelinePainter::highlights(const SearchResult& hits) {
  if (hits.hits.empty()) return;
  p_.save();
  clipToPlot();
  p_.setPen(QPen(QColor(0x00, 0x00, 0x00), 1.5, Qt::DashLine));
  p_.setBrush(Qt::NoBrush);
  // Outlines cost a rectangle each: past a few thousand in view they would hide the marks anyway. The
  // candidates run from the latest start back, so one long hit (a step) does not make every frame walk all
  // hits before the window.
  constexpr size_t kMaxOutlines = 4000, kMaxCandidates = 20000;
  // A hit narrower than a few pixels gets a thin bar along its lane's top instead of an outline: dashed
  // outlines a pixel apart (a common name zoomed out) merged into black blobs that hid the marks under them.
  constexpr double kOutlineMinPx = 4;
  std::vector<QRectF> bars;
  auto [first, last] = hits_near(hits, f_.vp.start_ns, f_.vp.end_ns());
  size_t drawn = 0;
  for (size_t i = last, seen = 0; i > first && drawn < kMaxOutlines && seen < kMaxCandidates; ++seen) {
    const SearchHit& h = hits.hits[--i];
    if (auto r = f_.event_rect(h.rank, h.event);
        r && r->right() >= f_.label_width && r->bottom() >= TimelineFrame::kRulerHeight && r->top() <= f_.height) {
      if (r->width() >= kOutlineMinPx) p_.drawRect(*r);
      else
        bars.emplace_back(r->left(), r->top(), r->width(), 2.0);
      ++drawn;
    }
  }
  p_.setPen(Qt::NoPen);
  p_.setBrush(QColor(0x20, 0x20, 0x20));
  p_.drawRects(bars.data(), int(bars.size()));
  p_.restore();
}

void TimelinePainter::range(std::pair<int64_t, int64_t> r) {
  p_.save();
  clipToPlot();
  double x0 = f_.x_of(double(r.first)), x1 = f_.x_of(double(r.second));
  p_.fillRect(QRectF(x0, TimelineFrame::kRulerHeight, x1 - x0, f_.height), QColor(0x33, 0x66, 0xCC, 40));
  p_.restore();
}

void TimelinePainter::selection(uint32_t rank, model::EventRef event) {
  p_.save();
  clipToPlot();
  // Where a derived row (an FSDP unit's) shows the event too: outlined there as well.
  p_.setPen(QPen(Qt::black, 2));
  p_.setBrush(Qt::NoBrush);
  for (const QRectF& r : f_.derived_rects(rank, event)) p_.drawRect(r);
  if (auto r = f_.event_rect(rank, event)) {
    p_.setPen(QPen(Qt::black, 2));
    p_.setBrush(Qt::NoBrush);
    p_.drawRect(*r);
  }
  p_.restore();
}

void TimelinePainter::marks(const std::vector<TimeMark>& marks) {
  if (marks.empty()) return;
  p_.save();
  p_.setClipRect(QRect(f_.label_width, 0, f_.plot_width, f_.height));
  const QColor band(0xFF, 0xB3, 0x00, 56), edge(0xE0, 0x8A, 0x00);
  for (const TimeMark& m : marks) {
    double x0 = f_.x_of(double(m.lo)), x1 = f_.x_of(double(m.hi));
    if (x1 < f_.label_width || x0 > f_.label_width + f_.plot_width) continue;
    // At least 2 px: an instant's mark, or a short slice zoomed out, stays visible.
    if (x1 - x0 < 2) x1 = x0 + 2;
    p_.fillRect(QRectF(x0, 0, x1 - x0, f_.height), band);
    p_.setPen(QPen(edge, 1));
    p_.drawLine(QPointF(x0, 0), QPointF(x0, f_.height));
    p_.drawLine(QPointF(x1, 0), QPointF(x1, f_.height));
  }
  p_.restore();
}

void TimelinePainter::areaRows(const std::vector<QRectF>& rects) {
  if (rects.empty()) return;
  p_.save();
  clipToPlot();
  p_.setPen(QPen(QColor(0x33, 0x66, 0xCC), 1));
  p_.setBrush(QColor(0x33, 0x66, 0xCC, 40));
  for (const QRectF& r : rects) p_.drawRect(r);
  p_.restore();
}

std::optional<QLineF> flow_line(const TimelineFrame& f, const Flow& flow) {
  auto a = f.flow_rect(flow.from.rank, flow.from.event), b = f.flow_rect(flow.to.rank, flow.to.event);
  if (!a || !b) return std::nullopt;
  const bool down = b->top() >= a->top();
  return QLineF(a->left(), down ? a->bottom() : a->top(), b->left(), down ? b->top() : b->bottom());
}

namespace {
void arrow(QPainter& p, const QLineF& l) {
  p.drawLine(l);
  QLineF back(l.p2(), l.p1()), h1 = back, h2 = back;
  h1.setLength(8), h2.setLength(8);
  h1.setAngle(back.angle() + 25), h2.setAngle(back.angle() - 25);
  p.drawLine(h1), p.drawLine(h2);
}
}  // namespace

void TimelinePainter::flows(const std::vector<Flow>& launches, const CollectiveFlows& collective) {
  p_.save();
  clipToPlot();
  p_.setBrush(Qt::NoBrush);
  p_.setPen(QPen(QColor(0x80, 0x30, 0xB0), 1.5));
  for (const Flow& fl : collective.links)
    if (auto l = flow_line(f_, fl)) arrow(p_, *l);
  if (collective.last) {
    const FlowEnd& end = collective.ends[*collective.last];
    if (auto r = f_.flow_rect(end.rank, end.event)) {
      p_.setPen(QPen(QColor(0xCC, 0x00, 0x00), 2));
      p_.drawRect(*r);
      p_.drawText(QPointF(r->left() + 3, r->top() - 2),
                  QObject::tr("last, +%1").arg(format_ns(double(collective.late_by_ns))));
    }
  }
  p_.setPen(QPen(QColor(0xCC, 0x00, 0x00), 1.5));
  for (const Flow& fl : launches)
    if (auto l = flow_line(f_, fl)) arrow(p_, *l);
  p_.restore();
}

}  // namespace shardscope::viewer
