#!/bin/sh
# Bash completion: the script registers itself with `complete`, and driven as bash drives it
# (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT) offers commands, options, the values of
# enumerated options, the ops of a library on the line, and file names elsewhere.
. ./lib.sh
SCRIPT="$NEURONOP_SRC/share/bash-completion/completions/neuronop"
BIN_DIR=$(dirname "$NEURONOP")
copy_example relu_multicore "$WORK/rmc"

# completes LINE: prints COMPREPLY, one word a line, as the registered function leaves it
# (within 10 s: a Tab that hangs is a failure, not a stuck suite)
completes() {
    BIN_DIR="$BIN_DIR" timeout 10 bash -c '
        . "$1"
        PATH="$BIN_DIR:$PATH"
        fn=$(complete -p neuronop | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
        test -n "$fn" || { echo "neuronop has no completion function"; exit 1; }
        COMP_LINE=$2
        COMP_POINT=${#COMP_LINE}
        read -ra COMP_WORDS <<<"$COMP_LINE"
        case $COMP_LINE in *" ") COMP_WORDS+=("") ;; esac
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        "$fn" neuronop "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf "%s\n" "${COMPREPLY[@]}"' _ "$SCRIPT" "$1" >"$WORK/reply"
}
# has WORD...: each word is offered; lacks WORD: it is not
has() { for w in "$@"; do grep -qxF -- "$w" "$WORK/reply" || {
    echo "not offered: $w"; cat "$WORK/reply"; return 1; }; done; }
lacks() { ! grep -qxF -- "$1" "$WORK/reply" || { echo "offered: $1"; return 1; }; }

test_expect "the script registers a completion function for neuronop" '
    bash -c ". \"$SCRIPT\"; complete -p neuronop" >reg
    grep -q -- "-F _neuronop neuronop" reg'

test_expect "commands, every one from the command table" '
    completes "neuronop "
    has bench build inspect new run test
    lacks __complete
    completes "neuronop te"
    has test
    completes "neuronop "
    has help
    completes "neuronop help b"
    has build bench
    lacks run'

test_expect "each command's own options, as --help lists them" '
    completes "neuronop run --"
    has --output --expect --schedule --cores --check --no-check --memcheck --help
    lacks --junit
    completes "neuronop test --sh"
    has --shard
    completes "neuronop new --"
    has --multicore --cxx --dir
    completes "neuronop build -"   # the short names too (an auditor'\''s find)
    has -f -v -h --force --verbose
    completes "neuronop build --"
    lacks -f'

test_expect "the values of --schedule, --check, --device and --trace-clock" '
    mkdir -p dir_for_test
    completes "neuronop run --schedule "
    has parallel sequential reversed shuffle
    completes "neuronop run --check ra"
    has race
    completes "neuronop test --no-check=un"
    has unwritten
    completes "neuronop bench --device "
    has trn1
    lacks dir_for_test
    mkdir -p profiles
    : >profiles/mine.yaml
    completes "neuronop run --device profiles/mi"
    has profiles/mine.yaml
    completes "neuronop bench --trace-clock "
    has modeled host
    # (a docs audit'\''s finds: --device= completed nothing, a list after a comma nothing,
    # and all was not offered)
    completes "neuronop run --device=t"
    has trn1
    completes "neuronop run --check=race,un"
    has race,unwritten
    completes "neuronop test --no-check "
    has all
    completes "neuronop test --no-check race,"
    has race,all race,leak'

test_expect "the ops of a library on the line: a folder's manifest, a built .so" '
    completes "neuronop run rmc "
    has relu_forward
    run build rmc
    completes "neuronop bench --schedule sequential rmc/build/librelu_multicore.so rel"
    has relu_forward
    # a C++ library'\''s ops are in its registration: once built, its folder offers them
    copy_example relu_cxx rcx
    run build rcx
    completes "neuronop run rcx "
    has relu_forward relu_backward'

# The dynamic loader says which libraries it loads (LD_DEBUG=files, into a file per process):
# completion reads a library's ops from the file, and its log never names the library; a run
# in neuronop itself (the sandbox off), which loads it, is the witness that the log would.
test_expect "completing the ops of a built library never loads it (its code does not run)" '
    "$NEURONOP" new seen >/dev/null
    run build seen
    expect_status 0
    LD_DEBUG=files LD_DEBUG_OUTPUT="$PWD/complete.ld" completes "neuronop run seen/build/libseen.so "
    has seen_forward
    ls complete.ld.* >/dev/null
    if grep -l "libseen.so" complete.ld.*; then exit 1; fi
    LD_DEBUG=files LD_DEBUG_OUTPUT="$PWD/run.ld" NEURONOP_SANDBOX=off \
        "$NEURONOP" run seen/build/libseen.so seen_forward randn:4 >/dev/null
    grep -l "libseen.so" run.ld.* >/dev/null'

test_expect "file names where a file goes" '
    mkdir -p dir_for_test
    : >input_for_test.npy
    completes "neuronop run rmc relu_forward input_for"
    has input_for_test.npy
    completes "neuronop build dir_for"
    has dir_for_test
    completes "neuronop run --output=input_f"
    has input_for_test.npy
    completes "neuronop run --device=profiles/mi"   # bash replaces what follows the =
    has profiles/mine.yaml
    completes "neuronop bench rmc relu_forward x.npy --trace "
    has dir_for_test'

test_expect "neuronop python: its options before SCRIPT, the script'\''s words after it" '
    : >train_for_test.py
    completes "neuronop python --st"
    has --stats
    completes "neuronop python train_for"
    has train_for_test.py
    completes "neuronop python train_for_test.py --"
    lacks --stats
    completes "neuronop python train_for_test.py train_f"
    has train_for_test.py'

test_expect "no file names where only the user knows the value (--shard I/N, -k PATTERN)" '
    : >input_for_test.npy
    completes "neuronop test rmc --shard "
    lacks input_for_test.npy
    completes "neuronop test rmc -k "
    lacks input_for_test.npy
    completes "neuronop new "
    lacks input_for_test.npy'

test_expect "bash-completion loads the installed script on first Tab, and it works there" '
    test -f /usr/share/bash-completion/bash_completion || {
        echo "the bash-completion package is missing (mk/deps.sh test installs it)"; exit 1; }
    make -s -C "$NEURONOP_SRC" -o "$NEURONOP" install DESTDIR="$WORK/inst" PREFIX=/usr/local \
        BIN="$NEURONOP" >/dev/null
    env -u NEURONOP_SHARE_DIR HOME="$WORK" XDG_DATA_DIRS="$WORK/inst/usr/local/share" \
        PATH="$WORK/inst/usr/local/bin:$PATH" bash -c "
        . /usr/share/bash-completion/bash_completion
        complete -p neuronop 2>/dev/null && { echo loaded too early; exit 1; }
        _completion_loader neuronop
        complete -p neuronop
        COMP_LINE=\"neuronop bench --device \" COMP_POINT=\${#COMP_LINE}
        COMP_WORDS=(neuronop bench --device \"\") COMP_CWORD=3
        _neuronop neuronop \"\" --device
        printf \"%s\\n\" \"\${COMPREPLY[@]}\"" >loaded 2>&1 || { cat loaded; exit 1; }
    grep -q -- "-F _neuronop neuronop" loaded
    grep -qx trn1 loaded'

test_done
