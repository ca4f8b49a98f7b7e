"""Benchmark: Fast Multipole Attention (spectral.fma_attention) against dense softmax attention.

Run from the repository root::

    python benchmarks/bench_fma.py                 # n = 2^14 comparison, fit over n = 2^10 .. 2^16, memory 2^14 .. 2^16
    python benchmarks/bench_fma.py --quick         # n = 2^12 comparison, fit over 2^10 .. 2^14, memory 2^12 .. 2^14
    python benchmarks/bench_fma.py --json out.json
    PYTHONPATH=/path/to/torch python benchmarks/bench_fma.py --memory-only   # with PyTorch's SDPA as a baseline

Three parts, all in one run:

1. **FMA vs dense at the same n** (default n = 2^14, r = 64, d = 64, float64, random Gaussian
   q, k, v): wall time (median of ``--repeats`` runs, FMA and dense alternating so that load from
   other jobs hits both) and peak memory allocated during the call (``tracemalloc``, which sees
   NumPy's buffers; the inputs are allocated before tracing starts). The baseline is written out here:
   ``S = q k^T / sqrt(d)``, row max subtracted in place, ``exp`` in place, rows normalised in place,
   ``S @ v``: one n x n float64 buffer. Targets: FMA at least 5x faster and 5x smaller.
2. **Growth**: FMA CPU time (``time.process_time``, median; wall time reported too) for n = 2^a .. 2^b;
   least-squares fit of ``log t = log c + beta log n`` and of
   ``t = c n log2 n`` (the ratio ``t / (n log2 n)`` should stay flat; for ``n log n`` cost the local
   exponent beta is ``1 + 1 / ln n``, about 1.1 here). The number of stored scores
   (``FMAGroups.stored_scores``) is reported next to the times.
3. **Extra memory against memory-lean exact attention** (``--memory-sizes``, default n = 2^14 .. 2^16):
   each call runs alone in a fresh child process; its extra memory is the child's peak resident set
   (``VmHWM``, reset through ``/proc/self/clear_refs`` once the inputs exist and every library is
   warmed up) less the resident set before the call, so buffers of every allocator count (PyTorch's
   are invisible to tracemalloc). Baselines: PyTorch's CPU ``scaled_dot_product_attention`` (one
   thread, float64; used when ``import torch`` works, it is not a dependency of the toolkit) and an
   exact softmax attention in bare NumPy with the same blocked discipline as PyTorch's CPU kernel
   (blocks of 256 queries x 512 keys, running max and sum, the output written block by block).
   Target: FMA's extra memory within 2x of PyTorch's (of the NumPy blocked baseline without PyTorch).

BLAS runs on ``--threads`` threads (default 1; the machine is shared). Plain script, never run by
pytest. Timings on a shared machine are noisy; the load average is printed first. See
``benchmarks/README.md`` for measured numbers.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
import tracemalloc

import numpy as np

# the checkout this script lives in, not an installed copy of the toolkit
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def dense_attention(q, k, v):
    """Dense softmax attention with one n x n buffer (eq. 2 of the FMA paper)."""
    s = q @ k.T
    s *= 1.0 / math.sqrt(q.shape[1])
    s -= s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=1, keepdims=True)
    return s @ v


def blocked_attention(q, k, v, block_q=256, block_k=512):
    """Exact softmax attention by blocks of queries and keys with a running max and sum (the memory
    discipline of PyTorch's CPU flash attention): the extra memory is the output and one score block."""
    n, d = q.shape
    out = np.empty((n, v.shape[1]))
    scale = 1.0 / math.sqrt(d)
    for i in range(0, n, block_q):
        qb = q[i:i + block_q] * scale
        m = np.full((qb.shape[0], 1), -np.inf)
        z = np.zeros((qb.shape[0], 1))
        acc = np.zeros((qb.shape[0], v.shape[1]))
        for j in range(0, n, block_k):
            s = qb @ k[j:j + block_k].T
            m_new = np.maximum(m, s.max(axis=1, keepdims=True))
            s -= m_new
            np.exp(s, out=s)
            shrink = np.exp(m - m_new)
            z *= shrink
            z += s.sum(axis=1, keepdims=True)
            acc *= shrink
            acc += s @ v[j:j + block_k]
            m = m_new
        out[i:i + block_q] = acc / z
    return out


def _time(fn, *args, **kwargs):
    t0 = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - t0


def _cpu(fn, *args, **kwargs):
    """CPU seconds of this process (one BLAS thread: less sensitive to other jobs than wall time)."""
    t0 = time.process_time()
    fn(*args, **kwargs)
    return time.process_time() - t0


def _peak_bytes(fn, *args, **kwargs):
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn(*args, **kwargs)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def compare(n, r, d, repeats, seed):
    from spectral import fma_attention

    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, n, d))
    fma = lambda: fma_attention(q, k, v, r=r)  # noqa: E731
    joint = lambda: fma_attention(q, k, v, r=r, normalisation="joint")  # noqa: E731
    dense = lambda: dense_attention(q, k, v)  # noqa: E731
    for f in (fma, joint, dense):  # warm-up
        f()
    times = {"fma": [], "fma_joint": [], "dense": []}
    for _ in range(repeats):
        times["fma"].append(_time(fma))
        times["dense"].append(_time(dense))
        times["fma_joint"].append(_time(joint))
    med = {key: statistics.median(val) for key, val in times.items()}
    peak = {"fma": _peak_bytes(fma), "fma_joint": _peak_bytes(joint), "dense": _peak_bytes(dense)}
    return {"n": n, "r": r, "d": d, "repeats": repeats, "time_s": med, "peak_bytes": peak,
            "time_ratio_dense_over_fma": med["dense"] / med["fma"],
            "time_ratio_dense_over_fma_joint": med["dense"] / med["fma_joint"],
            "memory_ratio_dense_over_fma": peak["dense"] / peak["fma"],
            "memory_ratio_dense_over_fma_joint": peak["dense"] / peak["fma_joint"]}


