"""The Python bridge's targets (issue 19), for `make bench` (bench/run.sh runs it under
`neuronop python` with the mlp_python example's folder, built, as its argument):
  - one call of a 64x120 float relu from Python: at most 100 us over torch.relu's;
  - the example's 784-120-84-10 training loop (batch 32) with the device relu: at least 0.8x
    the iterations per second of the same loop with torch.relu, and the same loss at every
    step.
Both baselines are measured here, in the same process.  Prints the figures whatever they are,
then the same two figures with the sandbox off (NEURONOP_SANDBOX=off: the supervisor runs the
op itself), which is what the bridge costs without the worker: Python, the socket, the
supervisor and the device run.
"""
import os
import sys
import time

import torch

folder = sys.argv[1]
os.chdir(folder)
sys.path.insert(0, folder)
import model  # noqa: E402  (loads librelu.so from this folder, as the tutorial does)
from neuronop import _client  # noqa: E402


def per_call_us(fn, x, n):
    fn(x)
    start = time.perf_counter()
    for _ in range(n):
        fn(x)
    return (time.perf_counter() - start) / n * 1e6


def check(name, ok):
    print("  [%s] %s" % ("ok" if ok else "MISS", name))


x = torch.randn(64, 120)
best_torch = min(per_call_us(torch.relu, x, 2000) for _ in range(3))
best_ours = min(per_call_us(torch.ops.my_ops.relu_forward, x, 100) for _ in range(3))
print("  one 64x120 relu call: torch.relu %.1f us, on the virtual device %.1f us "
      "(%.1f us over)" % (best_torch, best_ours, best_ours - best_torch))
check("a device relu call at most 100 us over torch.relu's", best_ours - best_torch <= 100)

steps = int(os.environ.get("NEURONOP_BENCH_STEPS", "60"))
device_relu = model.my_ops.Relu.apply


def best_ips(relus, rounds=3):
    """Trains with each relu in turn, rounds times (interleaved: a busy moment of the
    machine hits both); per relu, its best iterations per second and whether its losses
    were the same in every round, and the losses."""
    best, losses, steady = {}, {}, {}
    for _ in range(rounds):
        for name, relu in relus:
            got, seconds = model.train(steps, relu=relu)
            best[name] = max(best.get(name, 0.0), steps / seconds)
            steady[name] = steady.get(name, True) and losses.get(name, got) == got
            losses[name] = got
    return best, losses, steady


ips, losses, steady = best_ips([("torch", torch.relu), ("device", device_relu)])
same = losses["device"] == losses["torch"] and all(steady.values())
print("  MLP 784-120-84-10, batch 32, %d SGD steps (best of 3): torch.relu %.1f it/s, device "
      "relu %.1f it/s; ratio %.3fx; losses %s" % (
          steps, ips["torch"], ips["device"], ips["device"] / ips["torch"],
          "identical at every step" if same else "DIFFER"))
check("the same loss as torch.relu at every step", same)
check("training at least 0.8x torch.relu's iterations per second",
      ips["device"] / ips["torch"] >= 0.8)

# the bridge without the worker: a new supervisor, started with the sandbox off
os.environ["NEURONOP_SANDBOX"] = "off"
_client.supervisor().close()
best_here = min(per_call_us(torch.ops.my_ops.relu_forward, x, 500) for _ in range(3))
ips, here, steady = best_ips([("torch", torch.relu), ("device", device_relu)])
same = here["device"] == losses["torch"] and all(steady.values())
print("  without the worker (NEURONOP_SANDBOX=off): a call %.1f us (%.1f us over torch.relu); "
      "the MLP %.1f it/s against torch.relu's %.1f, ratio %.3fx; losses %s" % (
          best_here, best_here - best_torch, ips["device"], ips["torch"],
          ips["device"] / ips["torch"], "identical at every step" if same else "DIFFER"))
