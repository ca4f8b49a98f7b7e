"""Peers: datafold, pydiffmap, graphtools and networkx against the toolkit, same data, same kernel.

Run from the repository root, with the peers installed in a throwaway virtual environment (they
are never dependencies of the toolkit; datafold pins numpy < 2, which the toolkit does not run on)::

    python3 -m venv /tmp/peers-venv
    /tmp/peers-venv/bin/pip install datafold pydiffmap graphtools networkx
    python benchmarks/peers.py --peers-python /tmp/peers-venv/bin/python            # n = 2000
    python benchmarks/peers.py --peers-python /tmp/peers-venv/bin/python --n 5000 --table peers.md

The task, for every method: from n points to the top ``k`` eigenvalues of the Markov matrix
``A = D^-1 W`` of the heat kernel ``W_ij = exp(-|x_i - x_j|^2 / (2 eps))`` (no density
normalisation, a = 0), with entries beyond ``6 sqrt(eps)`` dropped (below exp(-18) = 1.5e-8).
Each peer is configured to build exactly this kernel (the parameter mapping is in ``PEER_KERNELS``):

* toolkit: ``spectral.heat_kernel_sparse`` + ``spectral.markov_spectrum`` (its automatic method);
* datafold: ``DiffusionMaps(GaussianKernel(epsilon=eps, distance={"cut_off": 6 sqrt(eps)}), alpha=0)``
  (its kernel is exp(-D / (2 eps)) on squared distances D);
* pydiffmap: ``DiffusionMap.from_sklearn(epsilon=eps / 2, alpha=0, k=K)`` (its Gaussian is
  exp(-d^2 / (4 epsilon)); K = the largest number of points within the cutoff, plus one, so its
  k-nearest-neighbour kernel holds every entry the others keep, and a few below 1.5e-8 more);
* graphtools: ``Graph(decay=2, bandwidth=sqrt(2 eps), thresh=exp(-18), knn=K)`` (its kernel is
  exp(-(d / bandwidth)^decay), cut where it falls below thresh), then ARPACK on its symmetric
  ``diff_aff``;
* networkx: the same sparse kernel (scipy cKDTree), ``networkx.from_scipy_sparse_array``,
  ``normalized_laplacian_matrix`` and ARPACK on it (eigenvalues 1 - mu); networkx has no kernel
  builder of its own, so its row times the graph round trip on top of scipy.

Accuracy is measured against an independent reference computed here from the definitions: the dense
float64 kernel, its symmetric conjugate ``D^-1/2 W D^-1/2`` and ``scipy.linalg.eigh`` (top k only),
once with the cutoff (the kernel every method was asked to build: the error of the method) and once
without (the exact Gaussian: the cutoff's effect included); the columns are max |lambda_j -
lambda_j^ref| over the k eigenvalues. Data (one seed for all methods): a swiss roll in R^3, uniform
points on S^2, and a 2-D mixture of three Gaussians 6 sigma apart. On S^2 the reference also gives
the Laplace-Beltrami eigenvalues l(l+1) = 2, 6, 12 through -log(lambda) / (eps / 2) (heat kernel
time eps / 2); that row is printed as a sanity check of the setting, the same for every method.

``--large N`` runs the other task instead, the sparse path at scale (default N = 100000): a
diffusion map with density normalisation a = 1 of N uniform points on S^2 from a k-nearest-neighbour
kernel (``spectral.knn_kernel``, the union graph, fixed eps) through ``spectral.diffusion_map``
(ARPACK on the stored sparse scores), then the Nystrom extension to 1000 new points
(``DiffusionMap.transform`` of their directed kNN rows). It reports the time of each step, the
traced peak of Python allocations (tracemalloc: NumPy and SciPy arrays included) and the process's
peak resident memory, and checks the answers against S^2's Laplace-Beltrami spectrum: the l = 1
eigenvalues and eigenfunctions (span{x, y, z}, principal angles, on the training and on the new
points) and the ratio of the l = 2 to the l = 1 eigenvalues (6 / 2 = 3; a ratio, because with few
neighbours within sqrt(eps) the self score biases every 1 - lambda by the same factor). With
``--peers-python``, pydiffmap does the same (``from_sklearn(epsilon=eps / 2, alpha=1, k=K + 1)``, its
directed kNN kernel and ``eigs``; ``transform`` of the new points) in a child process.

Timing: one untimed warm-up run, then the median of ``--repeats`` runs, each from the points to the
eigenvalues. Peers run in child processes of ``--peers-python`` (imports outside the timer); the
toolkit runs here, half its repeats before the peers and half after, so machine load affects both.
Ratios are peer time / toolkit time within this one run (> 1: the toolkit is faster). A peer that
is not installed in that environment is skipped and said so. This is a plain script, never run by
pytest; it writes a markdown table (``--table``) that benchmarks/README.md shows.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from _common import sphere_points, swiss_roll  # noqa: E402 - benchmarks/ is on sys.path when run as a script

CUTOFF = 6.0  # kernel entries kept within CUTOFF * sqrt(eps)
PEERS = ("datafold", "pydiffmap", "graphtools", "networkx")
#: dataset -> heat-kernel eps (chosen so that the cutoff graph is connected and has ~100-200 neighbours at n = 2000)
DATASETS = {"swiss-roll": 1.0, "sphere": 0.02, "mixture": 0.1}
PEER_KERNELS = {
    "datafold": "GaussianKernel(epsilon=eps, cut_off=6 sqrt(eps)), DiffusionMaps(alpha=0)",
    "pydiffmap": "from_sklearn(epsilon=eps/2, alpha=0, k=K), kernel exp(-d^2/(4 epsilon))",
    "graphtools": "Graph(decay=2, bandwidth=sqrt(2 eps), thresh=exp(-18), knn=K), eigsh(diff_aff)",
    "networkx": "cKDTree kernel, from_scipy_sparse_array, normalized_laplacian_matrix, eigsh",
}


# ----------------------------------------------------------------------------- data (host, seeded)


def make_points(name: str, n: int, seed: int) -> np.ndarray:
    """The benchmark's point sets (one seed, the same points for every method)."""
    rng = np.random.default_rng([seed, sorted(DATASETS).index(name)])
    if name == "swiss-roll":
        return swiss_roll(n, rng)
    if name == "sphere":
        return sphere_points(n, rng)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [3.0, 5.2]])
    return centres[rng.integers(0, 3, n)] + rng.standard_normal((n, 2))


