# Parts with heavy or hardware-specific dependencies switch off here, each with one line saying why.

# The analyzer alone: the `shardscope` command line with a compiler and the analyzer's own libraries (fmt,
# nlohmann-json, CLI11, RE2, simdjson, libdeflate, SQLite, zlib); no CUDA, Qt or libtorch is looked for.
# What `cpack -G TGZ` packs for a login node (docs/install.md). MPI stays optional: found, `report --mpi`
# is built as its module.
option(SHARDSCOPE_ANALYZER_ONLY "Build only the analyzer (the shardscope CLI): no CUDA, viewer or trainer" OFF)
if(SHARDSCOPE_ANALYZER_ONLY)
  set(SHARDSCOPE_WITH_CUDA OFF)
  set(SHARDSCOPE_WITH_VIEWER OFF)
  set(SHARDSCOPE_WITH_TRAINING OFF)
endif()

# GPU tracing: NVTX ranges (header-only) and CUPTI activity need the CUDA toolkit.
set(SHARDSCOPE_HAVE_NVTX OFF)
set(SHARDSCOPE_HAVE_CUPTI OFF)
option(SHARDSCOPE_WITH_CUDA "Build GPU tracing (NVTX, CUPTI) when the CUDA toolkit is found" ON)
if(SHARDSCOPE_WITH_CUDA)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::nvtx3)
    set(SHARDSCOPE_HAVE_NVTX ON)
    if(TARGET CUDA::cupti)
      set(SHARDSCOPE_HAVE_CUPTI ON)
    endif()
    message(STATUS "shardscope: GPU tracing: NVTX ranges on (CUDA ${CUDAToolkit_VERSION}); CUPTI found: ${SHARDSCOPE_HAVE_CUPTI}")
  else()
    message(STATUS "shardscope: GPU tracing off: CUDA toolkit with NVTX v3 headers not found")
  endif()
else()
  message(STATUS "shardscope: GPU tracing off: SHARDSCOPE_WITH_CUDA=OFF")
endif()

# Viewer: Qt6 Widgets.
set(SHARDSCOPE_HAVE_QT OFF)
option(SHARDSCOPE_WITH_VIEWER "Build the Qt6 viewer when Qt6 is found" ON)
if(SHARDSCOPE_WITH_VIEWER)
  find_package(Qt6 QUIET COMPONENTS Widgets Test)
  if(Qt6_FOUND)
    set(SHARDSCOPE_HAVE_QT ON)
  else()
    message(STATUS "shardscope: viewer off: Qt6 (Widgets, Test) not found; install qt6-base-dev")
  endif()
else()
  message(STATUS "shardscope: viewer off: SHARDSCOPE_WITH_VIEWER=OFF")
endif()
# Off: the viewer's model and its tests only, not the window, the program or their tests (scripts/sanitize:
# the model and loaders run under ASan without rebuilding Qt's widgets code around them).
option(SHARDSCOPE_VIEWER_APP "Build the viewer's window and program (with SHARDSCOPE_WITH_VIEWER)" ON)
if(SHARDSCOPE_HAVE_QT AND NOT SHARDSCOPE_VIEWER_APP)
  message(STATUS "shardscope: viewer window off: SHARDSCOPE_VIEWER_APP=OFF (its model and model tests still build)")
endif()

# Trainer: libtorch (Debian's libtorch-dev 1.13 on CPU machines, PyTorch's libtorch on GPU machines).
set(SHARDSCOPE_HAVE_TORCH OFF)
option(SHARDSCOPE_WITH_TRAINING "Build the FSDP trainer when libtorch is found" ON)
if(SHARDSCOPE_WITH_TRAINING)
  find_package(Torch QUIET)
  if(NOT Torch_FOUND)
    # PyTorch's wheel carries libtorch and its CMake package; ask the python3 that imports it where.
    find_package(Python3 QUIET COMPONENTS Interpreter)
    if(Python3_Interpreter_FOUND)
      execute_process(COMMAND ${Python3_EXECUTABLE} -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
                      OUTPUT_VARIABLE _torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_torch_prefix)
        find_package(Torch QUIET PATHS ${_torch_prefix}/Torch NO_DEFAULT_PATH)
      endif()
    endif()
  endif()
  if(Torch_FOUND)
    set(SHARDSCOPE_HAVE_TORCH ON)
  else()
    message(STATUS "shardscope: trainer off: libtorch not found; install libtorch-dev or set Torch_DIR")
  endif()
else()
  message(STATUS "shardscope: trainer off: SHARDSCOPE_WITH_TRAINING=OFF")
endif()
