// What each column of the report's tables means, in one place: the text legend under a table, the HTML
// header's tooltip and the JSON's "definitions" object all read it, so the three cannot say different
// things. docs/spec.md has the full definitions these summarise.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardscope::report {

// A table is named by its first column: "step" (per step), "collective", "unit i" (prefetch units), "rank"
// (stragglers), "memory", "top device activity". The definition of one of its columns; "" for a column that needs none.
const std::string& definition(const std::string& table, const std::string& column);
// The legend of a table with this header: "legend: exposed ms = ...; ..." in lines of at most about 160
// characters, each ending in a newline and starting with `indent`; "" when no column has a definition.
std::string legend(const std::vector<std::string>& header, const std::string& indent);
// {table: {column: definition}}.
nlohmann::json definitions_json();

}  // namespace shardscope::report
