# What `cmake --install` puts under a prefix, the CMake package and pkg-config file that let another project
# link the tracer, the Debian packages `cpack -G DEB` makes of it, and the relocatable tarball `cpack -G TGZ`
# makes of the CLI. Three components:
#   tools:    the `shardscope` CLI, shardscope-train and shardscope-viewer when built, libshardscope_inject.so;
#   dev:      the tracer's static libraries, the headers a user includes, shardscope-config.cmake, the .pc file;
#   portable: bin/shardscope, its --mpi module and the shared libraries it needs beyond the C/C++ runtime and
#             MPI, copied into lib/ beside it (the TGZ; docs/install.md says why not static).
include(CMakePackageConfigHelpers)

set(SHARDSCOPE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/shardscope)

# --- tools ---
# The program finds its shipped libraries in ../lib first, and as DT_RPATH rather than RUNPATH: RUNPATH
# serves only the program's own needs, not those of the libraries it loads (RE2's Abseil).
set_target_properties(shardscope PROPERTIES INSTALL_RPATH "$ORIGIN/../lib")
target_link_options(shardscope PRIVATE -Wl,--disable-new-dtags)
install(TARGETS shardscope RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
if(TARGET shardscope_mpi)
  # lib/shardscope/ beside bin/ as the program looks for it (analyzer/cli/report_mpi_load.cc), not LIBDIR.
  set_target_properties(shardscope_mpi PROPERTIES INSTALL_RPATH "$ORIGIN/..")
  install(TARGETS shardscope_mpi LIBRARY DESTINATION lib/shardscope COMPONENT tools)
endif()
foreach(_tool shardscope-train shardscope-viewer)
  if(TARGET ${_tool})
    install(TARGETS ${_tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
  endif()
endforeach()
if(TARGET shardscope_inject)
  # Loaded by path (CUDA_INJECTION64_PATH), never linked: no soname symlinks needed.
  install(TARGETS shardscope_inject LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT tools)
endif()

# --- dev: libraries and headers ---
set(_exported shardscope_format shardscope_tracer)
if(TARGET shardscope_cupti)
  list(APPEND _exported shardscope_cupti)
endif()
install(TARGETS ${_exported} EXPORT shardscope-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)

# Only what a user's code includes: tracer.h and what it includes, the file reader/writer, the CUPTI entry
# point. The consumer test compiles against the installed prefix alone, so a missing one fails there.
install(FILES tracer/tracer.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tracer COMPONENT dev)
install(FILES tracer/host/clock.h tracer/host/nvtx.h tracer/host/record.h tracer/host/thread_buffer.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tracer/host COMPONENT dev)
install(FILES tracer/format/event.h tracer/format/error.h tracer/format/printable.h tracer/format/keys.h tracer/format/reader.h
              tracer/format/writer.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tracer/format COMPONENT dev)
if(TARGET shardscope_cupti)
  install(FILES tracer/cupti/cupti_backend.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tracer/cupti COMPONENT dev)
endif()

# --- dev: find_package(shardscope) ---
install(EXPORT shardscope-targets NAMESPACE shardscope:: FILE shardscope-targets.cmake
        DESTINATION ${SHARDSCOPE_CMAKE_DIR} COMPONENT dev)
# The config must find what the exported targets name: CUDA::nvtx3 (tracer) and CUDA::cupti (cupti) when
# this build had them.
set(SHARDSCOPE_CONFIG_NEEDS_CUDA ${SHARDSCOPE_HAVE_NVTX})
set(SHARDSCOPE_CONFIG_HAVE_CUPTI OFF)
if(TARGET shardscope_cupti)
  set(SHARDSCOPE_CONFIG_HAVE_CUPTI ON)
endif()
configure_package_config_file(cmake/shardscope-config.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/shardscope-config.cmake INSTALL_DESTINATION ${SHARDSCOPE_CMAKE_DIR})
# While shardscope is 0.x, a minor release may change the tracer's API: 0.1.x satisfies 0.1 only.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/shardscope-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/shardscope-config.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/shardscope-config-version.cmake
        DESTINATION ${SHARDSCOPE_CMAKE_DIR} COMPONENT dev)

# --- dev: pkg-config ---
# The prefix is taken from where the .pc file lies, so `cmake --install --prefix P` and an unpacked .deb
# work without rewriting it.
file(RELATIVE_PATH SHARDSCOPE_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" SHARDSCOPE_PC_TO_PREFIX "${SHARDSCOPE_PC_TO_PREFIX}")
set(SHARDSCOPE_PC_CFLAGS "")
set(SHARDSCOPE_PC_LIBS "")
if(SHARDSCOPE_HAVE_NVTX)
  # The tracer was built with NVTX ranges; its headers must see the same switch and nvtx3.
  set(SHARDSCOPE_PC_CFLAGS "-DSHARDSCOPE_HAVE_NVTX=1")
  foreach(_dir ${CUDAToolkit_INCLUDE_DIRS})
    string(APPEND SHARDSCOPE_PC_CFLAGS " -I${_dir}")
  endforeach()
  set(SHARDSCOPE_PC_LIBS "${CMAKE_DL_LIBS}")
  list(TRANSFORM SHARDSCOPE_PC_LIBS PREPEND "-l")
endif()
configure_file(cmake/shardscope-tracer.pc.in ${CMAKE_CURRENT_BINARY_DIR}/shardscope-tracer.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/shardscope-tracer.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# --- portable: the CLI for any folder of any Linux of the same C/C++ runtime (cpack -G TGZ) ---
# Shared libraries beside the program, not a static link: Debian ships RE2, simdjson and fmt as shared
# libraries only, and the MPI module must share the one copy of the C++ runtime with the program.
set(_portable shardscope)
if(TARGET shardscope_mpi)
  list(APPEND _portable shardscope_mpi)
endif()
install(TARGETS shardscope RUNTIME_DEPENDENCY_SET shardscope_portable_deps
        RUNTIME DESTINATION bin COMPONENT portable EXCLUDE_FROM_ALL)
if(TARGET shardscope_mpi)
  install(TARGETS shardscope_mpi RUNTIME_DEPENDENCY_SET shardscope_portable_deps
          LIBRARY DESTINATION lib/shardscope COMPONENT portable EXCLUDE_FROM_ALL)
endif()
# Left to the machine: the C and C++ runtime (every Linux has them; a second copy would clash with its
# libc), and MPI, which must be the cluster's own.
install(RUNTIME_DEPENDENCY_SET shardscope_portable_deps
        PRE_EXCLUDE_REGEXES "^ld-linux" "^linux-vdso" "^libc\\.so" "^libm\\.so" "^libdl\\.so" "^librt\\.so"
                            "^libpthread\\.so" "^libstdc\\+\\+\\.so" "^libgcc_s\\.so" "^libmpi" "^libopen-"
                            "^libpmix" "^libucp" "^libucs" "^libfabric" "^libhwloc" "^libevent" "^libpsm"
        POST_EXCLUDE_REGEXES "/libmpi" "/openmpi/"
        LIBRARY DESTINATION lib COMPONENT portable EXCLUDE_FROM_ALL)
# Its README: docs/install.md, which says what is in it, the MPI the module needs and how to rebuild it.
install(FILES docs/install.md DESTINATION . RENAME README.md COMPONENT portable EXCLUDE_FROM_ALL)

# --- Debian packages: shardscope (tools) and shardscope-dev ---
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME shardscope)
set(CPACK_PACKAGE_VENDOR shardscope)
set(CPACK_PACKAGE_CONTACT "shardscope maintainers <shardscope@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Profiling and diagnostics for sharded data-parallel training")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL tools dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME shardscope)
set(CPACK_DEBIAN_TOOLS_DESCRIPTION "shardscope command line tools\n The shardscope CLI (inspect, report, diff, check-prefetch, memory, launch), the\n trainer and viewer where built, and libshardscope_inject.so for CUDA_INJECTION64_PATH.")
# Shared-library dependencies of the binaries, computed by dpkg-shlibdeps. Libraries no Debian package owns
# (a CUDA toolkit from NVIDIA's wheels or runfile: libcupti, libnccl) cannot be declared; RUNPATH finds them.
set(CPACK_DEBIAN_TOOLS_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)  # as Debian ships binaries; the build tree keeps the debug info
set(CPACK_DEBIAN_DEV_PACKAGE_NAME shardscope-dev)
set(CPACK_DEBIAN_DEV_DESCRIPTION "shardscope tracer: static libraries, headers, CMake package and pkg-config file\n find_package(shardscope) gives shardscope::tracer; pkg-config shardscope-tracer the same.")
# Static libraries: what the exported targets and tracer.h need must come with them.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "nlohmann-json3-dev (>= 3.10), zlib1g-dev")
# cpack -G TGZ: the portable component alone, one tarball rooted at shardscope-VERSION-Linux/ (bin/, lib/).
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/ShardscopeCPackGenerators.cmake)
include(CPack)
