#!/bin/sh
# neuronop-ci.sh - test an op library in CI: build it, run its test cases split into shards
# (in parallel here, or one shard per CI job), keep a JUnit file per shard for the CI's
# dashboard, and optionally gate on the modeled throughput of one op against a baseline.
#
# Usage:
#   neuronop-ci.sh [options] LIBRARY_DIR
#     -j N             run all N shards at once, here (default 1)
#     --shard I/N      run only shard I of N (one CI job of a matrix)
#     -o DIR           where the JUnit files and logs go (default ci-results)
#     --bench "OP ARG..." --baseline FILE
#                      after the tests, fail if the modeled throughput of OP on ARG...
#                      dropped against FILE (an earlier `neuronop bench --json` report)
# Environment: NEURONOP, the neuronop to use (default: neuronop on PATH).
# Exit status: 0 when every shard passed (and the gate held); 1 when a test or the gate
# failed; 2 for a usage error.
set -u

neuronop=${NEURONOP:-neuronop}
jobs=1 shard= out=ci-results bench= baseline=

USAGE="usage: neuronop-ci.sh [-j N | --shard I/N] [-o DIR] [--bench 'OP ARG...' --baseline FILE] LIBRARY_DIR"
usage() {   # a usage error: exit 2
    echo "$USAGE" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case $1 in
    -j) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    --shard) [ $# -ge 2 ] || usage; shard=$2; shift 2 ;;
    -o) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --bench) [ $# -ge 2 ] || usage; bench=$2; shift 2 ;;
    --baseline) [ $# -ge 2 ] || usage; baseline=$2; shift 2 ;;
    -h | --help)   # the header comment's usage, options, environment and exit status
        sed -n '/^# Usage:/,/^[^#]/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
        exit 0 ;;
    -*) echo "neuronop-ci.sh: unknown option '$1'" >&2; usage ;;
    *) break ;;
    esac
done
[ $# -eq 1 ] || usage
lib=$1
case $jobs in '' | *[!0-9]* | 0) echo "neuronop-ci.sh: -j takes a count of 1 or more" >&2; exit 2 ;; esac
if { [ -n "$bench" ] && [ -z "$baseline" ]; } || { [ -z "$bench" ] && [ -n "$baseline" ]; }; then
    echo "neuronop-ci.sh: --bench and --baseline go together" >&2
    exit 2
fi
# The folder and its files come from this run, never through a link a pull request
# committed: a shell's > follows one, to any file the CI's user may write (a red team's
# find: a committed ci-results/shard-1.log -> ~/.bashrc).  So the folder may not be a
# link, nor, given relative to the checkout, any folder on its way (a reviewer's find:
# -o a/b with a committed link a), and each file is removed before it is written (rm
# removes a link, not its target).  In CI, give -o a folder outside the checkout, which the
# pull request cannot have put files in (the workflow beside this script does).
p=$out
while [ -n "$p" ]; do
    if [ -L "$p" ]; then
        echo "neuronop-ci.sh: '$p' is a symbolic link: give -o a real folder" >&2
        exit 2
    fi
    case $p in
    /*) break ;;   # an absolute path is the caller's: only its last folder is checked
    */*) p=${p%/*} ;;
    *) break ;;
    esac
done
mkdir -p "$out" || exit 2

# Build once, so the shards do not race to build the same library.
"$neuronop" build "$lib" || exit $?

# run_shard I N: one shard's tests, its output in DIR/shard-I.log, JUnit in DIR/junit-I.xml
# (written anew: a file an earlier run left there is not this run's)
run_shard() {
    rm -f "$out/junit-$1.xml" "$out/shard-$1.log" || return 1
    "$neuronop" test "$lib" --shard "$1/$2" --junit "$out/junit-$1.xml" >"$out/shard-$1.log" 2>&1
}

status=0
if [ -n "$shard" ]; then
    i=${shard%/*} n=${shard#*/}
    run_shard "$i" "$n" || status=1
    cat "$out/shard-$i.log"
else
    i=1
    pids=
    while [ "$i" -le "$jobs" ]; do
        run_shard "$i" "$jobs" &
        pids="$pids $!"
        i=$((i + 1))
    done
    i=1
    for pid in $pids; do
        if wait "$pid"; then
            echo "shard $i/$jobs: $(tail -n 1 "$out/shard-$i.log")"
        else
            status=1
            echo "shard $i/$jobs FAILED: $(tail -n 1 "$out/shard-$i.log")"
            grep -E '^(FAIL|ERROR) ' "$out/shard-$i.log" | sed 's/^/  /'
        fi
        i=$((i + 1))
    done
fi

if [ -n "$bench" ] && [ "$status" -eq 0 ]; then
    # shellcheck disable=SC2086  # OP and its arguments are words on purpose
    rm -f "$out/bench.log"
    "$neuronop" bench "$lib" $bench --baseline "$baseline" >"$out/bench.log" 2>&1 || status=1
    cat "$out/bench.log"
fi
# the files this run wrote, for the CI step that publishes them: not those an earlier run
# with more shards left in the same folder
if [ -n "$shard" ]; then first=$i last=$i; else first=1 last=$jobs; fi
written=
i=$first
while [ "$i" -le "$last" ]; do
    [ ! -e "$out/junit-$i.xml" ] || written="$written $out/junit-$i.xml"
    i=$((i + 1))
done
if [ -n "$written" ]; then echo "JUnit files:$written"; else echo "JUnit files: none written"; fi
exit "$status"
