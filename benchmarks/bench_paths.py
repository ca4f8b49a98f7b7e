"""Benchmark: all-pairs shortest paths with hop counts, toolkit vs networkx (issue 7 item 5).

Run from the repository root::

    python benchmarks/bench_paths.py                 # n = 1000, networkx on 50 sources, extrapolated
    python benchmarks/bench_paths.py --nx-sources 0  # networkx on all n sources (minutes)

Graph: dot-product attention ``A = N_R(exp(X X^T / sqrt d))`` of n Gaussian tokens in R^8 (a
complete directed graph, n^2 - n edges, weights ``1 / A_ij``; FNA Fig. 5c-e). Toolkit:
:func:`graphs.shortest_paths` (weights, CSR, ``scipy.sparse.csgraph`` Dijkstra from every source,
hop counts by pointer doubling). Baseline: ``networkx.all_pairs_dijkstra`` on the same graph
(``graphs.to_networkx``, built outside the timer), which yields lengths and paths (hop counts =
path length - 1) one source at a time. With ``--nx-sources k`` the first k sources of the generator
are consumed and the time is scaled by n / k (every source costs the same on a complete graph);
both wall-clock and CPU (process) time are reported, and the ratio is taken within this one run.
The sampled networkx rows are compared with the toolkit's (lengths to 4 sqrt(eps), hops exactly).

Target (issue 7): toolkit at least 30x faster. This is a plain script, never run by pytest.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from graphs import shortest_paths, to_networkx  # noqa: E402
from spectral import dot_product_scores, row_normalize  # noqa: E402


def _timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="tokens (graph nodes)")
    parser.add_argument("--d", type=int, default=8, help="token dimension")
    parser.add_argument("--nx-sources", type=int, default=50,
                        help="networkx sources to time and extrapolate from (0: all n)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write the numbers as JSON to this path")
    ns = parser.parse_args(argv)
    if ns.n < 2 or ns.nx_sources < 0 or ns.d < 1:
        parser.error("need n >= 2, d >= 1, nx-sources >= 0")

    x = np.random.default_rng(ns.seed).standard_normal((ns.n, ns.d))
    A = row_normalize(dot_product_scores(x, temperature=math.sqrt(ns.d)))

    shortest_paths(A[:50, :50] / A[:50, :50].sum(1, keepdims=True))  # warm-up (imports, caches)
    sp, tk_wall, tk_cpu = _timed(lambda: shortest_paths(A))

    import networkx as nx

    g = to_networkx(A)
    k = ns.n if ns.nx_sources == 0 else min(ns.nx_sources, ns.n)

    def nx_run():
        rows = []
        for _, (node, (dist, paths)) in zip(range(k), nx.all_pairs_dijkstra(g)):
            rows.append((node, dist, paths))
        return rows

    rows, nx_wall, nx_cpu = _timed(nx_run)
    scale = ns.n / k
    nx_wall_all, nx_cpu_all = nx_wall * scale, nx_cpu * scale

    # correctness on the sampled sources (networkx is the oracle)
    lengths = np.asarray(sp.lengths)
    hops = np.asarray(sp.hops)
    worst_len, hop_mismatch = 0.0, 0
    for src, dist, paths in rows:
        idx = np.fromiter(dist.keys(), dtype=int)
        ref = np.fromiter(dist.values(), dtype=float)
        worst_len = max(worst_len, float(np.max(np.abs(lengths[src, idx] - ref) / np.maximum(ref, 1e-300))))
        ref_hops = np.fromiter((len(paths[j]) - 1 for j in idx), dtype=int)
        hop_mismatch += int(np.sum(hops[src, idx] != ref_hops))

    result = {
        "n": ns.n, "d": ns.d, "edges": int(g.number_of_edges()),
        "toolkit_wall_s": tk_wall, "toolkit_cpu_s": tk_cpu,
        "networkx_sources_timed": k, "networkx_wall_s_all_pairs": nx_wall_all, "networkx_cpu_s_all_pairs": nx_cpu_all,
        "ratio_wall": nx_wall_all / tk_wall, "ratio_cpu": nx_cpu_all / tk_cpu,
        "max_relative_length_difference": worst_len, "hop_mismatches": hop_mismatch,
        "mean_hops": sp.mean_hops(), "max_hops": sp.max_hops(),
    }
    print(f"all-pairs shortest paths + hop counts, n = {ns.n} (complete graph, {result['edges']} edges)")
    print(f"  toolkit  (csgraph Dijkstra + pointer doubling): wall {tk_wall:8.2f} s   cpu {tk_cpu:8.2f} s")
    extra = "" if k == ns.n else f"  ({k} sources timed, x{scale:g})"
    print(f"  networkx (all_pairs_dijkstra):                  wall {nx_wall_all:8.2f} s   cpu {nx_cpu_all:8.2f} s{extra}")
    print(f"  ratio networkx / toolkit: wall {result['ratio_wall']:.1f}x, cpu {result['ratio_cpu']:.1f}x "
          f"(target >= 30x: {'met' if min(result['ratio_wall'], result['ratio_cpu']) >= 30 else 'NOT met'})")
    print(f"  agreement on {k} sources: max relative length difference {worst_len:.2e}, "
          f"hop mismatches {hop_mismatch}; mean hops {result['mean_hops']:.3f}, max {result['max_hops']}")
    if ns.json:
        with open(ns.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
