#!/usr/bin/env bash
# `cmake --install` of this build tree into a fresh prefix, then check_prefix.sh against it.
#   consumer_test.sh BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR LIBDIR
set -euo pipefail
build=$1 consumer=$2 work=$3 libdir=$4
here=$(dirname "$0")
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
for f in bin/shardscope "$libdir"/cmake/shardscope/shardscope-config.cmake \
         "$libdir"/cmake/shardscope/shardscope-config-version.cmake "$libdir"/pkgconfig/shardscope-tracer.pc \
         "$libdir"/libshardscope_tracer.a "$libdir"/libshardscope_format.a include/tracer/tracer.h; do
  [[ -e $work/prefix/$f ]] || { echo "FAIL: $f not installed" >&2; exit 1; }
done
"$here/check_prefix.sh" "$work/prefix" "$consumer" "$work/check"
