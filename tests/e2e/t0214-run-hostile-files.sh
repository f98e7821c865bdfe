#!/bin/sh
# User code writes, links and changes no file and mounts nothing (issue 20): openat2 with
# O_CREAT, io_uring, link, symlink, mknod, truncate and chmod of an existing file, mount, and
# typing into the terminal with TIOCSTI are each trapped and reported by name, exit 1; the
# scratch folder holds afterwards exactly what it held before.
. ./lib.sh
. ./hostile_parent.sh
echo "precious" >"$WORK/victim.txt"
chmod 644 "$WORK/victim.txt"
ls -A "$WORK" >"$WORK/before"

test_expect "openat2(O_CREAT) is stopped" 'attack 9 openat2'
test_expect "io_uring is stopped" 'attack 10 io_uring_setup'
test_expect "link is stopped" 'attack 11 linkat'
test_expect "symlink is stopped" 'attack 12 symlinkat'
test_expect "mknod is stopped" 'attack 13 mknodat'
test_expect "truncate of an existing file is stopped" 'attack 14 truncate'
test_expect "chmod of an existing file is stopped" 'attack 15 fchmodat'
test_expect "mount is stopped, and nothing is left running" '
    attack 16 mount
    run_alone run hp attack zeros:16
    expect_status 1'
test_expect "TIOCSTI into the terminal is stopped" 'attack 17 ioctl'

test_expect "no file was written, linked or changed, and nothing is mounted" '
    test "$(cat victim.txt)" = precious
    test "$(stat -c %a victim.txt)" = 644
    ls -A "$WORK" | grep -v "^after$\|^out$\|^err$\|^\.log$" >after
    grep -v "^out$\|^err$\|^\.log$" before | diff - after
    if ls | grep pwned; then exit 1; fi
    if grep -q "$WORK" /proc/mounts; then exit 1; fi'

test_done
