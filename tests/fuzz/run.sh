#!/bin/sh
# tests/fuzz/run.sh - runs each libFuzzer target for FUZZ_TIME seconds (`make fuzz`).
#
# Each target starts from a seed corpus made from the tree (the examples' manifests, .npy
# files and built libraries, the golden build cases, generator specs and command lines the tests use),
# the committed seeds in tests/fuzz/corpus/TARGET/ (objects compilers wrote, which no test
# keeps: tests/fuzz/corpus/objects.sh makes them) plus the
# regression inputs in tests/fuzz/regressions/TARGET/: every input that once found a bug,
# kept so the bug stays fixed.  A crash, a leak, undefined behaviour, a timeout, running
# out of memory or one allocation over 512 MB (an allocation bomb: every reader checks sizes
# against its input before allocating) fails the run; the input is left in out/fuzz/artifacts/.
# Usage: tests/fuzz/run.sh OBJDIR SECONDS [TARGET...]   (all targets without one)
set -eu
objdir=$1
seconds=$2
shift 2
all="manifest npy generator options library object records linked deps"
targets=${*:-$all}
src=$(cd "$(dirname "$0")/../.." && pwd)
corpus=$objdir/corpus
artifacts=$objdir/artifacts
rm -rf "$corpus"
mkdir -p "$artifacts"
# the targets' scratch files, in a folder of this run's own: another run's are its own
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/neuronop-fuzz-run.XXXXXX")
export TMPDIR
for t in $all; do mkdir -p "$corpus/$t"; done
n=0
# libraries: what make check built, or one built here
for f in "$src"/share/neuronop/examples/*/build/lib*.so; do
    [ -f "$f" ] || continue
    n=$((n + 1)); cp "$f" "$corpus/library/seed$n"
done

# linked: three of those libraries (the check reads a whole one per input: few seeds
# suffice), and one cc links here as neuronop's system link does
for f in $(ls "$corpus"/library | head -n 3); do
    cp "$corpus/library/$f" "$corpus/linked/$f"
done
printf 'int neuronop_library;\nfloat twice(float x) { return 2 * x; }\n' >"$corpus/linked.c"
cc -shared -fPIC -O1 -Wl,-Bsymbolic -o "$corpus/linked/cc.so" "$corpus/linked.c" -lm || true
rm -f "$corpus/linked.c"

for f in "$src"/share/neuronop/examples/*/neuronop.yaml "$src"/tests/fixtures/*/*.yaml \
    "$src"/tests/golden/build/*/neuronop.yaml; do
    n=$((n + 1)); cp "$f" "$corpus/manifest/seed$n"
done
for f in "$src"/share/neuronop/examples/*/tests/*.npy; do
    n=$((n + 1)); cp "$f" "$corpus/npy/seed$n"
done
for s in randn:32x4096 rand:4x4:f32 zeros:8 ones:2x3:i64 full:4x4:2.5:bf16 arange:10:i64 \
    full:3:-1:u8 randn:1 zeros:2x2x2:f16 bogus:64 randn:; do
    n=$((n + 1)); printf '%s' "$s" >"$corpus/generator/seed$n"
done
# deps: lists as g++ 12 (-MD) and gas 2.40 (--MD) write them, each after its mode byte
# (1: gas's, 2: its compile succeeded, 4: k.cpp is the unit's .file name)
printf '\002k.o: k.cpp /usr/include/stdc-predef.h sp\\ ace h\\#ash d$$ollar \\\n back\\slash bs\\\\\\ sp end\\\n' \
    >"$corpus/deps/seed-gxx"
printf '\007k.o: nl\nine end\\\\ t\\\tab bs\\\\\\ sp back\\slash d$$ollar h#ash sp\\ ace \\\n k.cpp /tmp/cc1.s\n' \
    >"$corpus/deps/seed-gas"
for a in "--cores 3" "-o out.npy x y" "--timeout=0.5 --check race,unwritten" "--seed -3 -- -x" \
    "-v --no-such" "--cores 0" "--timeout nan"; do
    n=$((n + 1)); printf '%s' "$a" | tr ' ' '\0' >"$corpus/options/seed$n"
done
# records: a record's head is its type (4 bytes) and length (8), little-endian; the fuzzer
# finds the lengths each type must have from the comparisons it sees
for type in 01 02 03 04 05 06 07 08 09; do
    n=$((n + 1)); printf "\\$(printf %o 0x$type)\\0\\0\\0\\4\\0\\0\\0\\0\\0\\0\\0abcd" >"$corpus/records/seed$n"
done
for t in $all; do
    [ -d "$src/tests/fuzz/corpus/$t" ] && cp "$src/tests/fuzz/corpus/$t"/* "$corpus/$t/" 2>/dev/null || true
    [ -d "$src/tests/fuzz/regressions/$t" ] && cp "$src/tests/fuzz/regressions/$t"/* "$corpus/$t/" 2>/dev/null || true
done

status=0
for t in $targets; do
    echo "== fuzz_$t for ${seconds}s ($(ls "$corpus/$t" | wc -l) seeds)"
    if ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
        "$objdir/fuzz_$t" "$corpus/$t" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=0 -artifact_prefix="$artifacts/$t-" \
        >"$objdir/fuzz_$t.log" 2>&1; then
        grep -E "^Done [0-9]+ runs" "$objdir/fuzz_$t.log" | tail -n 1
    else
        status=1
        echo "fuzz_$t FAILED; the input is in $artifacts:"
        grep -E "ERROR|SUMMARY|Test unit written" "$objdir/fuzz_$t.log" | head -5
    fi
done
rm -rf "$TMPDIR"
exit "$status"
