#!/bin/sh
# The CI recipe in share/neuronop/ci: the shell script runs a library's tests in parallel
# shards with a JUnit file each and gates on a bench baseline, failing when a shard fails;
# the GitHub Actions workflow is valid YAML whose steps are real actions and the script.
. ./lib.sh
CI="$NEURONOP_SRC/share/neuronop/ci"
export NEURONOP
copy_example relu_multicore "$WORK/lib"
copy_example relu_multicore "$WORK/broken"
# a kernel that is wrong for the last element of its share: fails against the reference
sed -i 's/nt_tcm_to_tensor(&out, buf, begin + i, k);/buf[k - 1] = 42.0f; nt_tcm_to_tensor(\&out, buf, begin + i, k);/' \
    "$WORK/broken/relu.c"

test_expect "three shards run at once, each with its JUnit file, and pass" '
    sh "$CI/neuronop-ci.sh" -j 3 -o res lib >out 2>err || { cat out err; exit 1; }
    grep -q "^shard 1/3: " out
    grep -q "^shard 3/3: " out
    grep -qx "JUnit files: res/junit-1.xml res/junit-2.xml res/junit-3.xml" out
    for i in 1 2 3; do xmllint --noout res/junit-$i.xml; done
    for i in 1 2 3; do
        n=$(grep -o "passed, [0-9]* failed" res/shard-$i.log | head -1)
        test -n "$n"
    done
    cat res/shard-*.log | grep -c "^ok " >count
    test "$(cat count)" -eq 5'

test_expect "a later run into the same folder lists only the JUnit files it wrote" '
    sh "$CI/neuronop-ci.sh" -j 1 -o res lib >out 2>err || { cat out err; exit 1; }
    grep -qx "JUnit files: res/junit-1.xml" out
    sh "$CI/neuronop-ci.sh" --shard 3/3 -o res lib >out 2>err || { cat out err; exit 1; }
    grep -qx "JUnit files: res/junit-3.xml" out'

test_expect "a failing case fails its shard and the run, naming the case" '
    status=0
    sh "$CI/neuronop-ci.sh" -j 2 -o bad broken >out 2>err || status=$?
    test "$status" -eq 1
    grep -q "FAILED" out
    grep -q "FAIL  forward_odd_sizes" out'

test_expect "one shard of a matrix job runs alone; two shards run each sub-case once" '
    sh "$CI/neuronop-ci.sh" --shard 2/2 -o one lib >out 2>err || { cat out err; exit 1; }
    test -f one/junit-2.xml
    test ! -f one/junit-1.xml
    if grep -q "skipped" out; then exit 1; fi
    sh "$CI/neuronop-ci.sh" --shard 1/2 -o one lib >out 2>err || { cat out err; exit 1; }
    test "$(cat one/shard-1.log one/shard-2.log | grep -c "^ok ")" -eq 5
    test "$(grep -c "^ok " one/shard-2.log)" -ge 2'

test_expect "the bench gate passes against its own baseline" '
    "$NEURONOP" bench lib relu_forward randn:4096 --iters 5 --warmup 1 --json >base.json
    # the modeled figure scales host-timed compute: on a busy machine two runs of 5
    # iterations differ by more than the default 5%, so this gate allows what noise does
    sh "$CI/neuronop-ci.sh" -o gate --bench "relu_forward randn:4096 --iters 5 --warmup 1 \
        --max-regression 50" --baseline base.json lib >out 2>err || { cat out err; exit 1; }
    grep -q "throughput" out'

test_expect "the bench gate fails on a regression" '
    sed "s/\"throughput\": [0-9.e+]*/\"throughput\": 1e12/g" base.json >high.json
    status=0
    sh "$CI/neuronop-ci.sh" -o gate2 --bench "relu_forward randn:4096 --iters 5 --warmup 1" \
        --baseline high.json lib >out 2>err || status=$?
    test "$status" -eq 1'

