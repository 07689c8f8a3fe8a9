#!/usr/bin/env bash
# Checks an installed shardscope as a user meets it: the consumer project (tests/consumer) configured with
# find_package(shardscope) against PREFIX alone, built, run; its trace read by PREFIX's own `shardscope
# inspect`; the same program built with pkg-config's flags; every installed header compiling on its own.
#   check_prefix.sh PREFIX CONSUMER_SOURCE_DIR WORK_DIR
set -euo pipefail
prefix=$(realpath "$1") source_root=$(realpath "$2/../..") work=$3
mkdir -p "$work" && work=$(realpath "$work")
# A copy, so that any path into shardscope's source tree in the consumer's build is a leak.
rm -rf "$work/src" && cp -r "$2" "$work/src"
consumer=$work/src

# find_package must take shardscope from PREFIX, never from a system install or the user package registry.
cmake -S "$consumer" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF >"$work/configure.log"
found=$(sed -n 's/^shardscope_DIR:PATH=//p' "$work/build/CMakeCache.txt")
case "$found" in
  "$prefix"/*) ;;
  *) echo "FAIL: find_package(shardscope) found '$found', not one under $prefix" >&2; exit 1 ;;
esac
cmake --build "$work/build" >"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
# Nothing from shardscope's source or build tree (include paths, libraries), only the prefix: with the
# prefix's and the consumer's own paths taken out, the source root must not appear in its build at all.
if sed -e "s|$prefix||g" -e "s|$work||g" "$work/build/build.ninja" | grep -q -F "$source_root/"; then
  echo "FAIL: the consumer's build names a path into $source_root:" >&2
  sed -e "s|$prefix||g" -e "s|$work||g" "$work/build/build.ninja" | grep -F "$source_root/" | head -5 >&2
  exit 1
fi

"$work/build/consumer" "$work/cmake.json.gz"
"$prefix/bin/shardscope" inspect --format json "$work/cmake.json.gz" >"$work/inspect.json"
grep -q '"consumer"' "$work/inspect.json" || { echo "FAIL: inspect does not show the consumer's run config" >&2; cat "$work/inspect.json" >&2; exit 1; }

# pkg-config: the same program from its flags alone.
pc=$(dirname "$(find "$prefix" -name shardscope-tracer.pc -print -quit)")
[[ -f $pc/shardscope-tracer.pc ]] || { echo "FAIL: no shardscope-tracer.pc under $prefix" >&2; exit 1; }
cflags=$(PKG_CONFIG_PATH="$pc" pkg-config --cflags shardscope-tracer)
libs=$(PKG_CONFIG_PATH="$pc" pkg-config --libs shardscope-tracer)
# shellcheck disable=SC2086  # the flags are words
"${CXX:-c++}" -std=c++20 $cflags "$consumer/main.cc" -o "$work/consumer-pc" $libs
"$work/consumer-pc" "$work/pc.json.gz"
"$prefix/bin/shardscope" inspect "$work/pc.json.gz" >/dev/null

# Each installed header stands alone: none includes one that was left out.
while IFS= read -r h; do
  # shellcheck disable=SC2086
  echo "#include \"${h#"$prefix"/*include/}\"" | "${CXX:-c++}" -std=c++20 $cflags -fsyntax-only -x c++ - \
    || { echo "FAIL: installed header ${h#"$prefix"/} does not compile on its own" >&2; exit 1; }
done < <(find "$prefix" -path '*/include/tracer/*' -name '*.h')
echo "ok: $prefix"
