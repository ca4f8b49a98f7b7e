"""Clustering tendency of attention: K near-1 eigenvalues for K separated clusters (DRIFT section 3.2).

Heat-kernel attention ``S = D^-1 W``, ``W = exp(-|x - y|^2 / (2 eps))`` with ``eps = sigma^2``, on K
Gaussian clusters (100 points each, centres on a circle with neighbour separation ``Delta sigma``) has K
eigenvalues near 1 followed by a large eigengap: asserted on the gap ratio
``(1 - eta_{K+1}) / (1 - eta_K)`` and on the position of the largest ratio (not on counts at a fixed
threshold, which is fragile). Isolated points (``S_ii > 1/2``) would add spurious near-1 eigenvalues;
they are counted and removed first. Iterating ``H <- S H`` first makes ``H`` constant on each cluster
(within-cluster spread / between-cluster spread small after ``eta_{K+1}^L << 1``), and for a fixed
``S`` the residual ``|S^L H - 1 pi^T H|`` decays like ``|eta_2|^L``. The power-law FNA kernel
(alpha = 1.2, same half-maximum width) connects the clusters: its gap ratio is far smaller.
"""

from __future__ import annotations

import math

import numpy as np

from verify.core import Timer, cli_main, fit_linear, make_result, require, require_int, require_range

CHECK = "clusters"
CLAIMS = ("DRIFT-9",)
KERNELS = ("heat", "fna")
HELP = {
    "kernel": "kernel whose K-cluster eigengap is asserted: 'heat' (DRIFT) or 'fna' (alpha = 1.2, same "
              "half-maximum width; negative control: multiscale connectivity)",
    "separations": "neighbour centre separations Delta / sigma (comma-separated)",
    "cluster_counts": "numbers of clusters K (comma-separated)",
    "points_per_cluster": "points per Gaussian cluster (ledger: 100)",
    "seeds": "independent data sets per (K, Delta)",
    "min_gap_ratio": "asserted lower bound on (1 - eta_{K+1})/(1 - eta_K) (DESIGN.md 3.3: >= 46 for >= 6 sigma; measured over seeds 0-9: needs ~6.5 sigma)",
    "seed": "base seed (child seeds are spawned per data set)",
    "device": "array device: cpu or gpu",
}


def _data(k, sep, m, rng):
    radius = sep / (2 * math.sin(math.pi / k)) if k > 1 else 0.0
    ang = 2 * math.pi * np.arange(k) / k
    centres = radius * np.stack([np.cos(ang), np.sin(ang)], axis=1)
    x = np.concatenate([c + rng.standard_normal((m, 2)) for c in centres])
    return x, np.repeat(np.arange(k), m)


def _scores(x, kernel, xp):
    xx = xp.asarray(x)
    d = xp.sqrt(xp.clip(xp.sum((xx[:, None, :] - xx[None, :, :]) ** 2, axis=2), 0.0, None))
    if kernel == "heat":
        return xp.exp(-(d * d) / 2.0)  # eps = sigma^2 = 1
    # FNA Phi_1.2 with d_M = 2, kappa matched to the heat kernel's half-maximum width sqrt(2 ln 2)
    kappa = math.sqrt(2 * math.log(2)) / (2 ** (1 / 3.2) - 1)
    return (1.0 + d / kappa) ** -3.2


def _spectrum(c, xp):
    """Eigenvalues of D^-1 C (descending) via the symmetric conjugate ``D^-1/2 C D^-1/2``."""
    from spectral.backend import to_numpy

    deg = xp.sum(c, axis=1)
    s = c / xp.sqrt(deg[:, None] * deg[None, :])
    return to_numpy(xp.linalg.eigvalsh(s))[::-1]