# a red team's find: the shard log was written through a link the pull request committed,
# to any file the CI's user may write (a shell's > follows links)
test_expect "no file is written through a link in the results folder" '
    mkdir -p linked
    echo "victim" >victim
    ln -s "$PWD/victim" linked/shard-1.log
    ln -s "$PWD/victim" linked/junit-1.xml
    sh "$CI/neuronop-ci.sh" -j 1 -o linked lib >out 2>err || { cat out err; exit 1; }
    test "$(cat victim)" = victim
    test ! -L linked/shard-1.log
    grep -q "passed, 0 failed" linked/shard-1.log'

test_expect "a results folder that is a link is refused" '
    mkdir -p elsewhere
    ln -s "$PWD/elsewhere" ci-link
    status=0
    sh "$CI/neuronop-ci.sh" -j 1 -o ci-link lib >out 2>err || status=$?
    test "$status" -eq 2
    grep -q "'\''ci-link'\'' is a symbolic link: give -o a real folder" err
    test -z "$(ls elsewhere)"
    mkdir -p real
    ln -s "$PWD/elsewhere" real/linked
    status=0
    sh "$CI/neuronop-ci.sh" -j 1 -o real/linked/res lib >out 2>err || status=$?
    test "$status" -eq 2
    grep -q "'\''real/linked'\'' is a symbolic link: give -o a real folder" err
    test -z "$(ls elsewhere)"'

test_expect "--help prints the usage on standard output and exits 0" '
    sh "$CI/neuronop-ci.sh" --help >out 2>err
    grep -q "^Usage:" out
    grep -q -- "-j N  " out
    grep -q "^Exit status:" out
    test ! -s err'

test_expect "usage errors exit 2" '
    status=0; sh "$CI/neuronop-ci.sh" >/dev/null 2>&1 || status=$?; test "$status" -eq 2
    status=0; sh "$CI/neuronop-ci.sh" -j 0 lib >/dev/null 2>&1 || status=$?; test "$status" -eq 2
    status=0; sh "$CI/neuronop-ci.sh" --bench x lib >/dev/null 2>&1 || status=$?; test "$status" -eq 2'

test_expect "the workflow is valid YAML naming real actions and the script" '
    python3 - "$CI/github-actions.yml" "$CI" <<PY
import os, sys, yaml
wf = yaml.safe_load(open(sys.argv[1]))
real = {"actions/checkout@v4", "actions/upload-artifact@v4", "actions/download-artifact@v4",
        "mikepenz/action-junit-report@v4"}
assert set(wf["jobs"]) == {"test", "report", "bench"}, wf["jobs"].keys()
assert wf["jobs"]["test"]["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
runs = []
for name, job in wf["jobs"].items():
    for step in job["steps"]:
        assert "uses" in step or "run" in step, step
        if "uses" in step:
            assert step["uses"] in real, step["uses"]
        else:
            runs.append(step["run"])
script = [r for r in runs if "neuronop-ci.sh" in r]
assert script and "--shard" in script[0], runs
assert os.path.basename(script[0].split()[0]) in os.listdir(sys.argv[2])
assert any("--baseline" in r for r in runs)
# what judges a pull request comes from outside it: a .deb checked against a pinned SHA-256,
# never one in the checkout, and the baseline of the target branch (a red team find)
installs = [r for r in runs if "apt-get install" in r]
assert installs and all("sha256sum -c" in r and "RUNNER_TEMP" in r for r in installs), installs
assert "./" not in " ".join(installs) and "NEURONOP_DEB:" not in open(sys.argv[1]).read()
shard = [r for r in runs if "neuronop-ci.sh" in r][0]
assert "RUNNER_TEMP" in shard, shard
uploads = [s["with"]["path"] for s in wf["jobs"]["test"]["steps"] if "upload-artifact" in s.get("uses", "")]
assert len(uploads) == 1 and "runner.temp" in uploads[0] and "matrix.shard" in uploads[0] \
    and "*" not in uploads[0], uploads
assert wf[True]["push"]["branches"] == ["**"], wf[True]
gate = [r for r in runs if "--baseline" in r and "neuronop bench" in r]
assert gate and "GITHUB_BASE_REF" in gate[0] and "git show" in gate[0], gate
PY'

test_done
