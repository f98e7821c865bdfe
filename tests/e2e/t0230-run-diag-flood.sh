#!/bin/sh
# A worker's diagnostics are bounded a request, and plain (red team: attacks diag_flood,
# fake_lines): a kernel that writes device warnings of its own on the worker's record pipe
# (fixture diagflood) got every one printed (1.5 million lines in one run), and lines in its
# message printed as lines of their own, which look like neuronop test's verdicts and summary.
# neuronop takes at most what the runtime can emit in the request's runs, then says how many
# more there were; a message is one line, and a detail's lines are indented under it.
. ./lib.sh

cp -R "$NEURONOP_SRC/tests/fixtures/diagflood" "$WORK/df"
printf '%s\n' '#include <stddef.h>' '#include <stdio.h>' '#include "libneuronop.h"' \
    'int main(void) { printf("#define DIAG_SIZE %zu\n#define DIAG_MSG %zu\n#define DIAG_DETAIL %zu\n",' \
    '    sizeof(nop_diag), offsetof(nop_diag, msg), offsetof(nop_diag, detail)); return 0; }' \
    >"$WORK/size.c"
${CC:-cc} -I"$NEURONOP_SRC/include" -o "$WORK/size" "$WORK/size.c"
"$WORK/size" >"$WORK/df/diag.h"
(cd "$WORK" && "$NEURONOP" build df >/dev/null 2>&1)

test_expect "20000 forged warnings print a bounded number of lines and say how many were dropped" '
    run run df flood zeros:20000
    lines=$(wc -l <err)
    echo "$lines lines on stderr"
    test "$lines" -lt 1000
    grep -E "^neuronop: flood: warning: [0-9]+ more diagnostics from the device process were not shown" err'

test_expect "the lines of a forged warning cannot pass for neuronop's own" '
    run run df flood zeros:3
    expect_err "warning: forged?ok    wrong (5 executions, 3.1 ms)?1 passed, 0 failed"
    if grep -E "^(ok |FAIL |[0-9]+ passed, [0-9]+ failed)" err; then exit 1; fi'

test_done
