#!/bin/sh
# Confined build-time reads: a source or #include that resolves outside the library folder
# and the toolchain's folders is refused, with Landlock (where the kernel has it) and without
# (NEURONOP_LANDLOCK=off: the path checks alone), in libtcc and in g++; and no message quotes
# a line of the file outside.  The secret's one line must never reach the output.
. ./lib.sh
unset NEURONOP_CACHE_DIR   # the build itself is under test: every compile runs cold

mkdir -p "$WORK/outside"
echo 'int SECRET_LINE_7f3a = 1;' >"$WORK/outside/secret.h"
secret=$WORK/outside/secret.h

# not_quoted: nothing of the secret file in what neuronop printed
not_quoted() {
    if grep -q SECRET_LINE_7f3a "$WORK/out" "$WORK/err"; then
        echo "the secret was quoted:"; cat "$WORK/err"; return 1
    fi
}

# add_incbin FILE: a top-level asm in FILE that embeds the secret (the assembler's .incbin,
# which the compiler's -MD list does not name)
add_incbin() {
    printf 'asm(".section .rodata\\n.incbin \\"%s\\"\\n.text");\n' "$secret" >>"$1"
}

# escaped_link_lib DIR: a copy of negate_cxx whose source embeds, with .incbin, a link to
# the secret named x\\y (two backslashes), which gas lists as it is, and a decoy x\y beside
# it, which a reader that takes "\\" for one backslash checks instead (a review's find)
escaped_link_lib() {
    copy_example negate_cxx "$1"
    ln -s "$secret" "$1/x\\\\y"
    echo decoy >"$1/x\\y"
    cat >>"$1/negate.cpp" <<'EOF'
asm(".section .rodata\n.incbin \"x\\\\\\\\y\"\n.text");
EOF
}

for mode in landlock off; do
    case $mode in off) env=NEURONOP_LANDLOCK=off ;; *) env= ;; esac

    test_expect "libtcc ($mode): #include of an absolute path outside is refused" "
        copy_example negate c-abs-$mode
        sed -i '1i #include \"$secret\"' c-abs-$mode/negate.c
        $env run build c-abs-$mode
        expect_status 3
        expect_err \"negate.c:1: error: '$secret' is outside the library folder\"
        expect_err \"copy what it needs into the library folder\"
        not_quoted"

    test_expect "libtcc ($mode): #include \"../\" climbing out is refused" "
        copy_example negate c-up-$mode
        sed -i '1i #include \"../outside/secret.h\"' c-up-$mode/negate.c
        $env run build c-up-$mode
        expect_status 3
        expect_err \"negate.c:1: error: \"
        expect_err \"$secret\"
        expect_err \"is outside the library folder\"
        not_quoted"

    test_expect "libtcc ($mode): a header symlinked outside is refused" "
        copy_example negate c-link-$mode
        ln -s '$secret' c-link-$mode/inside.h
        sed -i '1i #include \"inside.h\"' c-link-$mode/negate.c
        $env run build c-link-$mode
        expect_status 3
        expect_err \"negate.c:1: error: \"
        expect_err \"$secret\"
        expect_err \"is outside the library folder\"
        not_quoted"

    test_expect "g++ ($mode): #include of a file outside is refused" "
        copy_example negate_cxx x-abs-$mode
        sed -i '1i #include \"$secret\"' x-abs-$mode/negate.cpp
        $env run build x-abs-$mode
        expect_status 3
        expect_err \"'$secret' is outside the library folder\"
        not_quoted"

    # without Landlock, an adversarial review's .incbin embedded the file in the library, for a
    # kernel to print: refused now as an #include is, from the assembler's own list
    test_expect "g++ ($mode): an asm .incbin of a file outside is refused" "
        copy_example negate_cxx x-bin-$mode
        add_incbin x-bin-$mode/negate.cpp
        $env run build x-bin-$mode
        expect_status 3
        if [ $mode = off ]; then expect_err \"'$secret' is outside the library folder\"; fi
        test ! -e x-bin-$mode/build/libnegate_cxx.so
        not_quoted"

    test_expect "g++ ($mode): an .incbin of a link whose listed name reads as another's is refused" "
        escaped_link_lib x-esc-$mode
        $env run build x-esc-$mode
        expect_status 3
        if [ $mode = off ]; then
            expect_err \"x-esc-$mode/negate.cpp: error: 'x-esc-$mode/x\\\\\\\\y', as the compiler lists a file it read, names no file the build can check\"
        fi
        test ! -e x-esc-$mode/build/libnegate_cxx.so
        not_quoted"

    # gas lists the source by the bare name of its .file directive, as if read from where
    # neuronop runs: a same-named file there is no read without an .incbin, but the check
    # cannot tell; without Landlock it refuses, and says what to do
    test_expect "g++ ($mode): a file named as a source where neuronop runs" "
        copy_example negate_cxx x-name-$mode
        cp '$secret' negate.cpp
        $env run build x-name-$mode
        rm negate.cpp
        if [ $mode = off ]; then
            expect_status 3
            expect_err \"x-name-$mode/negate.cpp: error: 'negate.cpp' (it resolves to\"
            expect_err 'run neuronop from another folder (or where the kernel has Landlock)'
        else
            expect_status 0
        fi
        not_quoted"

    # clang assembles by itself, and its assembler names no file it read: without Landlock
    # it hands the assembly to gas, which does
    if command -v clang++ >/dev/null 2>&1; then
        test_expect "clang++ ($mode): an asm .incbin of a file outside is refused" "
            copy_example negate_cxx xc-bin-$mode
            add_incbin xc-bin-$mode/negate.cpp
            $env CXX=clang++ run build xc-bin-$mode
            expect_status 3
            if [ $mode = off ]; then expect_err \"'$secret' is outside the library folder\"; fi
            test ! -e xc-bin-$mode/build/libnegate_cxx.so
            not_quoted"
        test_expect "clang++ ($mode): a library with no .incbin still builds and runs" "
            copy_example negate_cxx xc-ok-$mode
            $env CXX=clang++ run build xc-ok-$mode
            expect_status 0
            $env CXX=clang++ run run xc-ok-$mode negate full:4:2
            expect_status 0
            expect_out \"values: -2 -2 -2 -2\""
    fi
