#!/usr/bin/python3
"""diff.py - the tensor library against PyTorch: every op and overload of the device's subset,
on every device dtype, mixed dtypes, special values and each form (allocating, _out into
each dtype, in place, aliasing), computed by torch here and now and by neuronop through the
case table of k.c; integers and float ops compared bit for bit (transcendentals within 1 ulp
where this torch's CPU capability is not AVX2, whose Sleef functions the device calls too);
where torch raises, neuronop must stop the core (exit 1) with torch's reason.

usage: diff.py NEURONOP LIBDIR [--count] [--no-cxx]
Prints TAP (--count: how many cases differ, by op).  LIBDIR is a scratch copy of tests/diff,
built there (the C library, and the C++ one in LIBDIR/cxx, which every 4th case and a third
of the kinds of refusal also run through, for the C++ overloads and the C++ names in
messages).  A refusal costs a process, so one case per op and kind of reason runs unless
DIFF_EVERY_RAISE=1 (about a minute: every refusal, on both surfaces).
"""
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

MAXN, NF = 8, 12
DEVICE_RULE = "bitwise ops take integral tensors only"
(ABS, CEIL, FLOOR, SIN, COS, TAN, LOG, LOG2, LOG10, EXP, NOT, ADD, SUB, MUL, DIV, AND, OR,
 POW, POW_T, POW_S, CLAMP, FULL, FILL) = range(23)
ALLOC, OUT_NEW, OUT_SELF, OUT_OTHER = range(4)
S_NONE, S_INT, S_FLOAT = range(3)
NAMES = ["abs", "ceil", "floor", "sin", "cos", "tan", "log", "log2", "log10", "exp",
         "bitwise_not", "add", "sub", "mul", "div", "bitwise_and", "bitwise_or", "pow", "pow_t",
         "pow_s", "clamp", "full", "fill_"]
UNARY = list(range(ABS, NOT + 1))
TRANSCENDENTAL = {SIN, COS, TAN, LOG, LOG2, LOG10, EXP, POW, POW_T, POW_S}
# ATen's vectorised loops call Sleef's AVX2 functions, as the device does (tlsleef.c): then
# transcendentals too are torch's bit for bit
SLEEF_AVX2 = "CPU capability usage: AVX2" in torch.__config__.show()

# nt_dtype order (neuronop.h)
DT = [torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int8, torch.int64,
      torch.int16, torch.uint8]
F32, BF16, F16, I32, I8, I64, I16, U8 = range(8)
FLOATS, INTS = [F32, BF16, F16], [I32, I8, I64, I16, U8]
BITS = {torch.float32: (torch.int32, 32), torch.bfloat16: (torch.int16, 16),
        torch.float16: (torch.int16, 16)}

INF, NAN = math.inf, math.nan
FLOAT_SETS = [[0.0, -0.0, 1.0, -1.5, 2.5, INF, -INF, NAN],
              [3.0, 0.1, -0.1, 1e-40, 65504.0, 1e6, -7.25, 0.5],
              [100.0, -100.0, 1e30, 1e-5, 7.0, -3.0, 0.75, 1.7]]


def int_sets(d):
    info = torch.iinfo(DT[d])
    lo, hi = info.min, info.max
    if d == U8:
        return [[0, 1, 2, 3, 7, 128, 254, 255], [5, 100, 12, 127, 0, 1, 255, 9]]
    sets = [[0, 1, -1, 2, 3, -7, hi, lo], [5, 100 % hi, -(100 % hi), hi - 1, lo + 1, 12, 9, -2]]
    if d == I64:
        sets.append([2**53 + 1, 2**62, -(2**53) - 1, 3037000500, -3, 7, 2**31, -(2**31) - 1])
    return sets


def value_sets(d):
    return FLOAT_SETS if d in FLOATS else int_sets(d)


def tensor(d, vals):
    return torch.tensor(vals, dtype=DT[d]) if d in INTS else torch.tensor(vals).to(DT[d])


def raw_bits(t):
    """a tensor's elements as zero-extended raw bits (what k.c writes)"""
    if t.dtype in BITS:
        it, nb = BITS[t.dtype]
        return [v & ((1 << nb) - 1) for v in t.view(it).tolist()]
    nb = torch.iinfo(t.dtype).bits
    return [v & ((1 << nb) - 1) for v in t.tolist()]


