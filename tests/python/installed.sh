#!/usr/bin/env bash
# `cmake --install` puts the package under the prefix's site-packages, where Python imports it from with
# nothing of the build tree: it reports a committed run as the CLI does.
#   tests/python/installed.sh BUILD_DIR PYTHON SHARDSCOPE_BIN RUN_DIR
set -euo pipefail
build=$1 python=$2 bin=$3 run=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --component python --prefix "$tmp/prefix" >/dev/null
site=$("$python" -c "import sysconfig; print(sysconfig.get_path('platlib', 'posix_prefix', vars={'base': '$tmp/prefix', 'platbase': '$tmp/prefix'}))")
"$bin" report --format json "$run" >"$tmp/cli.json" 2>/dev/null
cd "$tmp"
PYTHONPATH=$site "$python" -W ignore -c "
import json, sys, shardscope
assert shardscope.__file__.startswith('$site/'), shardscope.__file__
assert shardscope.report('$run') == json.load(open('cli.json')), 'the installed module reports otherwise than the CLI'
print('installed in', '$site', 'and reports as the CLI does')"
