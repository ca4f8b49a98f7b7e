"""Benchmark: time and peak memory of Neural Attention scores against dot-product logits (NEURAL-7).

Run from the repository root::

    python benchmarks/bench_neural.py --quick          # n in {256, 512}
    python benchmarks/bench_neural.py                  # n in {256, 512, 1024, 2048}
    python benchmarks/bench_neural.py --json out.json

For each n it times, on one BLAS thread and interleaved (so that load on a shared machine hits all
alike), the dot-product logits ``Q K^T`` (d = 64, the baseline) and ``spectral.neural_scores`` in its
two forms on down-projected inputs (d' in {2, 16}, h = 8 hidden units, ReLU):

* ``concat``: the paper's Algorithm 1, which materialises C of shape (n, n, 2 d');
* ``factored``: ``W_1 q + W_2 k`` (NEURAL-3), without C.

Peak memory is the allocation peak traced by ``tracemalloc`` (NumPy reports its buffers to it), so it
does not depend on load. Every number is printed as a ratio to the dot-product baseline of the same
run. Section 3.2 of the paper says both are O(n^2) in time and Neural Attention has "a much worse
memory requirement due to the large intermediate tensor C": the time ratios stay flat in n (same
order), and the concat/factored memory ratio shows how much of the overhead C is. The verify check
``neural_cost`` asserts the memory structure (C only in the concatenated form); timings are only
reported here. This is a plain script, never run by pytest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from spectral import ScoreMLP, neural_scores  # noqa: E402
from _common import write_json  # noqa: E402 - benchmarks/ is on sys.path when run as a script


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench(n: int, *, d: int = 64, d_primes=(2, 16), hidden: int = 8, repeats: int = 5, seed: int = 0) -> dict:
    rng = np.random.default_rng([seed, n])
    Q = rng.standard_normal((n, d))
    K = rng.standard_normal((n, d))
    cases = {"dp": lambda: Q @ K.T}
    for dp in d_primes:
        q = rng.standard_normal((n, dp))
        k = rng.standard_normal((n, dp))
        mlp = ScoreMLP(dp, dp, hidden, rng=rng, activation="relu")
        for form in ("concat", "factored"):
            cases[f"{form}_d{dp}"] = (lambda q=q, k=k, mlp=mlp, form=form: neural_scores(q, k, mlp, form=form))
    for fn in cases.values():  # warm-up
        fn()
    times = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            times[name].append(_time(fn))
    out = {"n": n, "hidden": hidden, "d": d}
    base_t = statistics.median(times["dp"])
    base_m = _peak(cases["dp"])
    for name, fn in cases.items():
        t = statistics.median(times[name])
        m = _peak(fn)
        out[name] = {"seconds": t, "peak_bytes": m, "time_ratio": t / base_t, "memory_ratio": m / base_m}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="n in {256, 512} only")
    parser.add_argument("--sizes", default=None, help="comma-separated n (default 256,512,1024,2048)")
    parser.add_argument("--hidden", type=int, default=8, help="hidden width h (default 8)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per case (median; default 5)")
    parser.add_argument("--json", default=None, help="write the results to this file")
    ns = parser.parse_args(argv)
    sizes = [256, 512] if ns.quick else [256, 512, 1024, 2048]
    if ns.sizes:
        sizes = [int(s) for s in ns.sizes.split(",")]
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        threadpool_limits = None
    print(f"load average: {os.getloadavg()}")
    print(f"{'n':>6} {'case':<13} {'time [ms]':>10} {'x dp':>7} {'peak [MiB]':>11} {'x dp':>7}")
    results = []
    for n in sizes:
        if threadpool_limits is not None:
            with threadpool_limits(limits=1, user_api="blas"):
                res = bench(n, hidden=ns.hidden, repeats=ns.repeats)
        else:
            res = bench(n, hidden=ns.hidden, repeats=ns.repeats)
        results.append(res)
        for name, row in res.items():
            if not isinstance(row, dict):
                continue
            print(f"{n:>6} {name:<13} {1e3 * row['seconds']:>10.2f} {row['time_ratio']:>7.1f} "
                  f"{row['peak_bytes'] / 2**20:>11.2f} {row['memory_ratio']:>7.1f}")
    write_json(ns.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
