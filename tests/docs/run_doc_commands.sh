#!/usr/bin/env bash
# The docs cannot drift from the CLI: every `shardscope` command in a fenced block of README.md and docs/*.md
# is run, on the committed runs that stand in for the paths the docs use (the demo's run is the golden
# 2-rank trainer run), and must exit 0, or 1 where a verdict says "not effective"; 2 (an error, a flag that
# no longer parses) fails, unless the docs show that command's error (their next line is "shardscope: error:
# ..."), which it must then give. `launch` lines are left out here: run_doc_launches.sh runs them, and the viewer's
# lines.
#   tests/docs/run_doc_commands.sh SOURCE_DIR SHARDSCOPE_BIN
set -uo pipefail
src=${1:?usage: run_doc_commands.sh SOURCE_DIR SHARDSCOPE_BIN}
bin=${2:?usage: run_doc_commands.sh SOURCE_DIR SHARDSCOPE_BIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src"

golden=tests/golden/trainer_cpu_2ranks
kineto=tests/golden/kineto_two_ranks/sampled_rank-0.json.gz
ran=0 failed=0
while IFS=$'\t' read -r line shown; do
  cmd=${line#\$ }
  cmd=${cmd%%; echo*}
  [[ $cmd == *" launch "* ]] && continue
  cmd=${cmd//out\/demo\/traces/$golden/pre}
  cmd=${cmd//out\/report\/pre/$golden/pre}
  cmd=${cmd//out\/report\/none/$golden/none}
  cmd=${cmd//out\/demo\//$tmp/}
  cmd=${cmd//out\/summaries\//$tmp/summaries/}
  cmd=${cmd//kineto.json/$kineto}
  cmd=${cmd//build\/analyzer\/shardscope/$bin}
  # Whatever a command writes goes to the scratch folder, never into the source tree.
  if [[ $cmd =~ (.*)\ -o\ ([^ ]+)(.*) ]] && [[ ${BASH_REMATCH[2]} != "$tmp"/* ]]; then
    cmd="${BASH_REMATCH[1]} -o $tmp/$(basename "${BASH_REMATCH[2]}")${BASH_REMATCH[3]}"
  fi
  out=$(eval "$cmd" 2>&1 >/dev/null)
  rc=$?
  ran=$((ran + 1))
  if [[ $shown == "shardscope: error:"* ]]; then
    if ((rc != 2)) || [[ $out != "shardscope: error:"* ]]; then
      failed=$((failed + 1))
      echo "FAILED (exit $rc, the docs show an error): $line"
      echo "$out" | head -5 | sed 's/^/  /'
    fi
  elif ((rc > 1)); then
    failed=$((failed + 1))
    echo "FAILED (exit $rc): $line"
    echo "  ran: $cmd"
    echo "$out" | head -5 | sed 's/^/  /'
  fi
done < <(awk '/^```/ { if (cmd != "") print cmd "\t"; cmd = ""; fenced = !fenced; next }
              fenced && cmd != "" { print cmd "\t" $0; cmd = "" }
              fenced && /^(\$ )?build\/analyzer\/shardscope / { cmd = $0 }' README.md docs/*.md | sort -u)
echo "$ran documented commands run, $failed failed"
((ran > 0 && failed == 0))
