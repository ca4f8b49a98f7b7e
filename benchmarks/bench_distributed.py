"""Benchmark: kernel-operator products on a Dask cluster against workers, and what a larger cluster would give.

Run from the repository root (needs ``pip install "attention-limits[dask]"``)::

    OPENBLAS_NUM_THREADS=1 nice python benchmarks/bench_distributed.py                   # n = 20000, 1 and 2 workers
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_distributed.py --n 40000 --workers 1,2,4 --parts 8
    python benchmarks/bench_distributed.py --scheduler tcp://host:8786 --workers 0      # a running cluster as is

What is measured (FNA on S^2, alpha 1.3, scale 0.05, random points, float64, Numba tiles where installed):

1. ``products``: one block product ``C @ X`` (X of ``--k`` columns) of ``KernelOperator(..., parts=P)``:
   in this process with ``parts=1`` (the baseline: the products as they run without a cluster) and with
   ``parts=P``, then on a ``LocalCluster`` of W worker processes of one thread each for every W of
   ``--workers``; median of ``--repeats`` products after one warm-up product (the warm-up pays the scatter of
   the points and the workers' first Numba compilation, both once per operator). Printed per run: seconds
   per product, ns per kernel entry (n^2 entries; the symmetric products evaluate the n^2 / 2 pairs on and
   above the diagonal and use each twice), the throughput in entries per second against the baseline, the
   bytes one product moves (``RemoteProducts.product_bytes``) and whether the result has the bits of
   ``parts=P`` in this process.
   The CPU seconds per product of this process, or of every worker process (``client.run(time.process_time)``),
   say what the cluster gives where each worker has a core of its own: the baseline's CPU time over the
   busiest worker's ("on free cores"); on a shared machine the wall times also carry the other jobs' load.
2. ``latency``: the same at n = 2000 (a product of milliseconds): the fixed cost of a product on the cluster
   (scatter of X, one task per part, the sums, the gather).
3. ``spectrum``: ``markov_spectrum(op, 10)`` in this process and on the largest cluster: time, products,
   eigenvalues bitwise.

Then the projection: a product on W workers costs about ``c_entry n^2 / W + t_fixed + bytes / bandwidth``, with
``c_entry`` the per-entry cost measured on one worker, ``t_fixed`` the latency of section 2 and the bytes of
section 1; printed for W = 8, 32, 128 at ``--project-n`` on a 10 Gbit/s network. The machine's load average
is printed first: on a shared machine, W workers only get W cores when the others are idle.
A plain script, never run by pytest.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from manifolds import Sphere  # noqa: E402
from spectral import KernelOperator, fna_kernel, markov_spectrum  # noqa: E402
from spectral.distributed import use_client  # noqa: E402
from _common import sphere_points, write_json  # noqa: E402 - benchmarks/ is on sys.path as a script

SEED = 20261201
ALPHA, SCALE = 1.3, 0.05
NETWORK = 10e9 / 8  # bytes per second of a 10 Gbit/s link


def _operator(x, **kwargs):
    return KernelOperator(x, kernel=functools.partial(fna_kernel, alpha=ALPHA, scale=SCALE, dim=2),
                          distance=Sphere(2).distance, **kwargs)


def _cpu_seconds(client=None):
    """CPU seconds used so far by this process, or by each worker process of ``client`` (a list)."""
    if client is None:
        return time.process_time()
    return list(client.run(time.process_time).values())


def _timed_products(op, X, repeats, client=None):
    """(median seconds of a product after one warm-up, CPU seconds per product: this process's, or the busiest
    worker's and all workers' together, the last result)."""
    out = op.matmat(X)  # warm-up: the scatter, the workers' compilation, the caches
    times = []
    cpu0 = _cpu_seconds(client)
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = op.matmat(X)
        times.append(time.perf_counter() - t0)
    cpu1 = _cpu_seconds(client)
    if client is None:
        cpu = {"cpu": (cpu1 - cpu0) / repeats}
    else:
        per = [(b - a) / repeats for a, b in zip(cpu0, cpu1)]
        cpu = {"cpu": sum(per), "busiest_cpu": max(per)}
    return statistics.median(times), cpu, out


def _cluster(workers, scheduler):
    from dask.distributed import Client, LocalCluster

    if scheduler:
        return None, Client(scheduler)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                           env={"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    return cluster, Client(cluster)


def products(n, k, parts, worker_counts, repeats, scheduler):
    rng = np.random.default_rng(SEED)
    x = sphere_points(n, rng)
    X = rng.standard_normal((n, k))
    rows = []
    base, cpu, ref1 = _timed_products(_operator(x), X, repeats)
    rows.append({"where": "this process, parts=1", "workers": 0, "seconds": base, **cpu})
    local, cpu, refP = _timed_products(_operator(x, parts=parts), X, repeats)
    rows.append({"where": f"this process, parts={parts}", "workers": 0, "seconds": local, **cpu,
                 "bitwise_parts1": bool(np.array_equal(refP, ref1))})
    for w in worker_counts:
        cluster, client = _cluster(w, scheduler)
        try:
            w_now = len(client.nthreads())
            with use_client(client, min_rows=0):
                op = _operator(x, parts=parts)
                t, cpu, out = _timed_products(op, X, repeats, client)
            rows.append({"where": f"LocalCluster, {w_now} worker process(es)" if cluster else f"{scheduler}",
                         "workers": w_now, "seconds": t, **cpu, "bitwise": bool(np.array_equal(out, refP)),
                         "product_bytes": op.distribution.product_bytes,
                         "scattered_bytes": op.distribution.scattered_bytes})
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    for r in rows:
        r["ns_per_entry"] = r["seconds"] / (n * n) * 1e9
        r["throughput_vs_baseline"] = base / r["seconds"]
        # with a core per worker the wall time of a product is its busiest worker's CPU time (plus waiting):
        # the speed-up the cluster gives where its workers do not share cores with other jobs
        r["free_cores_speedup"] = rows[0]["cpu"] / r.get("busiest_cpu", r["cpu"])
    return rows


def spectrum(n, parts, workers, scheduler):
    rng = np.random.default_rng(SEED + 1)
    x = sphere_points(n, rng)
    t0 = time.perf_counter()
    local = markov_spectrum(_operator(x, parts=parts), 10, rng=0)
    t_local = time.perf_counter() - t0
    cluster, client = _cluster(workers, scheduler)
    try:
        with use_client(client, min_rows=0):
            op = _operator(x, parts=parts)
            t0 = time.perf_counter()
            spread = markov_spectrum(op, 10, rng=0)
            t_cluster = time.perf_counter() - t0
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return {"n": n, "seconds_here": t_local, "seconds_cluster": t_cluster, "workers": workers,
            "products": op.distribution.products,
            "bitwise": bool(np.array_equal(np.asarray(local.eigenvalues), np.asarray(spread.eigenvalues)))}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sections", default="products,latency,spectrum")
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--k", type=int, default=16, help="columns of X (the block solver's block)")
    p.add_argument("--parts", type=int, default=4)
    p.add_argument("--workers", default="1,2", help="LocalCluster sizes (comma-separated)")
    p.add_argument("--scheduler", default=None, help="a running cluster's address instead of LocalClusters")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--spectrum-n", type=int, default=6000)
    p.add_argument("--project-n", type=int, default=100_000)
    p.add_argument("--json", default=None)
    ns = p.parse_args(argv)
    sections = ns.sections.split(",")
    counts = [int(w) for w in ns.workers.split(",") if w]
    print(f"load average {os.getloadavg()}, {os.cpu_count()} CPUs, n = {ns.n}, k = {ns.k}, parts = {ns.parts}")
    out = {"n": ns.n, "k": ns.k, "parts": ns.parts, "load": os.getloadavg()}
    if "products" in sections:
        rows = out["products"] = products(ns.n, ns.k, ns.parts, counts, ns.repeats, ns.scheduler)
        print("\nproducts:")
        for r in rows:
            extra = ""
            if "bitwise" in r:
                extra = (f", {r['product_bytes'] / 2**20:.2f} MiB moved per product, bits of parts={ns.parts} "
                         f"here: {r['bitwise']}")
            print(f"  {r['where']:<40} {r['seconds']:8.3f} s  {r['ns_per_entry']:6.2f} ns/entry  "
                  f"{r['throughput_vs_baseline']:5.2f}x wall; CPU {r['cpu']:.3f} s in all, "
                  f"{r.get('busiest_cpu', r['cpu']):.3f} s busiest: {r['free_cores_speedup']:.2f}x on free cores"
                  f"{extra}")
    if "latency" in sections:
        rows = out["latency"] = products(2000, ns.k, ns.parts, counts[-1:], max(ns.repeats, 5), ns.scheduler)
        fixed = rows[-1]["seconds"] - rows[1]["seconds"]
        out["fixed_seconds"] = fixed
        print(f"\nlatency (n = 2000): here {rows[1]['seconds'] * 1e3:.1f} ms, on {rows[-1]['workers']} workers "
              f"{rows[-1]['seconds'] * 1e3:.1f} ms: {fixed * 1e3:.1f} ms fixed cost per product")
    if "spectrum" in sections:
        s = out["spectrum"] = spectrum(ns.spectrum_n, ns.parts, counts[-1], ns.scheduler)
        print(f"\nspectrum (n = {s['n']}, top 10): here {s['seconds_here']:.1f} s, on {s['workers']} workers "
              f"{s['seconds_cluster']:.1f} s, {s['products']} products, eigenvalues bitwise: {s['bitwise']}")
    if "products" in sections and "latency" in sections:
        one = next(r for r in out["products"] if r["workers"] == 1) if 1 in counts else out["products"][0]
        # seconds per entry of one worker with a core of its own (its CPU time per product: the other jobs on a
        # shared machine inflate the wall time, not this)
        entry = one.get("busiest_cpu", one["cpu"]) / ns.n**2
        big = ns.project_n
        # a product moves X out (n k floats, then copied worker to worker), one (n, k) partial sum per part (tile
        # layout) and the result back: P n k floats in all, but the binary tree of the sums adds them level by
        # level on different links, so the wall-clock path is about (2 + ceil(log2 P)) transfers of n k floats
        block = ns.k * big * 8
        print(f"\nprojection at n = {big} (k = {ns.k}; one worker's CPU per entry {entry * 1e9:.2f} ns, its task "
              f"overheads included; {out['fixed_seconds'] * 1e3:.0f} ms fixed per product; a 10 Gbit/s network):")
        out["projection"] = []
        single = None
        for w in (1, 8, 32, 128):
            parts = max(ns.parts, w)
            path = (2 + math.ceil(math.log2(parts))) * block / NETWORK
            t = entry * big**2 / w + out["fixed_seconds"] + path
            single = t if single is None else single
            out["projection"].append({"workers": w, "parts": parts, "seconds_per_product": t,
                                      "bytes_moved": (2 + parts) * block, "communication_seconds": path})
            print(f"  {w:4d} workers (parts = {parts:3d}): {t:8.2f} s per product, {single / t:5.1f}x one worker "
                  f"({(2 + parts) * block / 2**20:.0f} MiB moved, {path * 1e3:.0f} ms of transfers on the critical "
                  f"path)")
    write_json(ns.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
