#!/bin/sh
# The library the linker writes is read as the loader reads it (its program headers and
# dynamic segment, never its section headers), and may run nothing at load or unload but the
# toolchain's own code: each way a linker of the user's (CC, here a wrapper script) adds
# load-time code is refused, and each test's control shows that the same link, loaded,
# runs the added code.  The toolchain's own libraries still build and run.
. ./lib.sh
unset NEURONOP_CACHE_DIR

F="$NEURONOP_SRC/tests/fixtures/linked"
cc -fPIC -DMARK="\"$WORK/ran\"" -c "$F/evil.c" -o "$WORK/evil.o"
cc -fPIC -c "$F/ctor.c" -o "$WORK/ctor.o"
cc -c "$F/initfrag.s" -o "$WORK/initfrag.o"
cc -fPIC -c "$F/frame_dummy.c" -o "$WORK/frame_dummy.o"
cc -fPIC -shared "$F/ctor.c" "$WORK/evil.o" -o "$WORK/libextra.so"
cc -fPIC -O1 -DMARK="\"$WORK/ran\"" -c "$F/forged.c" -o "$WORK/forged.o"

# wrapper NAME 'ARGS' [MODE [SCRIPT]]: $WORK/cc-NAME is cc, which adds ARGS to a link (-shared)
# and then edits the library with SCRIPT.py MODE (patch.py: its section headers)
wrapper() {
    cat > "$WORK/cc-$1" <<SH
#!/bin/sh
case " \$* " in *" -shared "*) ;; *) exec cc "\$@" ;; esac
out=; prev=
for a; do [ "\$prev" = -o ] && out=\$a; prev=\$a; done
cc "\$@" $2 || exit 1
${3:+python3 "$F/${4:-patch}.py" $3 "\$out"}
SH
    chmod +x "$WORK/cc-$1"
}
wrapper init "$WORK/evil.o -Wl,-init=evil"
wrapper fini "$WORK/evil.o -Wl,-fini=evil"
wrapper initfrag "$WORK/initfrag.o $WORK/evil.o"
wrapper frame_dummy "-nostartfiles $WORK/frame_dummy.o $WORK/evil.o"
wrapper needed "-Wl,--no-as-needed -L$WORK -lextra"
wrapper zero "$WORK/ctor.o $WORK/evil.o" zero
wrapper retype "$WORK/ctor.o $WORK/evil.o" retype
wrapper strip "$WORK/ctor.o $WORK/evil.o" strip
wrapper ifunc "$WORK/ifunc.o"
wrapper execstack "-Wl,-z,execstack"
wrapper beyond "$WORK/forged.o" beyond forge
wrapper textrel "$WORK/forged.o" textrel forge
sed 's/exec cc /exec g++ /; s/^cc /g++ /' "$WORK/cc-init" > "$WORK/cxx-init"
chmod +x "$WORK/cxx-init"
wrapper held "&& ln -f \"\$out\" $WORK/held.so"
# and one that leaves out the version script, so that the library exports every function
cat > "$WORK/cc-export" <<SH
#!/bin/sh
for a; do shift; case \$a in --version-script=*) a=--no-undefined ;; esac; set -- "\$@" "\$a"; done
exec cc "\$@"
SH
chmod +x "$WORK/cc-export"

# an indirect function the library takes the address of: its resolver runs at load, before
# the library's calls are bound (so it calls open(2) itself)
cat > "$WORK/ifunc.c" <<C
static void one(void) { }
static void *pick(void)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(2), "D"(MARK), "S"(0101), "d"(0644)
                     : "rcx", "r11", "memory");
    return (void *)one;
}
void chosen(void) __attribute__((ifunc("pick")));
void (*use)(void) = chosen;
C
cc -fPIC -DMARK="\"$WORK/ran\"" -c "$WORK/ifunc.c" -o "$WORK/ifunc.o"

why="has code that runs when it loads or unloads, which no source showed"

# linked_by NAME [OPTION]: builds a copy of the relu example with compiler: cc, OPTION and
# CC=cc-NAME (Landlock off: the wrappers are in this test's folder)
linked_by() {
    rm -rf "$1"
    copy_example relu "$1"
    NEURONOP_LANDLOCK=off CC="$WORK/cc-$1" run build --compiler=cc ${2-} "$1"
}

# refused NAME WHAT [OPTION]: the build with wrapper NAME (and OPTION) is exit 3 with WHAT and
# leaves no library; the control: the wrapper's own link of an empty library, loaded and
# unloaded, runs evil
refused() {
    linked_by "$1" ${3-}
    expect_status 3
    expect_err "neuronop: error: the library linked for '$1/build/librelu.so' $why: $2"
    test ! -e "$1/build/librelu.so"
    test ! -e "$WORK/ran"
    "$WORK/cc-$1" -shared -fPIC -o "$WORK/control-$1.so" "$F/empty.c"
    LD_LIBRARY_PATH=$WORK python3 -c "import ctypes; ctypes.CDLL(\"$WORK/control-$1.so\")"
    test -e "$WORK/ran"
    rm -f "$WORK/ran"
}

