#!/usr/bin/env bash
# The floors read only the floors below them (docs/layout.md): every project include of every source file
# under ROOT checked against what its top-level folder may read. Prints each include that runs back up, with
# file and line, and exits 1 if there is one.
#   tests/layout/check_includes.sh ROOT
set -euo pipefail
root=${1:?usage: check_includes.sh ROOT}
cd "$root"

# folder -> the include prefixes it may use (its own first).
declare -A may=(
  [tracer]="tracer/"
  [model]="model/ tracer/format/"
  [sizing]="sizing/ tracer/format/"
  [plugins]="plugins/ model/ tracer/format/"
  [analyzer]="analyzer/ plugins/ sizing/ model/ tracer/format/"
  [training]="training/ sizing/ tracer/"
  [python]="python/ analyzer/ plugins/ sizing/ model/ tracer/format/"
  [viewer]="viewer/ analyzer/ plugins/ sizing/ model/ tracer/format/"
  [samples]="tracer/"
)

bad=0
for folder in "${!may[@]}"; do
  [[ -d $folder ]] || continue
  while IFS=: read -r file line text; do
    inc=${text#*\"}
    inc=${inc%%\"*}
    # Only the project's own folders: a local header of the same directory ("x.h") has no slash.
    [[ $inc == */* ]] || continue
    top=${inc%%/*}
    [[ -n ${may[$top]+x} ]] || continue
    ok=0
    for prefix in ${may[$folder]}; do
      [[ $inc == "$prefix"* ]] && ok=1 && break
    done
    if ((!ok)); then
      echo "$file:$line: $folder/ reads $inc, a floor it may not read (allowed: ${may[$folder]})"
      bad=1
    fi
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$folder" --include='*.cc' --include='*.h' --include='*.cu' --include='*.cpp' || true)
done

# Within plugins/, an importer's folder reads the interface (api/), the shared helpers (common/) and itself,
# never a sibling importer: what two importers share lives in common/.
if [[ -d plugins ]]; then
  while IFS=: read -r file line text; do
    inc=${text#*\"}
    inc=${inc%%\"*}
    [[ $inc == plugins/*/* ]] || continue
    own=${file#plugins/}
    own=${own%%/*}
    case $own in api | common | load) continue ;; esac
    dir=${inc#plugins/}
    dir=${dir%%/*}
    case $dir in api | common | "$own") continue ;; esac
    echo "$file:$line: plugins/$own/ reads $inc, a sibling importer's (shared code belongs in plugins/common/)"
    bad=1
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"plugins/' plugins --include='*.cc' --include='*.h' || true)
fi
exit $bad
