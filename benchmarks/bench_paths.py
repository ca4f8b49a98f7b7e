"""Benchmark: all-pairs shortest paths with hop counts, toolkit vs scipy.sparse.csgraph and networkx.

Run from the repository root::

    python benchmarks/bench_paths.py                         # n = 1000, densities 0.01 .. 1, networkx on 50 sources
    python benchmarks/bench_paths.py --n 2000 --repeats 2    # a larger graph
    python benchmarks/bench_paths.py --nx-sources 0          # networkx on all n sources (minutes)
    python benchmarks/bench_paths.py --device gpu            # also min-plus on a CuPy copy (a device run)
    python benchmarks/bench_paths.py --no-min-plus           # skip the O(n^3) min-plus columns

Graphs: dot-product attention of n Gaussian tokens in R^8, ``A = N_R(exp(x_i . x_j / sqrt d))``,
with each row kept to its ``density (n - 1)`` largest scores and renormalised (density 1: the
complete graph of FNA Fig. 5c-e), edge weights ``1 / A_ij``. Every method produces the lengths and
the hop count of every shortest path, from ``A``.

* toolkit: :func:`graphs.shortest_paths` (``method="auto"``: Dijkstra or Floyd-Warshall by density
  and size, hop counts by pointer doubling);
* csgraph: ``scipy.sparse.csgraph.dijkstra`` on the CSR weights and ``floyd_warshall`` on the dense
  weights (graph built outside the timer, so validation, weights and graph building count against
  the toolkit only): the call with ``return_predecessors=True`` (lengths + predecessors, the same
  information as the toolkit but the hops: **the baseline of the target**), the call without
  predecessors (lengths only, informational), the call plus hop counts from its predecessors by
  :func:`graphs.hops_from_predecessors`, and the call plus hops walked naively (one gather per level);
  and, for information, the fastest call with predecessors given the dense ``n x n`` weights (``inf``:
  no edge), the input a user with an attention matrix has, which csgraph converts itself;
* min-plus: :func:`graphs.shortest_paths` with ``method="min-plus"`` (the blocked min-plus
  Floyd-Warshall of :func:`graphs.paths.min_plus_floyd_warshall`, written with the array namespace of
  its input: lengths, predecessors and hops, the same outputs as the toolkit) on the NumPy host, and
  with ``--device gpu`` on a CuPy copy of ``A`` (made outside the timer, synchronised inside it):
  the column a device run fills; its ratios are to the fastest csgraph call with predecessors plus
  ``hops_from_predecessors`` (the same information) measured in the same run on the host;
* networkx: ``all_pairs_dijkstra`` (lengths and paths, hops = path length - 1) on the complete
  graph (density 1), graph built outside the timer; with ``--nx-sources k`` the first k sources
  are timed and the time scaled by n / k (every source costs the same on a complete graph).

Timings are minima of ``--repeats`` runs with toolkit and baselines interleaved, one BLAS thread.
Targets: toolkit (lengths, predecessors and hops) within 1.2x of the fastest csgraph call that
returns lengths and predecessors, at every density, and at least 200x faster than networkx. Lengths are compared with csgraph (relative 4 sqrt(eps)) and
hops exactly; the sampled networkx rows too. A plain script, never run by pytest.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from graphs import hops_from_predecessors, shortest_paths, to_networkx  # noqa: E402
from spectral import dot_product_scores  # noqa: E402
from _common import write_json  # noqa: E402 - benchmarks/ is on sys.path when run as a script

DENSITIES = (0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)


def attention(x: np.ndarray, density: float) -> np.ndarray:
    """Row-stochastic attention keeping each row's ``density (n - 1)`` largest dot-product scores."""
    n, d = x.shape
    scores = np.asarray(dot_product_scores(x, temperature=math.sqrt(d)))
    np.fill_diagonal(scores, 0.0)
    keep = max(1, int(round(density * (n - 1))))
    threshold = -np.partition(-scores, keep - 1, axis=1)[:, keep - 1:keep]
    a = np.where(scores >= threshold, scores, 0.0)
    return a / a.sum(axis=1, keepdims=True)