def growth(exponents, r, d, repeats, seed):
    from spectral import fma_attention, fma_groups

    rows = []
    for e in exponents:
        n = 2**e
        rng = np.random.default_rng(seed + e)
        q, k, v = rng.standard_normal((3, n, d))
        fma_attention(q, k, v, r=r)  # warm-up
        wall = statistics.median(_time(fma_attention, q, k, v, r=r) for _ in range(repeats))
        t = statistics.median(_cpu(fma_attention, q, k, v, r=r) for _ in range(repeats))
        rows.append({"n": n, "time_s": t, "wall_s": wall, "scores": fma_groups(n, r=r).stored_scores(),
                     "time_over_nlog2n_ns": 1e9 * t / (n * e)})
    n = np.array([row["n"] for row in rows], dtype=float)
    t = np.array([row["time_s"] for row in rows])
    beta, logc = np.polyfit(np.log(n), np.log(t), 1)
    ratio = t / (n * np.log2(n))
    nlogn = n * np.log2(n)
    c = float(np.sum(t * nlogn) / np.sum(nlogn**2))  # least squares t = c n log2 n
    rel_resid = float(np.max(np.abs(t - c * nlogn) / t))
    return {"rows": rows, "beta": float(beta), "nlogn_constant_ns": 1e9 * c,
            "nlogn_max_relative_residual": rel_resid, "ratio_spread": float(ratio.max() / ratio.min()),
            "local_exponent_of_nlogn": [1 + 1 / math.log(x) for x in (n.min(), n.max())]}


_CHILD = r"""
import math, os, sys, time
import numpy as np
sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))
from threadpoolctl import threadpool_limits

def status():
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, val = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(val.split()[0]) * 1024
    return out

method, n, d, r, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
threadpool_limits(limits=1, user_api="blas")
q, k, v = np.random.default_rng(seed).standard_normal((3, n, d))
if method == "torch":
    import torch
    torch.set_num_threads(1)
    tq, tk, tv = (torch.from_numpy(x).reshape(1, 1, n, d) for x in (q, k, v))
    call = lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)
    small = [torch.from_numpy(x[:512].copy()).reshape(1, 1, 512, d) for x in (q, k, v)]
    torch.nn.functional.scaled_dot_product_attention(*small)
elif method == "blocked":
    from bench_fma import blocked_attention
    call = lambda: blocked_attention(q, k, v)
    blocked_attention(q[:512], k[:512], v[:512])
else:
    from spectral import fma_attention
    call = lambda: fma_attention(q, k, v, r=r, normalisation=method)
    fma_attention(q[:4 * r], k[:4 * r], v[:4 * r], r=r, normalisation=method)
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")  # the peak resident set starts again from the current one
before = status()["VmRSS"]
t0 = time.perf_counter()
out = call()
wall = time.perf_counter() - t0
print(status()["VmHWM"] - before, wall)
"""


