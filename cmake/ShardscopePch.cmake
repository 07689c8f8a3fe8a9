# The headers most library files include (nlohmann/json, fmt and the common standard headers), compiled once
# for the files of the analyzer's metrics, analysis and command libraries, the plugins and sizing (58) instead
# of parsed by each: about a second of CPU a file (2026-11-27, 2-core VM: 11 files 61.6 against 51.1 CPU-s with
# gcc 12 -O2 -g1, 3 files 19.5 against 15.9 under ASan+UBSan -O1, 3 files 11.5 against 9.4 with clang's fuzz
# flags); making it costs 4.7 CPU-s (5.5 under ASan). gcc takes a precompiled header only under the same flags:
# these libraries are all -fPIC with fmt as a shared library, as is the object library that makes it (it gets
# the sanitized builds' flags too); a file whose flags differ reads the headers as text (-Winvalid-pch says so).
option(SHARDSCOPE_LIBRARY_PCH "Precompile the common headers for the analyzer, plugins and sizing libraries" ON)
function(shardscope_library_pch target)
  if(NOT SHARDSCOPE_LIBRARY_PCH)
    return()
  endif()
  if(NOT TARGET shardscope_library_pch)
    # Written only when its text changes, so a re-configure does not rebuild the header.
    file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/shardscope_library_pch.cc
         CONTENT "// Nothing: this object library exists to compile cmake/ShardscopePch.cmake's precompiled header.\n")
    add_library(shardscope_library_pch OBJECT ${PROJECT_BINARY_DIR}/shardscope_library_pch.cc)
    target_link_libraries(shardscope_library_pch PRIVATE fmt::fmt nlohmann_json::nlohmann_json)
    target_precompile_headers(shardscope_library_pch PRIVATE <nlohmann/json.hpp> <fmt/format.h> <algorithm> <cmath>
                              <cstdint> <functional> <map> <memory> <optional> <ostream> <set> <string>
                              <string_view> <tuple> <unordered_map> <vector>)
  endif()
  target_precompile_headers(${target} REUSE_FROM shardscope_library_pch)
endfunction()
