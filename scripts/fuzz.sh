#!/usr/bin/env bash
# Builds the fuzz targets (build-sanitize/, see scripts/sanitize_build.sh)
# and runs each for SECONDS (default 30), one after the other, on its
# corpus: build-sanitize/fuzz/corpus/<name>/ (kept between runs) plus its
# seeds (tests/data/<kind>/ or build-sanitize/fuzz/seeds/<name>/).
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Prints one line per target (executions, executions per second, corpus
# size, result); each run's full log is build-sanitize/fuzz/logs/<name>.log
# and a crashing input is saved as build-sanitize/fuzz/artifacts/<name>-*.
# Exits 1 if any target found a problem. With FUZZ_RUNS=N a target stops
# after N executions (or SECONDS, whichever comes first). The targets run
# one at a time, each on one core.
set -euo pipefail
SECONDS_EACH=${1:-30}
shift || true
IREEPKG_SETUP_PACKAGES_ONLY=1 source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
source "$IREEPKG_ROOT/scripts/sanitize_build.sh" ireepkg_fuzz_targets
cd "$IREEPKG_ROOT"

logs=build-sanitize/fuzz/logs
mkdir -p "$logs" build-sanitize/fuzz/artifacts
status=0
printf '%-20s %12s %9s %8s  %s\n' target executions exec/s corpus result
while read -r name binary dict corpus seeds; do
  [ -n "$name" ] || continue
  if (($#)); then
    want=0
    for t in "$@"; do [ "$t" = "$name" ] && want=1; done
    ((want)) || continue
  fi
  args=(-max_total_time="$SECONDS_EACH" -timeout=25 -print_final_stats=1
        -artifact_prefix="$IREEPKG_ROOT/build-sanitize/fuzz/artifacts/$name-")
  [ "$dict" = "-" ] || args+=(-dict="$dict")
  [ -z "${FUZZ_RUNS:-}" ] || args+=(-runs="$FUZZ_RUNS")
  # shellcheck disable=SC2086 # seeds is a list of directories
  if "$binary" "${args[@]}" "$corpus" $seeds >"$logs/$name.log" 2>&1; then
    result=ok
  else
    result="FAILED (see $logs/$name.log)"
    status=1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$name.log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logs/$name.log" | tail -1)
  files=$(find "$corpus" -type f | wc -l)
  printf '%-20s %12s %9s %8s  %s\n' "$name" "${execs:-?}" "${rate:-?}" \
    "$files" "$result"
done < build-sanitize/fuzz/targets.txt
exit $status