def scal(s):
    """(kind, bits) of a Python number as the case table carries it"""
    if s is None:
        return S_NONE, 0
    if isinstance(s, int):
        return S_INT, s
    return S_FLOAT, int(np.array([s], dtype=np.float64).view(np.int64)[0])


class Case:
    def __init__(self, op, form, sd, sv, od=None, ov=None, outd=None, s1=None, s2=None):
        self.op, self.form, self.sd, self.sv = op, form, sd, sv
        self.od, self.ov, self.outd, self.s1, self.s2 = od, ov, outd, s1, s2

    def __str__(self):
        form = ["", " out=%s" % (self.outd is not None and DT[self.outd]), " out=self",
                " out=other"][self.form]
        other = "" if self.od is None else " other=%s%s" % (DT[self.od], self.ov)
        return "%s(self=%s%s%s s1=%r s2=%r)%s" % (NAMES[self.op], DT[self.sd] if self.sd is
                                                  not None else "-", self.sv, other, self.s1,
                                                  self.s2, form)

    def device_refuses(self):
        """the device's own rule: bitwise ops on and into integral tensors only"""
        ts = [self.sd, self.od, self.outd if self.form == OUT_NEW else None]
        return self.op in (AND, OR, NOT) and any(d in FLOATS for d in ts if d is not None)

    def torch(self):
        """(dtype index, raw bits) or the reason torch raises"""
        a = tensor(self.sd, self.sv) if self.sd is not None else None
        b = tensor(self.od, self.ov) if self.od is not None else None
        kw = {}
        if self.form == OUT_NEW:
            kw["out"] = torch.empty(len(self.sv), dtype=DT[self.outd])
        elif self.form == OUT_SELF:
            kw["out"] = a
        elif self.form == OUT_OTHER:
            kw["out"] = b
        op, s1, s2 = self.op, self.s1, self.s2
        try:
            if op in UNARY:
                fn = getattr(torch, NAMES[op])
                r = fn(a, **kw)
            elif op in (ADD, SUB):
                r = getattr(torch, NAMES[op])(a, b if b is not None else s1, alpha=s2, **kw)
            elif op in (MUL, DIV, AND, OR):
                r = getattr(torch, NAMES[op])(a, b if b is not None else s1, **kw)
            elif op == POW:
                r = torch.pow(a, s1, **kw)
            elif op == POW_T:
                r = torch.pow(a, b, **kw)
            elif op == POW_S:
                r = torch.pow(s1, a, **kw)
            elif op == CLAMP:
                r = torch.clamp(a, s1, s2, **kw)
            elif op == FULL:
                r = torch.full((len(self.sv),), s1, dtype=DT[self.outd])
            else:
                r = a.fill_(s1)
        except RuntimeError as e:
            return str(e).split("\n")[0].rstrip(".")
        return DT.index(r.dtype), raw_bits(r)


