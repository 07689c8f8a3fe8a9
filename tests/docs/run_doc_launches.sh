#!/usr/bin/env bash
# The docs' trainer and viewer commands, run (run_doc_commands.sh runs the report-side ones): every fenced
# `shardscope launch ... shardscope-train ...` (its continuation lines joined) trains for 2 steps instead of the
# docs' 4 or 8 and must exit 0 with one trace per rank; every fenced `shardscope-viewer` line renders the golden
# 2-rank run offscreen into a picture (`--screenshot`, its documented headless form) and must exit 0 with it
# written. An argument left empty skips that kind, as where the trainer or the viewer is not built.
#   tests/docs/run_doc_launches.sh SOURCE_DIR SHARDSCOPE_BIN TRAINER_BIN|"" VIEWER_BIN|""
set -uo pipefail
src=${1:?usage: run_doc_launches.sh SOURCE_DIR SHARDSCOPE_BIN TRAINER_BIN VIEWER_BIN}
bin=${2:?}
trainer=${3-}
viewer=${4-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src"
golden=tests/golden/trainer_cpu_2ranks/pre
ran=0 failed=0 n=0

# Fenced lines only, each command with its continuation lines joined.
commands() {
  awk '/^```/ { fenced = !fenced; next }
       fenced { line = $0; sub(/^\$ /, "", line)
                if (cont != "") { cont = cont " " line } else { cont = line }
                if (cont ~ /\\$/) { sub(/\\$/, "", cont); next }
                print cont; cont = "" }' README.md docs/*.md | sed 's/  */ /g' | sort -u
}

while IFS= read -r line; do
  n=$((n + 1))
  out=$tmp/run$n
  mkdir -p "$out"
  if [[ $line == "build/analyzer/shardscope launch "*shardscope-train* ]]; then
    [[ -n $trainer ]] || continue
    cmd=${line//build\/analyzer\/shardscope/$bin}
    cmd=${cmd//build\/training\/shardscope-train/$trainer}
    cmd=$(sed -E "s/--steps [0-9]+/--steps 2/; s#(--trace-dir) [^ ]+#\\1 $out/traces#; s#(--log-json) [^ ]+#\\1 $out/log.json#" <<<"$cmd")
    log=$(eval "$cmd" 2>&1)
    rc=$?
    ran=$((ran + 1))
    traces=$(ls "$out"/traces/trace.rank*.json.gz 2>/dev/null | wc -l)
    if ((rc != 0)) || ((traces != 2)); then
      failed=$((failed + 1))
      echo "FAILED (exit $rc, $traces traces): $line"
      echo "  ran: $cmd"
      echo "$log" | tail -5 | sed 's/^/  /'
    fi
  elif [[ $line == *"build/viewer/shardscope-viewer "* ]]; then
    [[ -n $viewer ]] || continue
    args=${line#*build/viewer/shardscope-viewer }
    args=${args%%#*}
    args=$(sed -E 's/\[[^]]*\]//g; s#PATH\.\.\.#'"$golden"'#; s#out/demo/traces#'"$golden"'#; s#(--screenshot) [^ ]+#\1 '"$out"'/doc.png#' <<<"$args")
    [[ $args == *--screenshot* ]] || args="--screenshot $out/doc.png $args"
    log=$(eval "QT_QPA_PLATFORM=offscreen \"$viewer\" $args" 2>&1)
    rc=$?
    ran=$((ran + 1))
    if ((rc != 0)) || [[ ! -s $out/doc.png ]]; then
      failed=$((failed + 1))
      echo "FAILED (exit $rc): $line"
      echo "  ran: $viewer $args"
      echo "$log" | tail -5 | sed 's/^/  /'
    fi
  fi
done < <(commands)
echo "$ran documented trainer and viewer commands run, $failed failed"
((failed == 0)) && { ((ran > 0)) || [[ -z $trainer && -z $viewer ]]; }
