#!/bin/sh
# memcheck: a kernel's own out-of-bounds pointer accesses, each reported with the op, the
# core, the line and the region it left; each kernel in bounds passes, and computes the same
# values with and without memcheck.
. ./lib.sh
cp -R "$NEURONOP_SRC/tests/fixtures/memcheck" "$WORK/mc"

test_expect "build --memcheck makes a second library beside the plain one" '
    run build mc
    expect_status 0
    run build --memcheck -v mc
    expect_status 0
    expect_out "built mc/build/libmc.memcheck.so"
    expect_err "compile (device) mc/k.c: libtcc -I"
    expect_err " -b -g"
    run inspect mc/build/libmc.memcheck.so
    expect_out "\"memcheck\": true"
    run build mc
    expect_out "up to date"'

test_expect "an index past a tcm_malloc buffer is reported at its line" '
    run run --memcheck mc tcm randn:10 1
    expect_status 1
    expect_err "neuronop: tcm: core 0: error: out-of-bounds access at mc/k.c:13 in '\''tcm'\'' (memcheck): 4 bytes at offset 40 of the 40-byte TCM buffer from tcm_malloc at mc/k.c:10 in '\''tcm'\''"
    expect_err "   13 |         buf[i] = buf[i] + 0.0f;"
    expect_err "only bytes [0, 40) of it may be touched: check the index or the loop bound"
    expect_err "neuronop: device checks: 1 error, 0 warnings"'

# the device would not notice; the pool's fill pattern does (tests/fixtures/tcmstray).  The
# kernel's buf[i] + 0.0f of the pattern's signalling NaN makes it quiet: one byte changes,
# and the message names that byte
test_expect "... which without memcheck is found at the buffer'\''s tcm_free, without its line" '
    run run mc tcm randn:10 1
    expect_status 1
    expect_err "a store past the end of this 40-byte TCM buffer changed byte 42 of it"
    expect_err "--memcheck finds the line"'

test_expect "a kernel whose stores stay inside its TCM buffer passes without memcheck" '
    cp -R "$NEURONOP_SRC/tests/fixtures/tcmstray" stray
    for n in 1 10 16 64; do
        run run stray within randn:$n
        expect_status 0
    done'

# a pool of a size that is no whole number of words (a profile's), and the last byte of the
# guard after it: the message's range once read past the guard (a reviewer's find under
# AddressSanitizer), and named a store past the pool as one into it
test_expect "a store into the guard past an odd-sized pool is named so, and read within it" '
    sed -e "s/^tcm_bytes:.*/tcm_bytes: 1026/" -e "s/^stream_tcm_bytes:.*/stream_tcm_bytes: 512/" \
        "$NEURONOP_SHARE_DIR/devices/trn1.yaml" >odd.yaml
    run run --device "$PWD/odd.yaml" stray byte_at randn:4 $((1026 + 63))
    expect_status 1
    expect_err "a store past the end of the core'\''s 1026-byte TCM pool changed its byte 1089, found when the kernel returned"'

test_expect "a local array overrun names the local and its function" '
    run run --memcheck mc local randn:10 1
    expect_status 1
    expect_err "error: out-of-bounds access at mc/k.c:37 in '\''local'\'' (memcheck): 4 bytes at offset 16 of the 16-byte local '\''window'\'' of '\''local'\''"'

test_expect "global and static arrays are checked and named" '
    run run --memcheck mc global randn:10 1
    expect_status 1
    expect_err "error: out-of-bounds access at mc/k.c:60 in '\''global'\'' (memcheck): 4 bytes at offset 16 of the 16-byte global '\''weights'\''"
    run run --memcheck mc global randn:10 2
    expect_status 1
    expect_err "error: out-of-bounds access at mc/k.c:62 in '\''global'\'' (memcheck): 4 bytes at offset 32 of the 32-byte static '\''history'\''"'

# A C++ source makes the system linker link the library.  Before, ld refused the stabs
# libtcc loads (R_X86_64_32S in a shared object); once linked, a version script hid the
# globals from dladdr, and the last function of a unit had no end.
test_expect "C kernels in a library with C++ sources: memcheck builds and names as in C" '
    cp -R mc mx
    rm -rf mx/build
    printf "int mx_unused(int x) { return x + 1; }\n" >mx/extra.cpp
    sed "s/^shape_srcs: \[s.c\]/shape_srcs: [s.c, extra.cpp]/" mc/neuronop.yaml >mx/neuronop.yaml
    run build --memcheck mx
    expect_status 0
    run run --memcheck mx global randn:10 1
    expect_status 1
    expect_err "error: out-of-bounds access at mx/k.c:60 in '\''global'\'' (memcheck): 4 bytes at offset 16 of the 16-byte global '\''weights'\''"
    run run --memcheck mx global randn:10 2
    expect_err "of the 32-byte static '\''history'\''"
    run run --memcheck mx sizes_over randn:10
    expect_status 1
    expect_err "error: out-of-bounds access at mx/k.c:117 in '\''sizes_over'\'' (memcheck)"
    run run --memcheck mx local randn:10 1
    expect_err "at mx/k.c:37 in '\''local'\'' (memcheck): 4 bytes at offset 16 of the 16-byte local '\''window'\'' of '\''local'\''"'