def cases():
    """the table: each op and overload on each dtype; the forms and the Scalars that raise in
    torch (each raise costs torch milliseconds) on fewer value sets"""
    out = []
    add = out.append
    all_dt = FLOATS + INTS
    for d in all_dt:
        for i, vs in enumerate(value_sets(d)):
            first = i == 0
            for op in UNARY:
                if op == NOT and d in FLOATS and not first:
                    continue
                add(Case(op, ALLOC, d, vs))
                add(Case(op, OUT_SELF, d, vs))
                add(Case(op, OUT_NEW, d, vs, outd=F32))
                if first:
                    add(Case(op, OUT_NEW, d, vs, outd=BF16 if op != NOT else I64))
                    if op in (SIN, ABS):
                        add(Case(op, OUT_NEW, d, vs, outd=I32))
            for s in (1, 1.0, 0.0, 0, 2, 3, -1, -2, 0.5, -0.5, -1.0, 2.0, 3.0, -2.0, 1.7, 7,
                      300, 2.5, NAN, INF, -INF, 1e40, -3, 62):
                if first or d in (F32, I64) or not (isinstance(s, int) and s < 0 or s in
                                                    (300, 1e40, NAN)):
                    add(Case(POW, ALLOC, d, vs, s1=s))
                add(Case(POW_S, ALLOC, d, vs, s1=s))
            add(Case(POW, OUT_NEW, d, vs, outd=F32, s1=2))
            add(Case(POW, OUT_SELF, d, vs, s1=2.5 if first else 2))
            add(Case(POW_S, OUT_SELF, d, vs, s1=2))
            if first:   # (a random differential's finds: the order of ATen's checks)
                for outd in (I32, U8, F32):   # a base of 1 fills any out with ones
                    add(Case(POW_S, OUT_NEW, d, vs, outd=outd, s1=1))
                    add(Case(POW_S, OUT_NEW, d, vs, outd=outd, s1=1.0))
                if d in INTS:   # a wrong out's dtype is said before an exponent's overflow
                    add(Case(POW, OUT_NEW, d, vs, outd=F32, s1=2**62 + 1))
                    add(Case(POW, OUT_NEW, d, vs, outd=I64 if d != I64 else I32, s1=300))
                    for op in (AND, OR):   # a float Scalar into an integral out: the cast
                        add(Case(op, OUT_SELF, d, vs, s1=1.5))
            for s in (1, 2, -3, 0, 300, 2**40, -2**63, 2.5, -0.1, 0.1, 1.7, 0.0, -0.0, NAN,
                      INF, 1e40):
                for op in (ADD, SUB, MUL, DIV, AND, OR):
                    bitwise = op in (AND, OR)
                    if bitwise and (d in FLOATS or not isinstance(s, int)) and not (
                            first and s in (1, 2.5)):
                        continue
                    add(Case(op, ALLOC, d, vs, s1=s, s2=1 if op in (ADD, SUB) else None))
            if first:   # a Scalar form into an out of another float dtype: computed as the
                for od in FLOATS:   # Tensor form, NaN bits too (a reviewer's find)
                    if od != d:
                        for op, s in ((ADD, 2.5), (MUL, NAN), (DIV, 3)):
                            add(Case(op, OUT_NEW, d, vs, outd=od, s1=s,
                                     s2=1 if op == ADD else None))
            for s2 in (2, -1, 2.5, 1.7, 300, -2**63, NAN, -NAN):
                if first or d in FLOATS or isinstance(s2, int) and s2 != 300:
                    add(Case(ADD, ALLOC, d, vs, s1=3, s2=s2))
                    add(Case(SUB, ALLOC, d, vs, s1=1.5 if d in FLOATS else 2, s2=s2))
            for lo, hi in ((-1, 2), (0.5, 2.5), (2, 1), (NAN, 1), (1, NAN), (-1, 300),
                           (-1e40, 1e40), (-INF, INF), (0, 0), (-2**63, 2**63 - 1)):
                if first or d in (F32, I64) or (lo, hi) in ((-1, 2), (0.5, 2.5), (2, 1)):
                    add(Case(CLAMP, ALLOC, d, vs, s1=lo, s2=hi))
            add(Case(CLAMP, OUT_SELF, d, vs, s1=0.5 if first else 0, s2=2))
            add(Case(CLAMP, OUT_NEW, d, vs, outd=F32, s1=0, s2=2))
        for s in (0, 1, -1, 2.5, 127, 128, -129, 255, 256, 300, -300, 70000, 2**31,
                  2**53 + 1, 1e6, 1e40, NAN, INF, -INF, 65504.0, 65520.0, -0.0, 1e-40):
            add(Case(FULL, ALLOC, None, [0] * 3, outd=d, s1=s))
            add(Case(FILL, ALLOC, d, value_sets(d)[0][:3], s1=s))
    # two tensors: every pair of dtypes; each form where self and other share a dtype
    for d in all_dt:
        for e in all_dt:
            for i, vs in enumerate(value_sets(d)):
                ws = value_sets(e)[(i + 1) % len(value_sets(e))]
                for op in (ADD, SUB, MUL, DIV, AND, OR, POW_T):
                    s2 = 1 if op in (ADD, SUB) else None
                    if op in (AND, OR) and (d in FLOATS or e in FLOATS) and (i or d != e):
                        continue
                    add(Case(op, ALLOC, d, vs, e, ws, s2=s2))
                    if i == 0 and (d == e or op not in (AND, OR) and F32 in (d, e) or
                                   (d, e) in ((U8, I8), (I32, I64), (BF16, F16))):
                        add(Case(op, OUT_SELF, d, vs, e, ws, s2=s2))
                        add(Case(op, OUT_OTHER, d, vs, e, ws, s2=s2))
                    if i == 0 and d == e:
                        for od in all_dt:
                            add(Case(op, OUT_NEW, d, vs, e, ws, outd=od, s2=s2))
                    elif i == 0 and (F32 in (d, e) or (d, e) in ((U8, I8), (I32, I64))):
                        add(Case(op, OUT_NEW, d, vs, e, ws, outd=F32, s2=s2))
                if d == e:
                    for s2 in (2, -1, 2.5, 1.7, 300, NAN, -NAN):
                        if d in FLOATS or isinstance(s2, int) or i == 0:
                            add(Case(ADD, ALLOC, d, vs, e, ws, s2=s2))
                            add(Case(SUB, ALLOC, d, vs, e, ws, s2=s2))
    return out


