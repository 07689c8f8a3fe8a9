#!/usr/bin/env bash
# `pip install .` offline (docs/python.md): pyproject.toml and setup.py, copied with python/ into a temporary
# folder (pip writes its egg-info beside them, never into the checkout), build the package with Debian's
# setuptools and no index; SHARDSCOPE_CMAKE_BUILD_DIR lets setup.py take the module from this build instead of
# configuring and compiling the analyzer again (minutes). The installed package reports as the CLI does.
#   tests/python/pip_install.sh SOURCE_DIR BUILD_DIR PYTHON SHARDSCOPE_BIN RUN_DIR
set -euo pipefail
src=$1 build=$2 python=$3 bin=$4 run=$5
"$python" -m pip --version >/dev/null 2>&1 || { echo "skipped: $python has no pip (Debian: python3-pip)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
cp "$src/pyproject.toml" "$src/setup.py" "$tmp/src/"
cp -r "$src/python" "$tmp/src/python"
rm -rf "$tmp/src/python/__pycache__" "$tmp/src/python/shardscope/__pycache__"
(cd "$tmp/src" && SHARDSCOPE_CMAKE_BUILD_DIR=$build PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
  "$python" -m pip install --no-build-isolation --no-index --no-deps --target "$tmp/site" . >"$tmp/pip.log" 2>&1) ||
  { echo "FAIL: pip install . failed:"; tail -20 "$tmp/pip.log"; exit 1; }
ls "$tmp/site/shardscope/"_shardscope.*.so >/dev/null
"$bin" report --format json "$run" >"$tmp/cli.json" 2>/dev/null
cd "$tmp"
PYTHONPATH=$tmp/site "$python" -W ignore -c "
import json, shardscope
assert shardscope.__file__.startswith('$tmp/site/'), shardscope.__file__
assert shardscope.report('$run') == json.load(open('cli.json')), 'the pip-installed module reports otherwise than the CLI'
print('pip installed it offline into', '$tmp/site', 'and it reports as the CLI does')"
