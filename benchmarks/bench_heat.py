"""Benchmark: heat-kernel attention at N = 50,000 on S^2, sparse vs streamed.

Run from the repository root::

    python benchmarks/bench_heat.py --quick        # N = 10000
    python benchmarks/bench_heat.py                # N = 50000, eps = 1e-3 (the scale of the DRIFT checks)

For each path of :func:`spectral.heat_sparse.heat_markov` a fresh child process builds the
operator and applies it to a test function; the child reports build and apply times (median of
``--repeats`` applies), stored entries, the truncation bound and its peak resident memory (``VmHWM``).

* ``sparse``: cutoff ``6 sqrt(eps)`` (cKDTree, CSR); reports two rigorous truncation bounds on
  ``|S f - S_trunc f| / |f|_inf`` (and, divided by eps, on the generator): the count bound of
  :func:`spectral.heat_sparse.truncation_bound` and the shell bound of
  :func:`spectral.heat_sparse.shell_truncation_bound`.
* ``streamed``: :class:`spectral.KernelOperator` blocks (nothing stored); every apply
  recomputes all ``N^2`` kernel entries.
* baseline: ``cKDTree.sparse_distance_matrix`` + ``exp`` + CSR row normalisation written out here.
* dense: only the byte estimate (``N^2`` float64 = 18.6 GiB at N = 50000), never allocated.

Timings on a shared machine are noisy; the load average is printed first. Plain script, never run
by pytest.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
import statistics
import time

import numpy as np
from _common import sphere_points, vmhwm_mb, write_json  # noqa: E402 - benchmarks/ is on sys.path when run as a script


def _child(path, n, eps, repeats, seed, queue):
    from spectral import heat_markov

    x = sphere_points(n, np.random.default_rng(seed))
    f = x[:, 2] * x[:, 0]
    out = {"path": path, "n": n, "eps": eps}
    t0 = time.perf_counter()
    if path == "baseline":
        import scipy.sparse as sp
        from scipy.spatial import cKDTree

        tree = cKDTree(x)
        coo = tree.sparse_distance_matrix(tree, 6 * math.sqrt(eps), output_type="coo_matrix")
        w = sp.csr_array((np.exp(-coo.data**2 / (2 * eps)), (coo.row, coo.col)), shape=(n, n))
        deg = np.asarray(w.sum(axis=1)).ravel()

        def apply(v):
            return (w @ v) / deg

        out["nnz"] = int(w.nnz)
    else:
        op = heat_markov(x, eps=eps, method=path, cutoff=6.0)
        apply = op.apply
        out["nnz"] = op.nnz
        out["truncation_bound"] = op.truncation_bound
        out["generator_truncation_bound"] = op.truncation_bound / eps
        if path == "sparse":
            from spectral.heat_sparse import shell_truncation_bound

            t_b = time.perf_counter()
            out["shell_bound"] = shell_truncation_bound(x, op.degrees, eps=eps, cutoff=6.0)
            out["shell_bound_s"] = time.perf_counter() - t_b
    out["build_s"] = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t1 = time.perf_counter()
        g = apply(f)
        times.append(time.perf_counter() - t1)
    out["apply_s"] = statistics.median(times)
    out["checksum"] = float(np.sum(g))
    out["peak_rss_mb"] = vmhwm_mb()
    queue.put(out)


def _run_child(path, n, eps, repeats, seed):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(path, n, eps, repeats, seed, q))
    p.start()
    res = q.get()
    p.join()
    return res


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 10000 instead of 50000")
    parser.add_argument("--n", type=int, default=None, help="number of points on S^2")
    parser.add_argument("--eps", type=float, default=1e-3, help="heat-kernel bandwidth")
    parser.add_argument("--repeats", type=int, default=3, help="applies per path (median)")
    parser.add_argument("--paths", default="sparse,baseline,streamed", help="comma-separated paths")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write the rows as JSON")
    ns = parser.parse_args(argv)
    n = ns.n or (10000 if ns.quick else 50000)
    from spectral import dense_bytes

    print(f"load average: {os.getloadavg()}; N = {n}, eps = {ns.eps:g}, dense float64 would need "
          f"{dense_bytes(n) / 2**30:.1f} GiB (not allocated)")
    rows = []
    for path in ns.paths.split(","):
        res = _run_child(path, n, ns.eps, ns.repeats, ns.seed)
        rows.append(res)
        extra = ""
        if "shell_bound" in res:
            extra = (f", truncation bound {res['truncation_bound']:.2e} (generator {res['generator_truncation_bound']:.2e});"
                     f" shell bound {res['shell_bound']:.2e} (generator {res['shell_bound'] / ns.eps:.2e}, "
                     f"{res['shell_bound_s']:.1f} s)")
        print(f"{path:9s} build {res['build_s']:7.2f} s  apply {res['apply_s']:7.2f} s  nnz {res['nnz']:.3e}  "
              f"peak RSS {res['peak_rss_mb']:7.0f} MB{extra}")
    base = {r["path"]: r for r in rows}
    if "sparse" in base and "baseline" in base:
        s, b = base["sparse"], base["baseline"]
        print(f"sparse / baseline: build {s['build_s'] / b['build_s']:.2f}x, apply {s['apply_s'] / b['apply_s']:.2f}x, "
              f"checksum difference {abs(s['checksum'] - b['checksum']):.2e}")
    write_json(ns.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
