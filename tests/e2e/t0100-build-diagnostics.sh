#!/bin/sh
# Every build diagnostic neuronop promises, pinned by a golden file: each folder under
# tests/golden/build/ is a case (its files laid over base/), and its `expected` holds the exit
# status and the exact stderr of `neuronop build` run in it.  `make golden` rewrites them.
. ./lib.sh
unset NEURONOP_CACHE_DIR   # the build itself is under test: every compile runs cold

golden="$NEURONOP_SRC/tests/golden/build"

# build_case NAME: builds case NAME in its own folder and writes $WORK/NAME/actual.  One cp
# lays the case over base/ (later sources win); the shell's own read and redirections do the
# rest: a process costs milliseconds here, and there are 105 cases.
build_case() {
    case=$golden/$1
    dir=$WORK/$1
    mkdir "$dir"
    cp -R "$golden/base/." "$case/." "$dir/"
    rm -f "$dir/expected"   # a new case has none until make golden writes it
    args=
    [ ! -f "$dir/args" ] || read -r args <"$dir/args"
    status=0
    (cd "$dir" && exec "$NEURONOP" build $args >/dev/null 2>stderr) || status=$?
    { printf 'exit %s\n' "$status"; cat "$dir/stderr"; } >"$dir/actual"
    if [ "${NEURONOP_GOLDEN_UPDATE:-}" = 1 ]; then
        cp "$dir/actual" "$case/expected"
    fi
}

# The cases are independent (half of them run g++ on a C++ source): built in lanes, reported
# in order.
for case in "$golden"/*/; do
    name=${case%/}
    name=${name##*/}
    [ "$name" = base ] || echo "$name"
done >"$WORK/.cases"
in_lanes build_case <"$WORK/.cases"
while read -r name; do
    test_expect "build diagnostic: $name" "diff -u '$golden/$name/expected' '$WORK/$name/actual'"
done <"$WORK/.cases"
# (cp -R of a golden case keeps a symlink but not a hard link: this one is made here)
test_expect "a hard link to a source is the same file in both lists, as a symlink is" '
    mkdir hard
    cp "$golden/base/relu.c" "$golden/base/shape.c" "$golden/same-file-both-roles-link/neuronop.yaml" hard/
    ln hard/relu.c hard/also.c
    (cd hard && "$NEURONOP" build) >out 2>err && exit 1
    grep -qF "neuronop.yaml:3:14: error: '\''also.c'\'' is in both compute_srcs and shape_srcs" err'

test_done