def encode(cs):
    spec, data = [], []
    for c in cs:
        n = len(c.sv)
        self_at = len(data)
        if c.sd is not None:
            data += raw_bits(tensor(c.sd, c.sv))
        other_at = len(data)
        if c.od is not None:
            data += raw_bits(tensor(c.od, c.ov))
        k1, b1 = scal(c.s1)
        k2, b2 = scal(c.s2)
        spec.append([c.op, c.form, c.sd if c.sd is not None else 0,
                     c.od if c.od is not None else -1, c.outd if c.outd is not None else 0,
                     n, self_at, other_at, k1, b1, k2, b2])
    data = [v - (1 << 64) if v >= 1 << 63 else v for v in data] or [0]
    return np.array(spec, dtype=np.int64), np.array(data, dtype=np.int64)


def ordered(bits, nb):
    """float bits to an integer order, for ulp distances"""
    sign = 1 << (nb - 1)
    return -(bits & (sign - 1)) if bits & sign else bits


def is_nan(bits, d):
    nb, exp, man = {F32: (32, 0xff, 23), BF16: (16, 0xff, 7), F16: (16, 0x1f, 10)}[d]
    return (bits >> man) & exp == exp and bits & ((1 << man) - 1)


def same(c, want, got_d, got):
    wd, wb = want
    if wd != got_d or len(wb) != len(got):
        return False
    if wd not in FLOATS:
        return wb == got
    nb = 32 if wd == F32 else 16
    tol = 1 if c.op in TRANSCENDENTAL and not SLEEF_AVX2 else 0
    for x, y in zip(wb, got):
        if is_nan(x, wd) or is_nan(y, wd):
            if not (is_nan(x, wd) and is_nan(y, wd)):
                return False
            # a NaN's bits say which of ATen's loops made it (tlkernel.c): here, the scalar
            # one (a case has at most 8 elements) or Sleef's, both followed bit for bit
            if x != y:
                return False
        elif abs(ordered(x, nb) - ordered(y, nb)) > tol:
            return False
    return True


def cxx_name(c):
    """the C++ call of a case, as the device's message names it"""
    if c.op == FILL:
        return "fill_("
    name = {POW_T: "pow", POW_S: "pow"}.get(c.op, NAMES[c.op])
    return "torch::%s%s(" % (name, "_out" if c.form != ALLOC else "")


def c_name(c):
    name = NAMES[c.op] if c.op != FILL else "fill_"
    if c.op in (ADD, SUB, MUL, DIV, AND, OR) and c.od is None:
        name += "_s"
    return "nt_%s%s(" % (name, "_out" if c.form != ALLOC and c.op not in (FILL, FULL) else "")


def run(neuronop, lib, tag, cs):
    spec, data = encode(cs)
    d = os.path.join(os.path.dirname(lib), "run-" + tag)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "spec.npy"), spec)
    np.save(os.path.join(d, "data.npy"), data)
    p = subprocess.run([neuronop, "run", lib, "cases", "spec.npy", "data.npy", "-o", "out.npy"],
                       cwd=d, capture_output=True, text=True)
    out = np.load(os.path.join(d, "out.npy")) if p.returncode == 0 else None
    return p, out


