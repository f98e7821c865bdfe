#!/bin/sh
# Every build diagnostic neuronop promises, pinned by a golden file: each folder under
# tests/golden/build/ is a case (its files laid over base/), and its `expected` holds the exit
# status and the exact stderr of `neuronop build` run in it.  `make golden` rewrites them.
. ./lib.sh
unset NEURONOP_CACHE_DIR   # the build itself is under test: every compile runs cold

golden="$NEURONOP_SRC/tests/golden/build"
for case in "$golden"/*/; do
    name=$(basename "$case")
    [ "$name" = base ] && continue
    dir="$WORK/$name"
    # one cp lays the case over base/ (later sources win); the shell's own read and
    # redirections do the rest: a process costs milliseconds here, and there are 105 cases
    mkdir "$dir"
    cp -R "$golden/base/." "$case/." "$dir/"
    rm "$dir/expected"
    args=
    [ ! -f "$dir/args" ] || read -r args <"$dir/args"
    status=0
    (cd "$dir" && exec "$NEURONOP" build $args >/dev/null 2>stderr) || status=$?
    { printf 'exit %s\n' "$status"; cat "$dir/stderr"; } >"$dir/actual"
    if [ "${NEURONOP_GOLDEN_UPDATE:-}" = 1 ]; then
        cp "$dir/actual" "$case/expected"
    fi
    test_expect "build diagnostic: $name" "diff -u '$case/expected' '$dir/actual'"
done
test_done