def naive_hops(pred: np.ndarray) -> np.ndarray:
    """Hop counts by walking every predecessor pointer one level at a time (the baseline's hops)."""
    n = pred.shape[0]
    rows = np.arange(n)[:, None]
    hops = np.where(pred >= 0, 0, -1)
    cur = pred.astype(np.int64)
    live = cur >= 0
    while live.any():
        hops[live] += 1
        cur = np.where(live, pred[rows, np.maximum(cur, 0)], -1)
        live = cur >= 0
    np.fill_diagonal(hops, 0)
    return hops


def _min_time(fn, times: list):
    t0 = time.perf_counter()
    out = fn()
    times.append(time.perf_counter() - t0)
    return out


def _gpu_paths(A: np.ndarray):
    """(callable timing min-plus on a CuPy copy of A, the copy); None without CuPy and a device."""
    try:
        import cupy as cp
    except ImportError:
        return None
    Ad = cp.asarray(A)
    cp.cuda.Device().synchronize()

    def run():
        out = shortest_paths(Ad)
        cp.cuda.Device().synchronize()
        return out

    return run


def density_row(A: np.ndarray, repeats: int, *, min_plus: bool = True, device: str = "cpu") -> dict:
    from scipy import sparse
    from scipy.sparse.csgraph import dijkstra, floyd_warshall

    w = np.where(A > 0, 1.0 / np.where(A > 0, A, 1.0), np.inf)
    np.fill_diagonal(w, np.inf)
    missing = ~np.isfinite(w)
    present = ~missing
    graph = sparse.csr_array((w[present], np.nonzero(present)[1],
                              np.concatenate([[0], np.cumsum(present.sum(axis=1))])), shape=w.shape)
    masked = np.ma.masked_array(w, mask=missing)
    t = {"toolkit": [], "dijkstra": [], "floyd-warshall": [], "dijkstra lengths": [], "floyd-warshall lengths": [],
         "dijkstra+hops": [], "floyd-warshall+hops": [], "dijkstra+naive": [], "floyd-warshall+naive": [],
         "dijkstra dense": [], "min-plus": [], "min-plus gpu": []}
    gpu = _gpu_paths(A) if device == "gpu" else None
    if device == "gpu" and gpu is None:
        raise SystemExit("--device gpu needs CuPy and a CUDA device")
    if gpu is not None:
        gpu()  # warm-up: CuPy compiles its kernels on the first call
    mp = mg = None
    for _ in range(repeats):
        sp = _min_time(lambda: shortest_paths(A), t["toolkit"])
        ld, pd = _min_time(lambda: dijkstra(graph, directed=True, return_predecessors=True), t["dijkstra"])
        lf, pf = _min_time(lambda: floyd_warshall(masked, directed=True, return_predecessors=True), t["floyd-warshall"])
        _min_time(lambda: dijkstra(w, directed=True, return_predecessors=True), t["dijkstra dense"])
        _min_time(lambda: dijkstra(graph, directed=True), t["dijkstra lengths"])
        _min_time(lambda: floyd_warshall(masked, directed=True), t["floyd-warshall lengths"])
        for name, pred in (("dijkstra", pd), ("floyd-warshall", pf)):
            t0 = time.perf_counter()
            hops_from_predecessors(pred)
            t[f"{name}+hops"].append(t[name][-1] + time.perf_counter() - t0)
            t0 = time.perf_counter()
            hd = naive_hops(pred)
            t[f"{name}+naive"].append(t[name][-1] + time.perf_counter() - t0)
        if min_plus:
            mp = _min_time(lambda: shortest_paths(A, method="min-plus"), t["min-plus"])
        if gpu is not None:
            mg = _min_time(gpu, t["min-plus gpu"])
    best = {k: min(v) for k, v in t.items() if v}
    fastest = min(best["dijkstra"], best["floyd-warshall"])
    lengths = np.asarray(sp.lengths)
    fin = np.isfinite(ld)
    with_hops = min(best["dijkstra+hops"], best["floyd-warshall+hops"])
    extra = {}
    for key, res in (("min-plus", mp), ("min-plus gpu", mg)):
        if res is None:
            continue
        got = np.asarray(res.lengths.get() if hasattr(res.lengths, "get") else res.lengths)
        hops = np.asarray(res.hops.get() if hasattr(res.hops, "get") else res.hops)
        extra[key] = {"ratio_to_fastest_with_hops": best[key] / with_hops,
                      "length_difference": float(np.max(np.abs(got[fin] - ld[fin]) / ld[fin].clip(1e-300)))
                      if fin.any() else 0.0,
                      "hop_mismatches": int(np.sum(hops != hd))}
    return {
        "edges": int(present.sum()), "seconds": best, "ratio_to_fastest_call": best["toolkit"] / fastest,
        "ratio_to_fastest_lengths_only": best["toolkit"] / min(best["dijkstra lengths"], best["floyd-warshall lengths"]),
        "ratio_to_fastest_dense_input": best["toolkit"] / min(best["dijkstra dense"], best["floyd-warshall"]),
        "ratio_to_fastest_with_hops": best["toolkit"] / min(best["dijkstra+hops"], best["floyd-warshall+hops"]),
        "ratio_to_fastest_with_naive_hops": best["toolkit"] / min(best["dijkstra+naive"], best["floyd-warshall+naive"]),
        "length_difference": float(np.max(np.abs(lengths[fin] - ld[fin]) / ld[fin].clip(1e-300))) if fin.any() else 0.0,
        "hop_mismatches": int(np.sum(np.asarray(sp.hops) != hd)), "max_hops": sp.max_hops(),
        "mean_hops": sp.mean_hops(), **extra,
    }