def reference_eigenvalues(x: np.ndarray, eps: float, k: int, *, cutoff: bool) -> np.ndarray:
    """Top-k eigenvalues of D^-1 W for the dense heat kernel, with or without the cutoff (float64, scipy eigh)."""
    import scipy.linalg

    sq = np.sum(x * x, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (x @ x.T)
    np.maximum(d2, 0.0, out=d2)
    w = np.exp(d2 * (-1.0 / (2.0 * eps)))
    if cutoff:
        w[d2 > CUTOFF**2 * eps] = 0.0
    del d2
    s = 1.0 / np.sqrt(w.sum(axis=1))
    w *= s[:, None]
    w *= s[None, :]
    n = len(x)
    lam = scipy.linalg.eigh(w, eigvals_only=True, subset_by_index=(n - k, n - 1))
    return np.sort(lam)[::-1]


def neighbour_stats(x: np.ndarray, eps: float) -> tuple[int, int, int]:
    """(largest and median number of points within the cutoff, self included; components of that graph)."""
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    tree = cKDTree(x)
    graph = tree.sparse_distance_matrix(tree, CUTOFF * math.sqrt(eps), output_type="coo_matrix").tocsr()
    counts = np.diff(graph.indptr)  # the coo output keeps the diagonal's explicit zero distances: self included
    return int(counts.max()), int(np.median(counts)), int(connected_components(graph, directed=False)[0])


# ----------------------------------------------------------------------------- the toolkit (this process)


def toolkit_eigenvalues(x, eps, k):
    from spectral import heat_kernel_sparse, markov_spectrum

    scores = heat_kernel_sparse(x, eps=eps, cutoff=CUTOFF)
    return np.asarray(markov_spectrum(scores, k, rng=0).eigenvalues)


def time_toolkit(x, eps, k, repeats):
    toolkit_eigenvalues(x, eps, k)  # warm-up: lazy imports, caches
    times, lam = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        lam = toolkit_eigenvalues(x, eps, k)
        times.append(time.perf_counter() - t0)
    return times, lam


# ----------------------------------------------------------------------------- the peers (child processes)


def _peer_datafold(x, eps, k, kmax):
    import datafold.pcfold as pf
    from datafold.dynfold import DiffusionMaps

    kernel = pf.GaussianKernel(epsilon=eps, distance=dict(cut_off=CUTOFF * math.sqrt(eps)))
    dm = DiffusionMaps(kernel=kernel, n_eigenpairs=k, alpha=0).fit(pf.PCManifold(x, kernel=kernel))
    return np.real(dm.eigenvalues_)


def _peer_pydiffmap(x, eps, k, kmax):
    from pydiffmap import diffusion_map

    dm = diffusion_map.DiffusionMap.from_sklearn(n_evecs=k - 1, epsilon=eps / 2.0, alpha=0.0, k=kmax)
    dm.fit(x)
    # pydiffmap returns the eigenvalues of L = (P - I) / epsilon without the trivial one
    return np.concatenate([[1.0], 1.0 + dm.epsilon_fitted * np.asarray(dm.evals)])


def _eigsh_top(S, k, n):
    from scipy.sparse.linalg import eigsh

    v0 = np.random.default_rng(0).standard_normal(n)
    return eigsh(S, k=k, which="LA", v0=v0, tol=0, return_eigenvectors=False)


def _peer_graphtools(x, eps, k, kmax):
    import graphtools

    graph = graphtools.Graph(x, n_pca=None, knn=kmax, decay=2, bandwidth=math.sqrt(2.0 * eps),
                             thresh=math.exp(-CUTOFF**2 / 2.0), anisotropy=0, verbose=0, random_state=0)
    return _eigsh_top(graph.diff_aff, k, len(x))


def _peer_networkx(x, eps, k, kmax):
    import networkx as nx
    import scipy.sparse as sp
    from scipy.sparse.linalg import eigsh
    from scipy.spatial import cKDTree

    tree = cKDTree(x)
    d = tree.sparse_distance_matrix(tree, CUTOFF * math.sqrt(eps), output_type="coo_matrix")
    w = sp.csr_array((np.exp(-d.data**2 / (2.0 * eps)), (d.row, d.col)), shape=(len(x), len(x)))
    graph = nx.from_scipy_sparse_array(w)
    lap = nx.normalized_laplacian_matrix(graph, nodelist=range(len(x)))
    v0 = np.random.default_rng(0).standard_normal(len(x))
    mu = eigsh(lap, k=k, which="SA", v0=v0, tol=0, return_eigenvectors=False)
    return 1.0 - mu


_PEER_RUNNERS = {"datafold": _peer_datafold, "pydiffmap": _peer_pydiffmap, "graphtools": _peer_graphtools,
                 "networkx": _peer_networkx}


def _peer_version(peer: str) -> str:
    from importlib.metadata import version

    return version(peer)


def child_main(peer: str, points: str, eps: float, k: int, kmax: int, repeats: int) -> int:
    """Child process: time one peer on the saved points; one JSON line on stdout."""
    import warnings

    warnings.simplefilter("ignore")  # peers' deprecation chatter would end up in the captured output
    try:
        version = _peer_version(peer)
        runner = _PEER_RUNNERS[peer]
        x = np.load(points)
        runner(x, eps, k, kmax)  # warm-up: imports inside the peer, caches
    except ImportError as exc:
        print(json.dumps({"skipped": f"not installed here ({exc})"}))
        return 0
    times, lam = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        lam = runner(x, eps, k, kmax)
        times.append(time.perf_counter() - t0)
    print(json.dumps({"version": version, "times": times, "eigenvalues": sorted(map(float, lam), reverse=True)}))
    return 0


def run_peer(python: str, peer: str, points: str, eps: float, k: int, kmax: int, repeats: int) -> dict:
    cmd = [python, os.path.abspath(__file__), "--child", peer, points, repr(eps), str(k), str(kmax), str(repeats)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        err = proc.stderr.strip().splitlines()
        return {"skipped": f"failed: {err[-1] if err else 'no output'}"}
    return json.loads(lines[-1])


# ----------------------------------------------------------------------------- main


def _load() -> str:
    try:
        return " ".join(f"{v:.1f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def run_dataset(name, n, k, repeats, seed, peers_python, peers, log):
    eps = DATASETS[name]
    x = make_points(name, n, seed)
    kmax, kmed, components = neighbour_stats(x, eps)
    ref = reference_eigenvalues(x, eps, k, cutoff=True)
    full = reference_eigenvalues(x, eps, k, cutoff=False)
    truncation = float(np.max(np.abs(ref - full)))
    log(f"\n[{name}] n = {n}, d = {x.shape[1]}, eps = {eps}, cutoff {CUTOFF} sqrt(eps): {kmed} neighbours "
        f"(median, max {kmax}), {components} component(s); the cutoff moves the reference eigenvalues by "
        f"{truncation:.1e}")
    if components > 1:
        log(f"  warning: the cutoff graph has {components} components; eigenvalue 1 is multiple")
    if name == "sphere":
        lb = -np.log(full[1:]) / (eps / 2.0)
        log(f"  sanity: reference -log(lambda)/(eps/2) = {np.round(lb, 2).tolist()}; continuum l(l+1) = 2 (x3), "
            f"6 (x5), 12 (x7): random points and O(eps) bias, the same for every method")
    half = max(1, repeats // 2)
    t_before, lam = time_toolkit(x, eps, k, half)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "points.npy")
        np.save(path, x)
        for peer in peers:
            if not peers_python:
                rows.append({"method": peer, "skipped": "no --peers-python given"})
                continue
            out = run_peer(peers_python, peer, path, eps, k, kmax, repeats)
            rows.append({"method": peer, **out})
    t_after, _ = time_toolkit(x, eps, k, repeats - half) if repeats > half else ([], None)
    t_toolkit = statistics.median(t_before + t_after)
    lam = np.sort(lam)[::-1]
    err, err_full = float(np.max(np.abs(lam - ref))), float(np.max(np.abs(lam - full)))
    result = [{"dataset": name, "n": n, "eps": eps, "neighbours": kmed, "method": "toolkit",
               "seconds": t_toolkit, "times": t_before + t_after, "ratio": 1.0, "error": err, "error_full": err_full}]
    log(f"  {'toolkit':<11} {t_toolkit:8.3f} s   ratio 1.00   max|lambda - ref| {err:.1e} (full kernel {err_full:.1e})")
    for row in rows:
        entry = {"dataset": name, "n": n, "eps": eps, "neighbours": kmed, "method": row["method"]}
        if "skipped" in row:
            entry["skipped"] = row["skipped"]
            log(f"  {row['method']:<11} skipped: {row['skipped']}")
        else:
            sec = statistics.median(row["times"])
            got = np.array(row["eigenvalues"][:k])
            e, e_full = float(np.max(np.abs(got - ref))), float(np.max(np.abs(got - full)))
            entry.update(seconds=sec, times=row["times"], ratio=sec / t_toolkit, error=e, error_full=e_full,
                         version=row["version"])
            log(f"  {row['method']:<11} {sec:8.3f} s   ratio {sec / t_toolkit:5.2f}   max|lambda - ref| {e:.1e} "
                f"(full kernel {e_full:.1e})   ({row['method']} {row['version']})")
        result.append(entry)
    return result


def markdown_table(results, k, repeats) -> str:
    lines = [f"| data | method | time (median of {repeats}) | time / toolkit | top-{k} eigenvalues: max abs error, "
             f"same kernel | vs the kernel without cutoff |",
             "|---|---|---|---|---|---|"]
    for r in results:
        data = f"{r['dataset']} n={r['n']} eps={r['eps']}"
        if "skipped" in r:
            lines.append(f"| {data} | {r['method']} | skipped: {r['skipped']} | | | |")
            continue
        name = r["method"] + (f" {r['version']}" if "version" in r else "")
        lines.append(f"| {data} | {name} | {r['seconds']:.3f} s | {r['ratio']:.2f} | {r['error']:.1e} | "
                     f"{r['error_full']:.1e} |")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- the sparse path at scale


LARGE_COMPONENTS = 9  # l = 1 (3), l = 2 (5) and the first of l = 3
LARGE_NEW = 1000  # new points for the Nystrom extension


def large_points(n: int, seed: int):
    """``(x, y)``: n training points and ``LARGE_NEW`` new points, uniform on S^2 (one seed)."""
    rng = np.random.default_rng([seed, 7])
    x = rng.standard_normal((n + LARGE_NEW, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x[:n], x[n:]


def large_accuracy(x, y, psi, ext, mu):
    """Principal angles of the l = 1 eigenvectors (training, extended) to span{x, y, z}; l(l+1) checks."""
    from scipy.linalg import subspace_angles

    l1 = float(np.mean(mu[:3]))
    return {"mu": [float(v) for v in mu], "mu_l1_over_2": l1 / 2.0, "ratio_l2_l1": float(np.mean(mu[3:8])) / l1,
            "angle_train": float(np.max(subspace_angles(psi[:, :3], x))),
            "angle_new": float(np.max(subspace_angles(ext[:, :3], y)))}


def run_large_toolkit(x, y, k, eps, tol):
    """Toolkit: kNN kernel, diffusion map (a = 1), Nystrom; seconds per step, peak memory, accuracy."""
    import resource
    import tracemalloc

    from spectral import diffusion_map, knn_kernel

    tracemalloc.start()
    t0 = time.perf_counter()
    W = knn_kernel(x, k=k, eps=eps)
    t1 = time.perf_counter()
    dm = diffusion_map(W, n_components=LARGE_COMPONENTS, a=1.0, tau=0, tol=tol, rng=0)
    t2 = time.perf_counter()
    ext = dm.transform(knn_kernel(y, k=k, eps=eps, y=x))
    t3 = time.perf_counter()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    mu = 2.0 * (1.0 - np.asarray(dm.eigenvalues[1:])) / eps
    out = {"method": "toolkit", "kernel_s": t1 - t0, "dmap_s": t2 - t1, "transform_s": t3 - t2, "total_s": t3 - t0,
           "traced_peak_mib": peak / 2**20, "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "nnz": W.nnz, "residual": dm.spectrum.residual, "components": dm.spectrum.n_components}
    out.update(large_accuracy(x, y, np.asarray(dm.coordinates), np.asarray(ext), mu))
    return out


def child_large(points: str, k: int, eps: float) -> int:
    """Child process: pydiffmap on the saved points (same kNN count and kernel); one JSON line."""
    import resource
    import warnings

    warnings.simplefilter("ignore")
    try:
        from pydiffmap import diffusion_map as pdm

        version = _peer_version("pydiffmap")
    except ImportError as exc:
        print(json.dumps({"skipped": f"not installed here ({exc})"}))
        return 0
    data = np.load(points)
    x, y = data["x"], data["y"]
    t0 = time.perf_counter()
    dm = pdm.DiffusionMap.from_sklearn(n_evecs=LARGE_COMPONENTS, epsilon=eps / 2.0, alpha=1.0, k=k + 1)
    dm.fit(x)
    t1 = time.perf_counter()
    ext = dm.transform(y)
    t2 = time.perf_counter()
    mu = -2.0 * np.asarray(dm.evals) * (eps / 2.0) / eps  # its evals are those of (P - I) / (eps / 2)
    out = {"method": f"pydiffmap {version}", "kernel_s": float("nan"), "dmap_s": t1 - t0, "transform_s": t2 - t1,
           "total_s": t2 - t0, "traced_peak_mib": float("nan"),
           "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    out.update(large_accuracy(x, y, np.asarray(dm.evecs), np.asarray(ext), mu))
    print(json.dumps(out))
    return 0


def _log_large_row(r, log):
    if "skipped" in r:
        log(f"  {r['method']:<16} skipped: {r['skipped']}")
        return
    log(f"  {r['method']:<16} kernel {r['kernel_s']:7.2f} s  diffusion map {r['dmap_s']:7.2f} s  "
        f"Nystrom {r['transform_s']:6.2f} s  total {r['total_s']:7.2f} s  traced peak {r['traced_peak_mib']:6.0f} MiB  "
        f"max RSS {r['maxrss_mib']:6.0f} MiB")
    log(f"  {'':<16} mu_l=1 / 2 = {r['mu_l1_over_2']:.3f}, mu_l=2 / mu_l=1 = {r['ratio_l2_l1']:.3f} (exact 3), "
        f"angle to span{{x, y, z}}: training {r['angle_train']:.2e}, new points {r['angle_new']:.2e} rad")


def run_large(n, k, eps, tol, seed, peers_python, log, peer_timeout=1800.0):
    x, y = large_points(n, seed)
    log(f"sparse path: n = {n} uniform points on S^2, kNN k = {k}, eps = {eps} (union graph, a = 1), "
        f"{LARGE_COMPONENTS} coordinates, ARPACK tol = {tol}, Nystrom to {LARGE_NEW} new points; load {_load()}")
    from spectral import diffusion_map, knn_kernel

    warm = diffusion_map(knn_kernel(x[:500], k=10, eps=0.1), n_components=3, a=1.0, rng=0)  # imports, caches
    warm.transform(knn_kernel(y[:10], k=10, eps=0.1, y=x[:500]))
    rows = [run_large_toolkit(x, y, k, eps, tol)]
    _log_large_row(rows[0], log)
    if peers_python:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "points.npz")
            np.savez(path, x=x, y=y)
            cmd = [peers_python, os.path.abspath(__file__), "--child-large", path, str(k), repr(eps)]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=peer_timeout)
            except subprocess.TimeoutExpired:
                rows.append({"method": "pydiffmap", "skipped": f"did not finish in {peer_timeout:.0f} s (stopped)"})
            else:
                lines = proc.stdout.strip().splitlines()
                if proc.returncode != 0 or not lines:
                    err = proc.stderr.strip().splitlines()
                    rows.append({"method": "pydiffmap", "skipped": f"failed: {err[-1] if err else 'no output'}"})
                else:
                    rows.append({"method": "pydiffmap", **json.loads(lines[-1])})
        _log_large_row(rows[-1], log)
    log(f"  load average after: {_load()}")
    return rows


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        peer, points, eps, k, kmax, repeats = argv[1:7]
        return child_main(peer, points, float(eps), int(k), int(kmax), int(repeats))
    if argv[:1] == ["--child-large"]:
        return child_large(argv[1], int(argv[2]), float(argv[3]))
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers-python", default=None,
                        help="python of the virtual environment holding the peers (none: toolkit and reference only)")
    parser.add_argument("--n", type=int, default=2000, help="points per data set (default 2000)")
    parser.add_argument("--k", type=int, default=10, help="eigenvalues compared (default 10)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per method (median; default 3)")
    parser.add_argument("--datasets", default=",".join(DATASETS), help=f"subset of {','.join(DATASETS)}")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"subset of {','.join(PEERS)}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--table", default=None, help="write the markdown table to this path")
    parser.add_argument("--json", default=None, help="write every number as JSON to this path")
    parser.add_argument("--large", type=int, default=None, metavar="N",
                        help="the sparse path at scale instead: kNN diffusion map of N points on S^2 (e.g. 100000)")
    parser.add_argument("--large-k", type=int, default=30, help="--large: neighbours besides the point (default 30)")
    parser.add_argument("--large-eps", type=float, default=1e-4, help="--large: heat-kernel eps (default 1e-4)")
    parser.add_argument("--large-tol", type=float, default=1e-8, help="--large: ARPACK relative tolerance (default 1e-8)")
    parser.add_argument("--large-peer-timeout", type=float, default=1800.0,
                        help="--large: seconds before the peer is stopped and reported as not finished (default 1800)")
    ns = parser.parse_args(argv)
    if ns.large is not None:
        if ns.large < 1000 or ns.large_k < 3 or not ns.large_eps > 0 or ns.large_tol < 0:
            parser.error("--large needs N >= 1000, --large-k >= 3, --large-eps > 0 and --large-tol >= 0")
        sys.stdout.reconfigure(line_buffering=True)
        rows = run_large(ns.large, ns.large_k, ns.large_eps, ns.large_tol, ns.seed, ns.peers_python, print,
                         peer_timeout=ns.large_peer_timeout)
        if ns.json:
            with open(ns.json, "w", encoding="utf-8") as fh:
                json.dump({"large": ns.large, "k": ns.large_k, "eps": ns.large_eps, "tol": ns.large_tol,
                           "seed": ns.seed, "results": rows}, fh, indent=1)
        return 0
    datasets = [d for d in ns.datasets.split(",") if d]
    peers = [p for p in ns.peers.split(",") if p]
    bad = [d for d in datasets if d not in DATASETS] + [p for p in peers if p not in PEERS]
    if bad or ns.n < 50 or not 2 <= ns.k < ns.n - 1 or ns.repeats < 1:
        parser.error(f"need datasets in {list(DATASETS)}, peers in {list(PEERS)}, n >= 50, 2 <= k < n - 1, "
                     f"repeats >= 1 (got {bad or 'sizes out of range'})")
    sys.stdout.reconfigure(line_buffering=True)
    print(f"peers benchmark: n = {ns.n}, top {ns.k} eigenvalues, {ns.repeats} timed runs, load average {_load()}")
    results = []
    for name in datasets:
        results += run_dataset(name, ns.n, ns.k, ns.repeats, ns.seed, ns.peers_python, peers, print)
    table = markdown_table(results, ns.k, ns.repeats)
    print("\n" + table)
    if ns.table:
        with open(ns.table, "w", encoding="utf-8") as fh:
            fh.write(table)
    if ns.json:
        with open(ns.json, "w", encoding="utf-8") as fh:
            json.dump({"n": ns.n, "k": ns.k, "repeats": ns.repeats, "seed": ns.seed, "load": _load(),
                       "results": results}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
