#!/usr/bin/env bash
# `cpack -G DEB` of this build tree; the packages' declared dependencies; both unpacked with dpkg -x into a
# fresh root (no root rights, no container); `shardscope --version` run from it; check_prefix.sh on <root>/usr.
#   package_test.sh BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR VERSION
set -euo pipefail
build=$(realpath "$1") consumer=$2 work=$3 version=$4
here=$(dirname "$0")
rm -rf "$work" && mkdir -p "$work" && work=$(realpath "$work")
(cd "$build" && cpack -G DEB -B "$work/pkg" >"$work/cpack.log") || { cat "$work/cpack.log" >&2; exit 1; }

tools=$(find "$work/pkg" -maxdepth 1 -name "shardscope_${version}_*.deb")
dev=$(find "$work/pkg" -maxdepth 1 -name "shardscope-dev_${version}_*.deb")
[[ -f $tools && -f $dev ]] || { echo "FAIL: expected shardscope_${version} and shardscope-dev_${version} .debs in:" >&2; ls "$work/pkg" >&2; exit 1; }

# The tools' shared-library dependencies come from dpkg-shlibdeps (libc6 is always among them); the dev
# package names what its static libraries and headers need.
tools_deps=$(dpkg-deb -f "$tools" Depends)
dev_deps=$(dpkg-deb -f "$dev" Depends)
echo "shardscope Depends: $tools_deps"
echo "shardscope-dev Depends: $dev_deps"
[[ $tools_deps == *libc6* && $tools_deps == *libstdc++6* ]] || { echo "FAIL: shardscope's Depends lacks its shared libraries" >&2; exit 1; }
[[ $dev_deps == *nlohmann-json3-dev* && $dev_deps == *zlib1g-dev* ]] || { echo "FAIL: shardscope-dev's Depends is incomplete" >&2; exit 1; }

dpkg -x "$tools" "$work/root"
dpkg -x "$dev" "$work/root"
got=$("$work/root/usr/bin/shardscope" --version)
[[ $got == "shardscope $version" ]] || { echo "FAIL: --version says '$got', expected 'shardscope $version'" >&2; exit 1; }
echo "$got"
# The trainer, where built, loads libtorch (and NCCL) from the unpacked root too.
if [[ -x $work/root/usr/bin/shardscope-train ]]; then
  "$work/root/usr/bin/shardscope-train" --help >/dev/null || { echo "FAIL: the packaged shardscope-train does not start" >&2; exit 1; }
fi
"$here/check_prefix.sh" "$work/root/usr" "$consumer" "$work/check"