def compare(neuronop, lib, surface, name_of, good, bad, differ):
    """runs good through lib in one process and a representative of each kind of refusal in
    bad in one each; adds what differs to differ"""
    tag = "cxx" if surface == "C++" else "c"
    p, out = run(neuronop, lib, tag, [c for c, _ in good])
    if out is None:
        differ.setdefault("table", []).append("%s: the case table did not run: %s" % (
            surface, p.stderr.strip()[-2000:]))
        return
    for (c, w), row in zip(good, out):
        n = int(row[1])
        got = [int(v) & 0xffffffffffffffff for v in row[2:2 + n]]
        if int(row[0]) not in FLOATS:   # back to the dtype's width, as raw_bits has it
            nb = torch.iinfo(DT[int(row[0])]).bits
            got = [v & ((1 << nb) - 1) for v in got]
        if not same(c, w, int(row[0]), got):
            differ.setdefault(NAMES[c.op], []).append("%s %s: torch %s %s, neuronop %s %s" % (
                surface, c, DT[w[0]], w[1], DT[int(row[0])], got))

    # where torch raises: one run each (the core stops at the first), a few at a time;
    # one per op and kind of reason unless DIFF_EVERY_RAISE is set
    seen, picked = set(), []
    for c, reason in bad:
        key = (c.op, reason[:24]) if not os.environ.get("DIFF_EVERY_RAISE") else c
        if key not in seen:
            seen.add(key)
            picked.append((c, reason))
    if surface == "C++" and not os.environ.get("DIFF_EVERY_RAISE"):
        picked = picked[::3]

    def refused(cw):
        c, reason = cw
        p, _ = run(neuronop, lib, "%s-e%d" % (tag, id(c)), [c])
        # torch's reasons follow the call with its operands; the device's own rules, its name
        name = name_of(c) if reason != DEVICE_RULE else name_of(c)[:-1]
        ok = p.returncode == 1 and ("core 0: error: " + name) in p.stderr and (
            (": " + reason) in p.stderr if reason != DEVICE_RULE else
            "bitwise ops take integral tensors only" in p.stderr or
            "bitwise ops write integral tensors only" in p.stderr)
        return c, reason, ok, p
    with ThreadPoolExecutor(max_workers=4) as ex:
        for c, reason, ok, p in ex.map(refused, picked):
            if not ok:
                differ.setdefault(NAMES[c.op], []).append(
                    "%s %s: torch raises '%s', neuronop exit %d: %s" % (
                        surface, c, reason, p.returncode, p.stderr.strip()[:300]))
    return len(picked)


def main():
    neuronop, libdir = sys.argv[1], sys.argv[2]
    count_only = "--count" in sys.argv
    b = subprocess.run([neuronop, "build", libdir], capture_output=True, text=True)
    if b.returncode:
        print("Bail out! build of %s failed: %s" % (libdir, b.stderr))
        return 1
    lib = os.path.abspath(os.path.join(libdir, "build", "libtdiff.so"))
    cs = cases()
    good, bad = [], []
    raised = {}   # whether torch raises depends on dtypes and Scalars, never on tensor values
    for c in cs:
        key = (c.op, c.form, c.sd, c.od, c.outd, repr(c.s1), repr(c.s2))
        w = DEVICE_RULE if c.device_refuses() else raised.get(key) or c.torch()
        if isinstance(w, str):
            raised[key] = w
        (bad if isinstance(w, str) else good).append((c, w))
    differ = {}   # op name -> list of messages
    libs = [("C", lib, c_name, good, bad)]
    if "--no-cxx" not in sys.argv:
        # its extra_include_paths: [..] shares table.h with the C library: a folder outside
        # its own, which only the command line may let a build read
        b = subprocess.run([neuronop, "build", "--library-dir", libdir,
                            os.path.join(libdir, "cxx")], capture_output=True,
                           text=True)
        if b.returncode:
            print("Bail out! build of %s/cxx failed: %s" % (libdir, b.stderr))
            return 1
        libs.append(("C++", os.path.abspath(os.path.join(libdir, "cxx", "build",
                                                         "libtdiffcxx.so")),
                     cxx_name, good[::4], bad))
    for surface, path, name_of, table, raising in libs:
        compare(neuronop, path, surface, name_of, table, raising, differ)
    total = sum(len(v) for v in differ.values())
    if count_only:
        print("%d cases (%d where torch raises), %d differ" % (len(cs), len(bad), total))
        for k, v in sorted(differ.items()):
            print("# %s: %d" % (k, len(v)))
            for m in v[:int(os.environ.get("DIFF_SHOW", "3"))]:
                print("#   " + m)
        return 0
    print("1..%d" % (len(NAMES) + 1))
    v = differ.get("table", [])
    print("%s 1 - the case table runs on the C and the C++ surface" % ("not ok" if v else "ok"))
    for m in v:
        print("# " + m)
    for i, name in enumerate(NAMES, 1):
        v = differ.get(name, [])
        n = sum(1 for c in cs if c.op == i - 1)
        print("%s %d - %s: %d cases as torch 1.13 computes them" % ("not ok" if v else "ok",
                                                                     i + 1, name, n))
        for m in v[:10]:
            print("# " + m)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
