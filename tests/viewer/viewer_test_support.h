// What the viewer's QTest programs share: the golden traces loaded through the pipeline, hand-built events,
// and a malformed trace written into a temporary folder.
#pragma once

#include <QFile>
#include <QString>
#include <QTemporaryDir>

#include <string>

#include "analyzer/analysis/run.h"

namespace shardscope::viewer::test {

inline analysis::AnalysedRun load(const std::string& path, bool keep_args = false) {
  plugins::LoadOptions options;
  options.keep_args = keep_args;
  return analysis::analyse_run({std::string(SHARDSCOPE_SOURCE_DIR) + "/" + path}, options);
}

inline model::Event event(int64_t ts, int64_t dur, model::IntervalClass cls = model::IntervalClass::Compute,
                          model::CollectiveKind coll = model::CollectiveKind::None, model::StringId name = 0) {
  model::Event e;
  e.ts_ns = ts;
  e.dur_ns = dur;
  e.cls = cls;
  e.coll = coll;
  e.name = name;
  return e;
}

// A file that starts like a Kineto trace and is not JSON; returns its path ("" when it could not be written).
inline QString write_malformed_trace(const QTemporaryDir& dir, const QString& name) {
  QString path = dir.filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return {};
  f.write("{\"traceEvents\": [ this is not json");
  return path;
}

}  // namespace shardscope::viewer::test
