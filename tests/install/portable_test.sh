#!/usr/bin/env bash
# `cpack -G TGZ` of this build tree (the portable component), unpacked into a fresh folder whose name has a
# space in it, run with a clean environment: the report it writes equals the build tree's, and its program
# and --mpi module load every library but the C/C++ runtime (and MPI) from the unpacked lib/.
#   portable_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$(realpath "$1") src=$(realpath "$2") work=$3
rm -rf "$work" && mkdir -p "$work" && work=$(realpath "$work")
(cd "$build" && cpack -G TGZ -B "$work/pkg" >"$work/cpack.log") || { cat "$work/cpack.log" >&2; exit 1; }
tarball=$(find "$work/pkg" -maxdepth 1 -name 'shardscope-*-Linux.tar.gz')
[[ -f $tarball ]] || { echo "FAIL: no shardscope-*-Linux.tar.gz in $work/pkg" >&2; ls "$work/pkg" >&2; exit 1; }
mkdir -p "$work/un packed"
tar xzf "$tarball" -C "$work/un packed"
dir=$(dirname "$(find "$work/un packed" -path '*/bin/shardscope' -type f)")/..
dir=$(realpath "$dir")
[[ -x $dir/bin/shardscope ]] || { echo "FAIL: no bin/shardscope in the tarball" >&2; exit 1; }
fail=0
grep -q "libshardscope_mpi.so" "$dir/README.md" 2>/dev/null ||
  { echo "FAIL: the tarball's README.md does not say how --mpi finds its MPI" >&2; fail=1; }

# The same report as the build tree's, from another folder, with nothing in the environment.
run=$src/tests/data/torch113_ddp_gloo
"$build/analyzer/shardscope" report -q --format json "$run" >"$work/build.json" 2>/dev/null
(cd "$work" && env -i PATH=/usr/bin:/bin "$dir/bin/shardscope" report -q --format json "$run" >"$work/unpacked.json" 2>"$work/unpacked.err") ||
  { echo "FAIL: the unpacked shardscope exited non-zero: $(head -3 "$work/unpacked.err")" >&2; fail=1; }
cmp -s "$work/build.json" "$work/unpacked.json" ||
  { echo "FAIL: the unpacked shardscope's report differs from the build tree's" >&2; diff "$work/build.json" "$work/unpacked.json" | head >&2; fail=1; }
[[ -s $work/unpacked.json ]] || { echo "FAIL: the unpacked report is empty" >&2; fail=1; }

# Every library that is not the C/C++ runtime resolves inside the unpacked lib/; MPI is not among them.
runtime='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|librt\.so|libpthread\.so|libstdc\+\+\.so|libgcc_s\.so)'
# FILE WHAT [direct]: with `direct`, only the file's own NEEDED entries (the module's MPI brings MPI's own).
check_ldd() {
  local shipped=0 needed="" line name path
  [[ ${3:-} == direct ]] && needed=" $(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  while IFS= read -r line; do
    [[ $line =~ ^[[:space:]]*([^[:space:]]+)( =\> (.*))?$ ]] || continue
    name=${BASH_REMATCH[1]} path=${BASH_REMATCH[3]% (0x*}
    [[ $name =~ $runtime || $name == /* ]] && continue
    [[ -n $needed && $needed != *" $name "* ]] && continue
    if [[ $name == libmpi* || $name == libopen-* ]]; then
      [[ -n $needed ]] || { echo "FAIL: $2 needs $name: it must start without MPI" >&2; fail=1; }
      continue
    fi
    if [[ -z $path || $path == "not found" ]]; then echo "FAIL: $2: $name not found" >&2; fail=1; continue; fi
    case $(realpath "$path") in
      "$dir"/lib/*) shipped=$((shipped + 1)) ;;
      *) echo "FAIL: $2 loads $name from $path, not from the unpacked lib/" >&2; fail=1 ;;
    esac
  done < <(env -i PATH=/usr/bin:/bin ldd "$1")
  echo "$2: $shipped libraries from the unpacked lib/"
  ((shipped > 0)) || { echo "FAIL: $2 loads nothing from the unpacked lib/ (is its RPATH \$ORIGIN/../lib?)" >&2; fail=1; }
}
check_ldd "$dir/bin/shardscope" bin/shardscope
readelf -d "$dir/bin/shardscope" | grep -q 'R.*PATH.*\$ORIGIN/../lib' ||
  { echo "FAIL: bin/shardscope's RPATH is not \$ORIGIN/../lib: $(readelf -d "$dir/bin/shardscope" | grep PATH)" >&2; fail=1; }
if [[ -f $dir/lib/shardscope/libshardscope_mpi.so ]]; then
  check_ldd "$dir/lib/shardscope/libshardscope_mpi.so" lib/shardscope/libshardscope_mpi.so direct
  # Without the module, --mpi says which module and which MPI in one line.
  mv "$dir/lib/shardscope/libshardscope_mpi.so" "$work/module.so"
  if env -i PATH=/usr/bin:/bin "$dir/bin/shardscope" report --mpi "$run" >/dev/null 2>"$work/nompi.err"; then
    echo "FAIL: --mpi without its module exited 0" >&2; fail=1
  fi
  grep -q "cannot load .*libshardscope_mpi.so (built against .*MPI" "$work/nompi.err" && [[ $(wc -l <"$work/nompi.err") == 1 ]] ||
    { echo "FAIL: --mpi without its module said: $(cat "$work/nompi.err")" >&2; fail=1; }
fi
exit $fail