def child_peak(method, n, d, r, seed):
    """(extra peak resident bytes, wall seconds) of one call in a fresh process, or None if it failed."""
    proc = subprocess.run([sys.executable, "-c", _CHILD, method, str(n), str(d), str(r), str(seed)],
                          capture_output=True, text=True, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
    extra, wall = proc.stdout.split()
    return (int(extra), float(wall)), ""


def memory(exponents, r, d, seed, log=print):
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    methods = ["per-level", "joint", "blocked"] + (["torch"] if have_torch else [])
    rows = []
    for e in exponents:
        n = 2**e
        row = {"n": n}
        for method in methods:
            got, why = child_peak(method, n, d, r, seed)
            row[method] = None if got is None else {"extra_bytes": got[0], "wall_s": got[1]}
            if got is None:
                log(f"  n = {n} {method}: failed ({why})")
        base = "torch" if row.get("torch") else "blocked"
        if row.get(base) and row.get("per-level"):
            row["baseline"] = base
            row["ratio_per_level"] = row["per-level"]["extra_bytes"] / row[base]["extra_bytes"]
            if row.get("joint"):
                row["ratio_joint"] = row["joint"]["extra_bytes"] / row[base]["extra_bytes"]
        rows.append(row)
        text = "  ".join(f"{m} {row[m]['extra_bytes'] / 2**20:7.1f} MiB ({row[m]['wall_s']:.2f} s)"
                         for m in methods if row.get(m))
        log(f"  n = {n:>6}: {text}")
        if "baseline" in row:
            log(f"           FMA / {row['baseline']}: per-level {row['ratio_per_level']:.2f}, joint "
                f"{row.get('ratio_joint', float('nan')):.2f} (target <= 2)")
    return {"rows": rows, "torch": have_torch, "measure": "peak resident set of a child process (VmHWM - VmRSS)"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2**14, help="length of the FMA vs dense comparison")
    parser.add_argument("--r", type=int, default=64, help="FMA base cell")
    parser.add_argument("--d", type=int, default=64, help="query/key/value dimension")
    parser.add_argument("--fit", default="10,16", help="exponent range a,b of the growth fit (n = 2^a .. 2^b)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per point (median)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="n = 2^12 and a fit over 2^10 .. 2^14")
    parser.add_argument("--memory-sizes", default="14,16", help="exponent range a,b of the memory part")
    parser.add_argument("--memory-only", action="store_true", help="run the memory part only")
    parser.add_argument("--json", help="write the results to this file")
    ns = parser.parse_args(argv)
    if ns.quick:
        ns.n, ns.fit, ns.memory_sizes = 2**12, "10,14", "12,14"
    lo, hi = (int(x) for x in ns.fit.split(","))
    mlo, mhi = (int(x) for x in ns.memory_sizes.split(","))
    from threadpoolctl import threadpool_limits

    print(f"load average {os.getloadavg()}, BLAS threads {ns.threads}, numpy {np.__version__}")
    if ns.memory_only:
        print(f"extra memory, r = {ns.r}, d = {ns.d}, float64, one thread:")
        mem = memory(range(mlo, mhi + 1), ns.r, ns.d, ns.seed)
        if ns.json:
            with open(ns.json, "w") as fh:
                json.dump({"memory": mem, "load_average": os.getloadavg()}, fh, indent=1)
        return
    with threadpool_limits(limits=ns.threads, user_api="blas"):
        cmp_ = compare(ns.n, ns.r, ns.d, ns.repeats, ns.seed)
        print(f"n = {ns.n}, r = {ns.r}, d = {ns.d} (median of {ns.repeats}):")
        for key in ("fma", "fma_joint", "dense"):
            print(f"  {key:<10} {cmp_['time_s'][key]:8.3f} s   peak {cmp_['peak_bytes'][key] / 2**20:9.1f} MiB")
        print(f"  dense / fma:       time {cmp_['time_ratio_dense_over_fma']:.1f}x, "
              f"memory {cmp_['memory_ratio_dense_over_fma']:.1f}x (target >= 5x each)")
        print(f"  dense / fma joint: time {cmp_['time_ratio_dense_over_fma_joint']:.1f}x, "
              f"memory {cmp_['memory_ratio_dense_over_fma_joint']:.1f}x")
        gr = growth(range(lo, hi + 1), ns.r, ns.d, ns.repeats, ns.seed)
    print(f"growth, r = {ns.r}, d = {ns.d}:")
    for row in gr["rows"]:
        print(f"  n = {row['n']:>6}  cpu {row['time_s']:8.4f} s (wall {row['wall_s']:8.4f} s)  "
              f"{row['time_over_nlog2n_ns']:6.2f} ns per n log2 n  scores {row['scores']}")
    print(f"  fit t ~ n^beta: beta = {gr['beta']:.3f} (n log n has local exponent "
          f"{gr['local_exponent_of_nlogn'][0]:.3f} .. {gr['local_exponent_of_nlogn'][1]:.3f})")
    print(f"  fit t = c n log2 n: c = {gr['nlogn_constant_ns']:.2f} ns, max relative residual "
          f"{gr['nlogn_max_relative_residual']:.2f}, max/min of t/(n log2 n) = {gr['ratio_spread']:.2f}")
    print(f"extra memory, r = {ns.r}, d = {ns.d}, float64, one thread:")
    mem = memory(range(mlo, mhi + 1), ns.r, ns.d, ns.seed)
    if ns.json:
        with open(ns.json, "w") as fh:
            json.dump({"compare": cmp_, "growth": gr, "memory": mem, "load_average": os.getloadavg()}, fh, indent=1)


if __name__ == "__main__":
    main()
