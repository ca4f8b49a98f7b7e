"""Benchmark: the toolkit's squared distances (coordinate by coordinate) against the Gram expansion.

Run from the repository root::

    python benchmarks/bench_distances.py            # n = 2000, d in {2, 3, 8, 32, 64}, one BLAS thread
    python benchmarks/bench_distances.py --n 4000

:func:`manifolds.points.pairwise_sq_distance` sums squared coordinate differences; the baseline is
``|x|^2 + |y|^2 - 2 x.y`` (one matrix product), written out here. For each ``(n, d)`` the script
prints the best of ``--repeats`` timings of both and their ratio (below 1: the toolkit is faster),
and the relative error of both on points 1e-9 apart at norm 1e3 against exact rational arithmetic.
Timings on a shared machine are noisy; the ratio is the number to compare. Plain script, never run
by pytest.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import numpy as np


def gram(x, y):
    d2 = (x * x).sum(axis=1)[:, None] + (y * y).sum(axis=1)[None, :] - 2.0 * (x @ y.T)
    return np.clip(d2, 0.0, None)


def best(f, *args, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def accuracy(f, rng):
    base = rng.standard_normal(3)
    x = 1e3 * base / np.linalg.norm(base) + 1e-9 * rng.standard_normal((5, 3))
    exact = np.array([[float(sum((Fraction(a) - Fraction(b)) ** 2 for a, b in zip(p, q))) for q in x] for p in x])
    off = ~np.eye(5, dtype=bool)
    return float(np.max(np.abs(f(x, x)[off] - exact[off]) / exact[off]))


def main(argv=None):
    from threadpoolctl import threadpool_limits

    from manifolds.points import pairwise_sq_distance

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="points per set (default 2000)")
    parser.add_argument("--dims", default="2,3,8,32,64", help="comma-separated dimensions")
    parser.add_argument("--repeats", type=int, default=5, help="timings per case; the best is kept")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    with threadpool_limits(limits=1, user_api="blas"):
        print(f"{'n':>6} {'d':>4} {'toolkit ms':>11} {'gram ms':>9} {'ratio':>6}")
        for d in (int(v) for v in args.dims.split(",")):
            x = rng.standard_normal((args.n, d))
            t_new = best(pairwise_sq_distance, x, x, repeats=args.repeats)
            t_gram = best(gram, x, x, repeats=args.repeats)
            print(f"{args.n:>6} {d:>4} {1e3 * t_new:>11.1f} {1e3 * t_gram:>9.1f} {t_new / t_gram:>6.2f}")
    print(f"relative error, points 1e-9 apart at norm 1e3: toolkit {accuracy(pairwise_sq_distance, rng):.2g}, "
          f"gram {accuracy(gram, rng):.2g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