def networkx_row(A: np.ndarray, sp, sources: int) -> dict:
    import networkx as nx

    g = to_networkx(A)
    n = A.shape[0]
    k = n if sources == 0 else min(sources, n)
    t0 = time.perf_counter()
    rows = [(node, dist, paths) for _, (node, (dist, paths)) in zip(range(k), nx.all_pairs_dijkstra(g))]
    wall = (time.perf_counter() - t0) * n / k
    lengths, hops = np.asarray(sp.lengths), np.asarray(sp.hops)
    worst, mismatch = 0.0, 0
    for src, dist, paths in rows:
        idx = np.fromiter(dist.keys(), dtype=int)
        ref = np.fromiter(dist.values(), dtype=float)
        worst = max(worst, float(np.max(np.abs(lengths[src, idx] - ref) / np.maximum(ref, 1e-300))))
        mismatch += int(np.sum(hops[src, idx] != np.fromiter((len(paths[j]) - 1 for j in idx), dtype=int)))
    return {"sources_timed": k, "seconds_all_pairs": wall, "length_difference": worst, "hop_mismatches": mismatch}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="tokens (graph nodes), default 1000")
    parser.add_argument("--d", type=int, default=8, help="token dimension, default 8")
    parser.add_argument("--densities", default=",".join(map(str, DENSITIES)), help="edge densities in (0, 1]")
    parser.add_argument("--repeats", type=int, default=3, help="runs per method (minimum taken), default 3")
    parser.add_argument("--nx-sources", type=int, default=50,
                        help="networkx sources to time and extrapolate from (0: all n; -1: skip networkx)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write the numbers as JSON to this path")
    parser.add_argument("--no-min-plus", action="store_true", help="skip the min-plus (O(n^3)) host column")
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu",
                        help="gpu: also time min-plus on a CuPy copy of A (needs CuPy and a CUDA device)")
    ns = parser.parse_args(argv)
    densities = [float(v) for v in ns.densities.split(",")]
    if ns.n < 2 or ns.d < 1 or ns.repeats < 1 or not all(0 < v <= 1 for v in densities):
        parser.error("need n >= 2, d >= 1, repeats >= 1, densities in (0, 1]")
    from threadpoolctl import threadpool_limits

    x = np.random.default_rng(ns.seed).standard_normal((ns.n, ns.d))
    shortest_paths(attention(x[:50], 1.0))  # warm-up (imports)
    try:
        load = " ".join(f"{v:.1f}" for v in os.getloadavg())
    except OSError:
        load = "n/a"
    print(f"all-pairs shortest paths + hop counts, n = {ns.n}, min of {ns.repeats} runs, 1 BLAS thread, "
          f"load average {load}")
    print("seconds: toolkit (lengths, predecessors, hops), csgraph dijkstra / floyd-warshall with predecessors")
    print("ratios: toolkit / fastest csgraph call with predecessors (the target's baseline), / fastest lengths-only "
          "call, / fastest call + hops_from_predecessors, / fastest call + naive hops, / fastest call with predecessors "
          "given the dense weights")
    print("min-plus: seconds of method='min-plus' on the host (NumPy) and, with --device gpu, on CuPy; ratios to "
          "the fastest csgraph call + hops_from_predecessors (the same outputs); agree: lengths within 4 sqrt(eps) "
          "and hops equal to csgraph's")
    print(f"{'density':>8} {'edges':>9} {'toolkit':>8} {'dijkstra':>9} {'floyd-w':>8} {'call':>6} {'length':>6} "
          f"{'+hops':>6} {'+naive':>6} {'dense':>6} {'agree':>6} {'max hops':>8} {'min-plus':>8} {'ratio':>6} "
          f"{'agree':>6} {'gpu mp':>8} {'ratio':>6} {'agree':>6}")
    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        for density in densities:
            A = attention(x, density)
            r = density_row(A, ns.repeats, min_plus=not ns.no_min_plus, device=ns.device)
            s = r["seconds"]

            def cols(key, r=r, s=s):
                if key not in r:
                    return f"{'-':>8} {'-':>6} {'-':>6}"
                ok = r[key]["hop_mismatches"] == 0 and r[key]["length_difference"] < 4 * 1.5e-8
                return (f"{s[key]:8.3f} {r[key]['ratio_to_fastest_with_hops']:6.2f} "
                        f"{'yes' if ok else 'NO':>6}")
            print(f"{density:8.3g} {r['edges']:9d} {s['toolkit']:8.3f} {s['dijkstra']:9.3f} {s['floyd-warshall']:8.3f} "
                  f"{r['ratio_to_fastest_call']:6.2f} {r['ratio_to_fastest_lengths_only']:6.2f} "
                  f"{r['ratio_to_fastest_with_hops']:6.2f} "
                  f"{r['ratio_to_fastest_with_naive_hops']:6.2f} {r['ratio_to_fastest_dense_input']:6.2f} "
                  f"{'yes' if r['hop_mismatches'] == 0 and r['length_difference'] < 4 * 1.5e-8 else 'NO':>6} "
                  f"{r['max_hops']:8d} {cols('min-plus')} {cols('min-plus gpu')}", flush=True)
            rows.append({"density": density, **r})
        worst = max(r["ratio_to_fastest_call"] for r in rows)
        missed = [f"{r['density']:g}" for r in rows if r["ratio_to_fastest_call"] > 1.2]
        lengths_only = max(r["ratio_to_fastest_lengths_only"] for r in rows)
        print(f"toolkit / fastest csgraph call with predecessors: worst {worst:.2f} (target <= 1.2: "
              f"{'met' if not missed else 'MISSED at density ' + ', '.join(missed)}); "
              f"/ the lengths-only call: worst {lengths_only:.2f}")
        result = {"n": ns.n, "d": ns.d, "repeats": ns.repeats, "load": load, "densities": rows}
        if ns.nx_sources >= 0 and 1.0 in densities:
            A = attention(x, 1.0)
            sp = shortest_paths(A)
            toolkit = next(r["seconds"]["toolkit"] for r in rows if r["density"] == 1.0)
            nxr = networkx_row(A, sp, ns.nx_sources)
            ratio = nxr["seconds_all_pairs"] / toolkit
            extra = "" if nxr["sources_timed"] == ns.n else f" ({nxr['sources_timed']} sources timed, x{ns.n / nxr['sources_timed']:g})"
            print(f"networkx all_pairs_dijkstra, density 1: {nxr['seconds_all_pairs']:.1f} s{extra}; networkx / toolkit "
                  f"{ratio:.0f}x (target >= 200x: {'met' if ratio >= 200 else 'MISSED'}); sampled rows: max relative "
                  f"length difference {nxr['length_difference']:.1e}, hop mismatches {nxr['hop_mismatches']}")
            result["networkx"] = {**nxr, "ratio": ratio}
    write_json(ns.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