test_expect "an init function set by -Wl,-init is refused" '
    refused init "an init function (DT_INIT) other than crti'\''s _init"'

test_expect "a fragment of .init between crti's and crtn's is refused" '
    refused initfrag "an init function (DT_INIT) other than crti'\''s _init"'

test_expect "a fini function set by -Wl,-fini is refused" '
    refused fini "a fini function (DT_FINI) other than crti'\''s _fini"'

test_expect "an init array entry named frame_dummy that is not crtbegin's is refused" '
    refused frame_dummy "an entry in its init array other than crtbegin'\''s frame_dummy"'

test_expect "a needed library with a constructor of its own is refused" '
    refused needed "a needed library '\''libextra.so'\'' (DT_NEEDED), which is not the toolchain'\''s"'

for mode in zero retype strip; do
    test_expect "a constructor whose section headers are edited ($mode) is refused" '
        refused '$mode' "2 entries in its init array (DT_INIT_ARRAYSZ 16), where the toolchain adds one"'
done

test_expect "an indirect function the linker adds is refused" '
    refused ifunc "an indirect function (an IRELATIVE relocation, whose resolver the loader calls)"'

# The loader reads each relocation's symbol from memory as it relocates, after the
# relocations before it: a symbol past those the hash tables count (in writable data), or one
# of .dynsym that a text relocation rewrites, is forged by an earlier relocation into a local
# indirect function, whose resolver the loader calls.
test_expect "a relocation of a symbol past those the hash tables count is refused" '
    refused beyond "a relocation of dynamic symbol "
    expect_err "past the "
    expect_err "its hash tables reach"'

# (memcheck's C++ link is cc's: here its first library, the registration's probe, is refused)
test_expect "a text relocation that rewrites a dynamic symbol is refused (memcheck)" '
    copy_example relu_cxx textrel
    NEURONOP_LANDLOCK=off CC="$WORK/cc-textrel" run build --memcheck textrel
    expect_status 3
    expect_err "neuronop: error: the registration'\''s probe library linked for '\''textrel/build/librelu_cxx.memcheck.so'\'' $why: a relocation at 0x"
    expect_err ", onto a table the loader reads (tag 0x6)"
    test ! -e textrel/build/librelu_cxx.memcheck.so
    test ! -e "$WORK/ran"
    "$WORK/cc-textrel" -shared -fPIC -Wl,-Bsymbolic -o "$WORK/control-textrel.so" "$F/empty.c"
    python3 -c "import ctypes; ctypes.CDLL(\"$WORK/control-textrel.so\")"
    test -e "$WORK/ran"
    rm -f "$WORK/ran"'

# The registration's probe library, which a child loads to run NEURON_LIBRARY's body, is
# checked as the library is (without the check, the child's filter killed it as it loaded).
test_expect "the registration's probe library is checked too" '
    cp -R "$NEURONOP_SRC/tests/fixtures/cxx/ops" ops
    rm -rf ops/build
    NEURONOP_LANDLOCK=off CC="$WORK/cc-init" CXX="$WORK/cxx-init" run build ops
    expect_status 3
    expect_err "neuronop: error: the registration'\''s probe library linked for '\''ops/build/libmy_ops.so'\'' $why: an init function (DT_INIT) other than crti'\''s _init"
    test ! -e "$WORK/ran"'

test_expect "an executable stack the linker asks for is refused" '
    linked_by execstack
    expect_status 3
    expect_err "neuronop: error: the library linked for '\''execstack/build/librelu.so'\'' $why: an executable stack (PT_GNU_STACK)"
    test ! -e execstack/build/librelu.so'

test_expect "a definition exported beyond the library's own two is refused" '
    linked_by export
    expect_status 3
    expect_err "neuronop: error: the library linked for '\''export/build/librelu.so'\'' $why: a definition of '\''"
    expect_err "'\'' that other libraries could bind to"
    test ! -e export/build/librelu.so'

# The linker's processes may still hold the file they wrote (here: a hard link to it); the
# library installed is the buffer that was checked, in a file of its own.
test_expect "what the linker still holds is not the library installed" '
    linked_by held
    expect_status 0
    cp held/build/librelu.so before.so
    printf "\377\377\377\377" | dd of="$WORK/held.so" bs=1 seek=64 conv=notrunc 2>/dev/null
    cmp before.so held/build/librelu.so'

test_expect "the toolchain's own libraries build and run: libtcc, cc, g++, memcheck" '
    copy_example relu tcc
    run build tcc
    expect_status 0
    copy_example relu cc
    run build --compiler=cc cc
    expect_status 0
    run test cc
    expect_status 0
    copy_example relu_cxx gxx
    run build gxx
    expect_status 0
    run test gxx
    expect_status 0
    copy_example relu mc
    run build --memcheck mc
    expect_status 0
    run test --memcheck mc
    expect_status 0'

if command -v clang++ >/dev/null; then
    test_expect "a library clang++ links builds and runs" '
        copy_example relu_cxx clang
        CXX=clang++ run build clang
        expect_status 0
        CXX=clang++ run test clang
        expect_status 0'
fi

test_done
