# The headers most library files include (nlohmann/json, fmt and the common standard headers), compiled once
# for the analyzer's, the plugins' and sizing's files instead of parsed by each. On the 2-core VM
# (2026-11-27, gcc 12, -O2 -g1) six analyzer files took 34.2 CPU-s without it and 28.3 with it; making it
# costs 4.2 CPU-s once. gcc takes a precompiled header only under the same flags: these libraries are all
# -fPIC with fmt as a shared library, as is the object library that makes it; a file whose flags differ would
# read the headers as text instead (-Winvalid-pch names it). The same in the sanitized builds, whose flags
# this target gets too. No <filesystem>: it brings std::quoted, which argument-dependent lookup then prefers
# to the Nsight importer's own quoted() for a std::string.
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
