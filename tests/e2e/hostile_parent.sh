# Sourced by t0213-t0218: builds a copy of tests/fixtures/hostile_parent as hp in $WORK, with
# forge.h giving its forger the size of a nop_error, read from libneuronop.h by the compiler.
cp -R "$NEURONOP_SRC/tests/fixtures/hostile_parent" "$WORK/hp"
printf '#include <stdio.h>\n#include "libneuronop.h"\nint main(void) { printf("#define NOP_ERROR_SIZE %%zu\\n", sizeof(nop_error)); return 0; }\n' \
    >"$WORK/size.c"
${CC:-cc} -I"$NEURONOP_SRC/include" -o "$WORK/size" "$WORK/size.c"
"$WORK/size" >"$WORK/hp/forge.h"
# built once here, from $WORK as the tests name it, so that no test pays for the build
(cd "$WORK" && "$NEURONOP" build hp >/dev/null 2>&1)

# attack N NAME: attack N of the fixture's shape function `attack` is stopped at system call
# NAME: exit 1, the call named, neuronop's own summary line printed.  (A test that also looks
# for any process left behind uses run_alone.)
attack() {
    run run hp attack "zeros:$1"
    expect_status 1
    expect_err "neuronop: attack: shape function 'attack': error: shape function made a system call the device does not have: $2"
    expect_err "neuronop: device checks: 1 error, 0 warnings"
}
