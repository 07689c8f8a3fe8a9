// An Nsight Systems export as the importer reads it: the shared SQLite wrapper (plugins/common/sqlite_db.h),
// opened read-only, its errors worded for an export.
#pragma once

#include <string>

#include "plugins/common/sqlite_db.h"

namespace shardscope::nsys {

inline constexpr sqlite::Wording kExportWording{
    .cannot_open = "cannot open it as SQLite: ",
    .before = "cannot read it: ",
    .after = " (a damaged or not an Nsight Systems database)",
};

class Db : public sqlite::Db {
 public:
  // `file`: what to open; `name`: what messages say. Throws trace::TraceError when SQLite cannot open it.
  Db(const std::string& file, const std::string& name) : sqlite::Db(file, name, kExportWording) {}
};

using sqlite::quoted;
using sqlite::Stmt;

}  // namespace shardscope::nsys