test_expect "TCM used after tcm_free is reported" '
    run run --memcheck mc after_free randn:10
    expect_status 1
    expect_err "error: invalid TCM access at mc/k.c:86 in '\''after_free'\'' (memcheck): 4 bytes at TCM offset 0, in no live tcm_malloc buffer"
    expect_err "the buffer was freed with tcm_free, or the pointer was never one tcm_malloc returned"'

test_expect "pointer arithmetic past one beyond the end is reported" '
    run run --memcheck mc escape randn:10
    expect_status 1
    expect_err "error: out-of-bounds pointer arithmetic at mc/k.c:93 in '\''escape'\'' (memcheck): makes a pointer to offset 24 of the 16-byte local '\''counts'\'' of '\''escape'\''"
    expect_err "a pointer may point at bytes [0, 16] of it (the last just past its end); C leaves anything further undefined"'

test_expect "a float read tcc folds into arithmetic: two past the end reported, one not" '
    run run --memcheck mc sum randn:10 2
    expect_status 1
    expect_err "error: out-of-bounds pointer arithmetic at mc/k.c:77 in '\''sum'\'' (memcheck): makes a pointer to offset 44 of the 40-byte TCM buffer"
    run run --memcheck mc sum randn:10 1
    expect_status 0'

test_expect "memcpy and strlen are checked over the bytes they touch" '
    run run --memcheck mc copy randn:10 1
    expect_status 1
    expect_err "error: out-of-bounds memcpy at mc/k.c:48 in '\''copy'\'' (memcheck): writes 15 bytes at offset 0 of the 8-byte local '\''name'\'' of '\''copy'\''"
    run run --memcheck mc strlen_over randn:10
    expect_status 1
    expect_err "error: out-of-bounds strlen at mc/k.c:101 in '\''strlen_over'\'' (memcheck): reads 5 bytes at offset 0 of the 4-byte local '\''tag'\'' of '\''strlen_over'\''"'

test_expect "a variable-length array overrun is reported" '
    run run --memcheck mc vla_over randn:10
    expect_status 1
    expect_err "error: out-of-bounds access at mc/k.c:108 in '\''vla_over'\'' (memcheck): 4 bytes at offset 40 of a 40-byte variable-length array"'

test_expect "in bounds, the kernels pass and compute what they do without memcheck" '
    for op in tcm local copy global sum; do
        run run --memcheck mc $op randn:64 0 -o $op.mc.npy
        expect_status 0
        expect_err "neuronop: device checks: 0 errors, 0 warnings"
        run run mc $op randn:64 0 -o $op.npy
        expect_status 0
        cmp $op.mc.npy $op.npy
    done
    run test --memcheck mc
    expect_status 0
    expect_out "6 passed, 0 failed"'

test_expect "bench --memcheck measures the memcheck build, and stops at a bad access" '
    run bench --memcheck mc tcm randn:64 0 --warmup 1 --iters 3
    expect_status 0
    expect_out "tcm on trn1: 1 core"
    expect_out "(a memcheck build: every pointer access of the kernel is checked, so the figures are the instrumented kernel'\''s, not the device'\''s)"
    run bench --memcheck mc tcm randn:64 1 --warmup 1 --iters 3
    expect_status 1
    expect_err "error: out-of-bounds access at mc/k.c:13 in '\''tcm'\'' (memcheck)"'

test_expect "the examples pass under memcheck, the multicore relu on 1, 3 and 8 cores" '
    copy_example relu_multicore relu
    for cores in 1 3 8; do
        run run --memcheck relu relu_forward randn:1000 --cores $cores
        expect_status 0
    done
    copy_example relu_tcm relu_tcm
    run test --memcheck relu_tcm
    expect_status 0'

test_expect "--memcheck with a library built without it is a usage error" '
    run run --memcheck mc/build/libmc.so tcm randn:10 0
    expect_status 2
    expect_err "neuronop: error: '\''mc/build/libmc.so'\'' was built without --memcheck"
    expect_err "build it with '\''neuronop build --memcheck'\'', or give its folder instead"
    run run mc/build/libmc.memcheck.so tcm randn:10 1
    expect_status 1
    expect_err "(memcheck)"'

test_done