done

test_expect "a source symlinked outside is refused at its manifest entry (exit 2)" '
    copy_example negate src-link
    cp "$secret" "$WORK/outside/k.c"
    ln -s "$WORK/outside/k.c" src-link/k.c
    sed -i "s/compute_srcs: \[negate.c\]/compute_srcs: [negate.c, k.c]/" src-link/neuronop.yaml
    run build src-link
    expect_status 2
    expect_err "neuronop.yaml:3:26: error: source file '"'"'k.c'"'"' is outside the library folder (it resolves to '"'"'$WORK/outside/k.c'"'"')"
    expect_err "copy what it needs there"
    not_quoted'

test_expect "a source named with ../ is refused at its manifest entry" '
    copy_example negate src-up
    cp "$secret" "$WORK/outside/k.c"
    sed -i "s|compute_srcs: \[negate.c\]|compute_srcs: [negate.c, ../outside/k.c]|" src-up/neuronop.yaml
    run build src-up
    expect_status 2
    expect_err "source file '"'"'../outside/k.c'"'"' is outside the library folder"
    not_quoted'

test_expect "--library-dir on the command line lets a build read a wider folder" '
    copy_example negate wide
    printf "#include <neuronop.h>\nint shared_helper;\n" >"$WORK/outside/k.c"
    sed -i "s|compute_srcs: \[negate.c\]|compute_srcs: [negate.c, ../outside/k.c]|" wide/neuronop.yaml
    run build wide
    expect_status 2
    run build --library-dir "$WORK" wide
    expect_status 0
    run build --library-dir "$WORK/wide" wide
    expect_status 2
    expect_err "source file '"'"'../outside/k.c'"'"' is outside the folder given with --library-dir"
    # (a docs audit'\''s find: a folder that is not there made every source "outside" it)
    run build --library-dir "$WORK/nowhere" wide
    expect_status 2
    expect_err "neuronop build: error: --library-dir '"'"'$WORK/nowhere'"'"': No such file or directory"'

test_expect "extra_include_paths and -I outside the folder are refused; /usr/include is not" '
    copy_example negate inc
    echo "extra_include_paths: [../outside]" >>inc/neuronop.yaml
    run build inc
    expect_status 2
    expect_err "include folder '"'"'../outside'"'"' is outside the library folder"
    sed -i "s|^extra_include_paths:.*|extra_cflags: [-I$WORK/outside]|" inc/neuronop.yaml
    run build inc
    expect_status 2
    expect_err "include folder '"'"'$WORK/outside'"'"' is outside the library folder"
    sed -i "s|^extra_cflags:.*|extra_include_paths: [/usr/include]|" inc/neuronop.yaml
    run build inc
    expect_status 0'

# The manifest comes with the sources: its cxx: may only name a C++ compiler on PATH, so a
# script of the pull request's own never runs as the compiler, with Landlock (which would
# refuse to execute it) or without.
test_expect "a cxx: program of the library folder is refused, with Landlock or without" '
    copy_example negate_cxx evil
    printf "#!/bin/sh\necho ran >\"%s\"\n" "$WORK/outside/ran" >evil/evil
    chmod +x evil/evil
    for prog in ./evil "$WORK/evil/evil" evil; do
        sed -i "/^cxx:/d" evil/neuronop.yaml
        echo "cxx: $prog" >>evil/neuronop.yaml
        PATH="$WORK/evil:$PATH" NEURONOP_LANDLOCK=off run build evil
        expect_status 2
        expect_err "'"'"'cxx'"'"' names a C++ compiler on PATH"
        PATH="$WORK/evil:$PATH" run build evil
        expect_status 2
    done
    test ! -e "$WORK/outside/ran"'

test_landlock "with Landlock, CXX naming a program inside the library folder is not run" '
    copy_example negate_cxx evil
    printf "#!/bin/sh\necho ran >\"%s\"\n" "$WORK/outside/ran" >evil/evil
    chmod +x evil/evil
    cd evil
    CXX=./evil run build .
    cd ..
    expect_status 2
    expect_err "cannot run '"'"'./evil'"'"': Permission denied"
    test ! -e "$WORK/outside/ran"'

# a wrapper that drops -MD leaves the check without Landlock nothing to go by
test_expect "without Landlock, a compiler that lists no file it read is refused" '
    copy_example negate_cxx unlisted
    mkdir -p bin
    printf "#!/bin/sh\nexit 0\n" >bin/quiet-cxx
    chmod +x bin/quiet-cxx
    NEURONOP_LANDLOCK=off CXX="$PWD/bin/quiet-cxx" run build unlisted
    expect_status 3
    expect_err "unlisted/negate.cpp: error: '"'"'$PWD/bin/quiet-cxx'"'"' wrote no list of the files it read (-MD -MF), which a build without Landlock checks"'

test_expect "tcc's and the system's headers still compile" '
    copy_example negate sys
    sed -i "1i #include <stdio.h>\n#include <string.h>\n#include <math.h>" sys/negate.c
    run build sys
    expect_status 0'
test_done
