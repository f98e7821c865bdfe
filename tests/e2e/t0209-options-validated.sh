#!/bin/sh
# Every numeric option is checked once, by the option parser, against its range; options
# that depend on the library or the device are checked against them.  Each bad value is a
# usage error (exit 2) that says what the option takes.
. ./lib.sh
copy_example relu_multicore "$WORK/mc"
copy_example relu "$WORK/one"
"$NEURONOP" build "$WORK/mc" >/dev/null
"$NEURONOP" build "$WORK/one" >/dev/null

# refused ARGS... -- MESSAGE
refused() {
    msg=$(eval "printf '%s' \"\${$#}\"")
    n=$(($# - 2))
    args=
    i=0
    for a in "$@"; do
        i=$((i + 1))
        [ "$i" -le "$n" ] || break
        args="$args '$a'"
    done
    eval "run $args"
    expect_status 2
    expect_err "$msg"
}

test_expect "--timeout must be finite and positive" '
    refused run mc relu_forward randn:8 --timeout nan -- "--timeout takes a number from 0.001 to 86400, not '\''nan'\''"
    refused run mc relu_forward randn:8 --timeout inf -- "not '\''inf'\''"
    refused run mc relu_forward randn:8 --timeout 0 -- "not '\''0'\''"
    refused test mc --timeout -1 -- "--timeout takes a number from 0.001 to 86400"'

test_expect "--cores must be within the device, and only for multicore libraries" '
    refused run mc relu_forward randn:8 --cores 0 -- "--cores takes a whole number from 1 to 64, not '\''0'\''"
    refused run mc relu_forward randn:8 --cores 9 -- "neuronop run: error: --cores 9: device '\''trn1'\'' has 8 cores; give 1 to 8"
    refused run one relu_forward randn:2x4 --cores 2 -- "neuronop run: error: --cores 2: library '\''relu'\'' is single-core"
    run run mc relu_forward randn:8 --cores 3
    expect_status 0'

test_expect "-j and the bench counts must be positive" '
    refused run mc relu_forward randn:8 -j 0 -- "--threads takes a whole number from 1 to 1024, not '\''0'\''"
    refused bench mc relu_forward randn:8 --iters 0 -- "--iters takes a whole number from 1 to"
    refused bench mc relu_forward randn:8 --time nan -- "--time takes a number from 0.001 to 86400"
    refused test mc --schedules 99 -- "--schedules takes a whole number from 0 to 37"'

test_expect "--shard must be I/N in range, without overflow" '
    refused test mc --shard 1/99999999999999999999 -- "--shard takes I/N with 1 <= I <= N <= 1000000"
    refused test mc --shard 3/2 -- "--shard takes I/N"
    refused test mc --shard 0/2 -- "--shard takes I/N"'

test_expect "empty check lists are refused" '
    refused run mc relu_forward randn:8 --no-check "" -- "--check and --no-check take a comma-separated list of checks, not '\'''\''"
    refused run mc relu_forward randn:8 --check , -- "not '\'','\''"'

# Before, " 5" and 0x10 were taken (strtol and strtod skip spaces; strtod reads hex).
test_expect "numbers are written in decimal, without spaces" '
    refused run mc relu_forward randn:8 --seed " 5" -- "--seed takes a whole number"
    refused run mc relu_forward randn:8 --timeout 0x10 -- "--timeout takes a number from 0.001 to 86400, not '\''0x10'\''"
    run run mc relu_forward randn:8 --seed -5 --timeout .5
    expect_status 0'

# Before, an empty --build-dir was blamed on the manifest.
test_expect "an empty --build-dir is a usage error of the option" '
    refused build one --build-dir "" -- "neuronop build: error: --build-dir needs a folder, not '\'''\''"'

# Before, each was ignored: a tolerance or a regression limit that judges nothing.
test_expect "a tolerance without --expect, a limit without --baseline, are refused" '
    refused run mc relu_forward randn:8 --rtol 0.1 -- "neuronop run: error: --rtol needs --expect FILE"
    refused run mc relu_forward randn:8 --atol 0.1 -- "neuronop run: error: --atol needs --expect FILE"
    refused bench mc relu_forward randn:8 --max-regression 3 -- "neuronop bench: error: --max-regression 3 needs --baseline FILE"'

# Before, the library was built first and the bad word refused after; the usage error's
# form is neuronop(1)'s, with where to read about the option.
test_expect "a word an option does not take is refused in its command'\''s words, before a build" '
    copy_example relu_tcm fresh
    refused run fresh relu_forward randn:8 --schedule random -- "neuronop run: error: --schedule takes parallel, sequential, reversed or shuffle, not '\''random'\''"
    expect_err "see '\''neuronop run --help'\''"
    refused bench fresh relu_forward randn:8 --check rcae -- "neuronop bench: error: unknown check '\''rcae'\''; did you mean '\''race'\''?"
    refused build fresh --compiler gcc -- "neuronop build: error: --compiler takes tcc or cc, not '\''gcc'\''; did you mean '\''cc'\''?"
    refused test fresh --shard 5/4 -- "neuronop test: error: --shard takes I/N"
    test ! -e fresh/build'

test_done