def _single_thread_blas():
    """Many small (<= 600) dense eigensolves: one BLAS thread each avoids oversubscription.

    Measured here on a loaded 2-core machine: 75 s with the default OpenBLAS threads, 1.6 s with one.
    threadpoolctl comes with scikit-learn; without it this is a no-op.
    """
    import contextlib

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def run(*, kernel="heat", separations=(8.0, 12.0), cluster_counts=(2, 3, 4, 6), points_per_cluster=100, seeds=3,
        min_gap_ratio=46.0, seed=0, device="cpu"):
    """Eigengap ratios, two-stage collapse and the |eta_2|^L rate for heat-kernel attention on clusters."""
    require_int("seed", seed, low=0)
    require(kernel in KERNELS, f"kernel must be one of {KERNELS}, got {kernel!r}")
    require(len(separations) >= 1 and all(0.5 <= s <= 50 for s in separations),
            f"separations must be values in [0.5, 50], got {separations!r}")
    require(len(cluster_counts) >= 1 and all(isinstance(k, int) and 2 <= k <= 10 for k in cluster_counts),
            f"cluster_counts must be integers in [2, 10], got {cluster_counts!r}")
    require_int("points_per_cluster", points_per_cluster, low=10, high=500)
    require_int("seeds", seeds, low=1, high=100)
    require_range("min_gap_ratio", min_gap_ratio, low=1.0, high=1e6)
    from spectral.backend import require_device, to_numpy

    xp = require_device(device)
    timer = Timer()
    children = np.random.SeedSequence(seed).spawn(len(separations) * len(cluster_counts) * seeds + 2)
    failures = []
    ratios, argmax_ok, isolated_total, fna_ratios = [], 0, 0, []
    with timer("eigengaps"), _single_thread_blas():
        c_idx = 0
        for sep in separations:
            for k in cluster_counts:
                for _ in range(seeds):
                    rng = np.random.default_rng(children[c_idx])
                    c_idx += 1
                    x, _ = _data(k, sep, points_per_cluster, rng)
                    for kern in ("heat", "fna"):
                        c = _scores(x, kern, xp)
                        deg = to_numpy(xp.sum(c, axis=1))
                        # isolated points: S_ii = 1/D_ii > 1/2 would carry their own near-1 eigenvalue
                        iso = deg < 2.0
                        if kern == "heat":
                            isolated_total += int(iso.sum())
                        if iso.any():
                            keep = xp.asarray(np.flatnonzero(~iso))
                            c = xp.take(xp.take(c, keep, axis=0), keep, axis=1)
                        vals = _spectrum(c, xp)
                        gaps = 1.0 - vals
                        ratio = gaps[k] / max(gaps[k - 1], 1e-300)
                        if kern == kernel:
                            ratios.append(ratio)
                            # index j of the largest eigengap eta_j - eta_(j+1), j = 1..10
                            j = 1 + int(np.argmax(vals[:10] - vals[1:11]))
                            argmax_ok += int(j == k)
                        if kern == "fna":
                            fna_ratios.append(ratio)
    n_sets = len(ratios)
    min_ratio = float(np.min(ratios))
    # Separation regime (heat kernel, default K set, 10 seeds x 12 data sets): min gap ratio 34.3 at
    # Delta = 6, 73.3 at 6.5, 172 at 7. DESIGN.md 3.3's ">= 46 once >= 6 sigma" fails on that ensemble
    # at exactly 6 sigma, so a failure below 6.5 sigma says so.
    if min_ratio < min_gap_ratio:
        note = (f" [Delta = {min(separations):g} < 6.5 sigma: measured min ratio 34 at 6 sigma over seeds 0-9; "
                f">= 46 needs ~6.5 sigma]" if kernel == "heat" and min(separations) < 6.5 else "")
        failures.append(f"{kernel} kernel: smallest K-cluster gap ratio (1-eta_(K+1))/(1-eta_K) = {min_ratio:.3g} "
                        f"< {min_gap_ratio:g} over {n_sets} data sets (Delta in {tuple(separations)}){note}")
    if argmax_ok < n_sets:
        failures.append(f"{kernel} kernel: the largest eigengap ratio sits at index K in only {argmax_ok}/{n_sets} sets")

    # ---- two-stage collapse (K = 3, Delta = 8) and the |eta_2|^L rate (K = 2, Delta = 3: connected)
    with timer("iterations"):
        rng = np.random.default_rng(children[-2])
        x, lab = _data(3, 8.0, points_per_cluster, rng)
        c = _scores(x, "heat", xp)
        s = c / xp.sum(c, axis=1)[:, None]
        vals = _spectrum(c, xp)
        L1 = int(math.ceil(math.log(1e-6) / math.log(vals[3])))  # eta_4^L1 = 1e-6
        h = xp.asarray(rng.standard_normal(len(x)))
        h0n = to_numpy(h)
        initial_ratio = float(np.sqrt(np.mean([h0n[lab == j].var() for j in range(3)]))
                              / np.std([h0n[lab == j].mean() for j in range(3)]))
        for _ in range(L1):
            h = s @ h
        hn = to_numpy(h)
        means = np.array([hn[lab == j].mean() for j in range(3)])
        within = float(np.sqrt(np.mean([hn[lab == j].var() for j in range(3)])))
        between = float(np.std(means))
        stage_ratio = within / between
        rng = np.random.default_rng(children[-1])
        x2, _ = _data(2, 3.0, points_per_cluster, rng)
        c2 = _scores(x2, "heat", xp)
        deg2 = xp.sum(c2, axis=1)
        s2 = c2 / deg2[:, None]
        vals2 = _spectrum(c2, xp)
        pi = deg2 / xp.sum(deg2)
        h = xp.asarray(rng.standard_normal(len(x2)))
        const = xp.sum(pi * h)
        res = []
        for _ in range(400):
            h = s2 @ h
            res.append(float(to_numpy(xp.sqrt(xp.sum(pi * (h - const) ** 2)))))
        res = np.asarray(res)
        Ls = np.arange(1, len(res) + 1)
        # fit window: after eta_3^L / eta_2^L < 1e-3 (other modes gone), before round-off (res > 1e-12)
        start = int(math.ceil(math.log(1e-3) / math.log(abs(vals2[2]) / abs(vals2[1]))))
        win = (Ls >= start) & (res > 1e-12 * res[0])
        rate = float(np.exp(fit_linear(Ls[win], np.log(res[win])).slope)) if win.sum() >= 4 else float("nan")
        rate_err = abs(rate / abs(vals2[1]) - 1.0)
    # Tolerances (ledger DRIFT-9): rate = |eta_2| +- 1 % (measured 4e-9 relative). Within/between spread
    # after eta_4^L = 1e-6: measured 0.0095 (from ~10 for the random start); it plateaus there because at
    # Delta = 8 sigma the top-K eigenvectors are themselves flat only to ~1 % (1 - eta_2 ~ 1e-4): bound
    # 0.05. Gap ratio >= 46 (DESIGN.md 3.3): measured min 1431 over Delta in {8, 12}, K in {2, 3, 4, 6},
    # 3 seeds; Delta = 4 gives 2.9 and the FNA kernel at equal half-width at most 9.3.
    if not rate_err <= 0.01:
        failures.append(f"residual decay rate {rate:.5f} differs from |eta_2| = {abs(vals2[1]):.5f} by {rate_err:.2%} (> 1%)")
    if not stage_ratio <= 0.05:
        failures.append(f"after {L1} steps H is not cluster-wise constant: within/between spread {stage_ratio:.3g} > 0.05")
    statement = (f"{kernel}-kernel attention on K separated clusters has K eigenvalues near 1 then an eigengap ratio "
                 f">= {min_gap_ratio:g}; H <- S H becomes cluster-wise constant, residuals decay like |eta_2|^L")
    return make_result(
        check=CHECK, claims=CLAIMS, statement=statement,
        measured={"min_gap_ratio": min_ratio, "median_gap_ratio": float(np.median(ratios)),
                  "largest_gap_at_K": f"{argmax_ok}/{n_sets}", "isolated_points_removed": isolated_total,
                  "fna_max_gap_ratio": float(np.max(fna_ratios)), "within_between_spread": stage_ratio,
                  "within_between_spread_initial": initial_ratio,
                  "stage_steps": L1, "decay_rate": rate, "abs_eta2": float(abs(vals2[1])),
                  "decay_rate_relative_error": rate_err},
        expected={"min_gap_ratio": f">= {min_gap_ratio:g}", "largest_gap_at_K": f"{n_sets}/{n_sets}",
                  "within_between_spread": 0.0, "decay_rate_relative_error": 0.0},
        tolerance={"within_between_spread": 0.05, "decay_rate_relative_error": 0.01},
        parameters={"kernel": kernel, "separations": tuple(separations), "cluster_counts": tuple(cluster_counts),
                    "points_per_cluster": points_per_cluster, "seeds": seeds, "min_gap_ratio": min_gap_ratio,
                    "seed": seed, "device": device},
        failures=failures, timings=timer.timings,
        arrays={"gap_ratios": np.asarray(ratios), "fna_gap_ratios": np.asarray(fna_ratios), "residuals": res},
    )


def main(argv=None) -> int:
    return cli_main(run, argv, help=HELP, choices={"kernel": KERNELS})


if __name__ == "__main__":
    raise SystemExit(main())
