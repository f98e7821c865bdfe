#!/bin/sh
# Every build diagnostic neuronop promises, pinned by a golden file: each folder under
# tests/golden/build/ is a case (its files laid over base/), and its `expected` holds the exit
# status and the exact stderr of `neuronop build` run in it.  `make golden` rewrites them.
. ./lib.sh

golden="$NEURONOP_SRC/tests/golden/build"
for case in "$golden"/*/; do
    name=$(basename "$case")
    [ "$name" = base ] && continue
    dir="$WORK/$name"
    mkdir -p "$dir"
    cp -R "$golden/base/." "$dir/"
    cp -R "$case/." "$dir/"
    rm -f "$dir/expected"
    (cd "$dir" && status=0 && "$NEURONOP" build $(cat args 2>/dev/null) \
        >/dev/null 2>stderr || status=$?; printf 'exit %s\n' "$status" >actual; \
        cat stderr >>actual)
    if [ "${NEURONOP_GOLDEN_UPDATE:-}" = 1 ]; then
        cp "$dir/actual" "$case/expected"
    fi
    test_expect "build diagnostic: $name" "diff -u '$case/expected' '$dir/actual'"
done
test_done
