"""Dot-product softmax on the unit sphere is the row-normalised Gaussian kernel (DRIFT Example 1).

For unit vectors ``-q.k = -1 + |q - k|^2 / 2``, so ``softmax_j(q_i . k_j / tau)`` equals
``rownorm exp(-|q_i - k_j|^2 / (2 tau))`` exactly whenever all keys have the same norm (queries
arbitrary), and on the ellipsoid ``k^T Q^T Q k = 1`` with ``|.|_Q``. The paper prints
``-x.y = -2 + |x - y|^2``, which would give ``exp(-|x-y|^2 / tau)``: a factor-2 slip in the time
scale (heat parameter ``2 eps`` and Euler step ``eps`` in the paper's ``S_eps`` convention). The check
states the corrected identity, shows that the printed one fails, and that unequal key norms break it.
"""

from __future__ import annotations

import math

import numpy as np

from verify.core import Timer, cli_main, make_result, require, require_int, require_range

CHECK = "sphere_softmax"
CLAIMS = ("DRIFT-1",)
CONVENTIONS = ("corrected", "paper")
KEY_NORMS = ("equal", "unequal")
HELP = {
    "n": "number of queries and of keys (DRIFT Example 1)",
    "dims": "ambient dimensions d of the sphere S^(d-1) (comma-separated)",
    "taus": "softmax temperatures tau; tau = sqrt(d) is always added (Assumption 2)",
    "convention": "Gaussian tested against softmax: 'corrected' exp(-|q-k|^2/(2 tau)) or the "
                  "'paper' reading of Example 1, exp(-|q-k|^2/tau)",
    "key_norms": "'equal' (unit keys, the identity's hypothesis) or 'unequal' (negative control: "
                 "key norms drawn in [0.5, 1.5])",
    "seed": "seed of the random queries, keys and ellipsoid matrix",
    "device": "array device: cpu or gpu",
}


def _softmax_rows(logits, xp):
    z = logits - xp.max(logits, axis=1, keepdims=True)
    e = xp.exp(z)
    return e / xp.sum(e, axis=1, keepdims=True)


def _sqdist(q, k, xp):
    # direct differences (no |q|^2 + |k|^2 - 2 q.k expansion, which would share the dot products)
    diff = q[:, None, :] - k[None, :, :]
    return xp.sum(diff * diff, axis=2)


def _gaussian_rows(sq, width, xp):
    z = -(sq - xp.min(sq, axis=1, keepdims=True)) / width
    e = xp.exp(z)
    return e / xp.sum(e, axis=1, keepdims=True)


def run(*, n=512, dims=(3, 64), taus=(0.1, 1.0), convention="corrected", key_norms="equal",
        seed=0, device="cpu"):
    """Compare softmax(q.k/tau) with the row-normalised Gaussian for unit (or ellipsoidal) keys."""
    require_int("seed", seed, low=0)
    require_int("n", n, low=2, high=4096)
    require(len(dims) >= 1 and all(isinstance(d, (int, np.integer)) and 2 <= d <= 1024 for d in dims),
            f"dims must be integers in [2, 1024], got {dims!r}")
    require(len(taus) >= 1, "taus must hold at least one temperature")
    for tau in taus:
        require_range("taus", tau, low=1e-3, high=1e3)
    require(convention in CONVENTIONS, f"convention must be one of {CONVENTIONS}, got {convention!r}")
    require(key_norms in KEY_NORMS, f"key_norms must be one of {KEY_NORMS}, got {key_norms!r}")
    from spectral.backend import require_device, to_numpy

    xp = require_device(device)
    rng = np.random.default_rng(seed)
    timer = Timer()
    width_factor = 2.0 if convention == "corrected" else 1.0
    worst_sphere = 0.0
    worst_ellipsoid = 0.0
    logit_scale = 1.0
    per_case = {}
    with timer("compare"):
        for d in dims:
            q = rng.standard_normal((n, d))
            q /= np.linalg.norm(q, axis=1, keepdims=True)
            k = rng.standard_normal((n, d))
            k /= np.linalg.norm(k, axis=1, keepdims=True)
            if key_norms == "unequal":
                q *= rng.uniform(0.5, 1.5, size=(n, 1))
                k *= rng.uniform(0.5, 1.5, size=(n, 1))
            # ellipsoid: keys with k^T M^T M k = 1 for a random well-conditioned M
            m = np.eye(d) + 0.3 * rng.standard_normal((d, d)) / math.sqrt(d)
            ke = rng.standard_normal((n, d))
            ke /= np.linalg.norm(ke @ m.T, axis=1, keepdims=True)
            qe = rng.standard_normal((n, d))
            if key_norms == "unequal":
                ke *= rng.uniform(0.5, 1.5, size=(n, 1))
            qx, kx, qex, kex, mx = (xp.asarray(a) for a in (q, k, qe, ke, m))
            # row blocks: softmax and row normalisation act row by row, and the direct differences
            # of _sqdist take block * n * d doubles (the unblocked n x n x d array was 2 GB at
            # n = 2048, d = 64 and took minutes); blocks keep it near 32 MB
            block = max(1, min(n, (1 << 22) // (n * d)))
            km = kex @ mx.T
            for tau in tuple(taus) + (math.sqrt(d),):
                err = err_e = 0.0
                for start in range(0, n, block):
                    rows = slice(start, min(n, start + block))
                    logits = (qx[rows, :] @ kx.T) / tau
                    soft = _softmax_rows(logits, xp)
                    gauss = _gaussian_rows(_sqdist(qx[rows, :], kx, xp), width_factor * tau, xp)
                    err = max(err, float(to_numpy(xp.max(xp.abs(soft - gauss)))))
                    qm = qex[rows, :] @ mx.T
                    logits_e = (qm @ km.T) / tau
                    soft_e = _softmax_rows(logits_e, xp)
                    logit_scale = max(logit_scale, float(to_numpy(xp.max(xp.abs(logits)))),
                                      float(to_numpy(xp.max(xp.abs(logits_e)))))
                    gauss_e = _gaussian_rows(_sqdist(qm, km, xp), width_factor * tau, xp)
                    err_e = max(err_e, float(to_numpy(xp.max(xp.abs(soft_e - gauss_e)))))
                per_case[f"d={d},tau={tau:.4g}"] = (err, err_e)
                worst_sphere = max(worst_sphere, err)
                worst_ellipsoid = max(worst_ellipsoid, err_e)
    # Exact algebra: both sides are probabilities <= 1 computed from exponents of size |logit|, so
    # round-off is ~ |logit|max * eps(float64). Bound 100 * eps * max(1, |logit|max): at the defaults
    # |logit|max = 52 (unnormalised ellipsoid queries, tau = 0.1) gives 1.2e-12; measured 3.9e-16
    # (sphere) and 4.4e-14 (ellipsoid); n = 2048: 2.1e-16 / 3.4e-14. Wrong widths / unequal norms give
    # errors >= 0.5 (seeds 0-9, both controls: min 0.52).
    tol = 100 * float(np.finfo(np.float64).eps) * logit_scale
    failures = []
    if worst_sphere > tol:
        failures.append(f"sphere: max |softmax - rownorm Gaussian| = {worst_sphere:.3e} > {tol:.2e} "
                        f"({convention} width, {key_norms} key norms)")
    if worst_ellipsoid > tol:
        failures.append(f"ellipsoid: max |softmax - rownorm Gaussian_Q| = {worst_ellipsoid:.3e} > {tol:.2e}")
    statement = (f"softmax_j(q.k_j/tau) = rownorm exp(-|q-k_j|^2/({width_factor:g} tau)) for keys of equal "
                 f"norm on the sphere and the ellipsoid (n={n}, d in {tuple(dims)})")
    return make_result(
        check=CHECK, claims=CLAIMS, statement=statement,
        measured={"max_error_sphere": worst_sphere, "max_error_ellipsoid": worst_ellipsoid,
                  "max_abs_logit": logit_scale},
        expected={"max_error_sphere": 0.0, "max_error_ellipsoid": 0.0},
        tolerance={"max_error_sphere": tol, "max_error_ellipsoid": tol},
        parameters={"n": n, "dims": tuple(dims), "taus": tuple(taus), "convention": convention,
                    "key_norms": key_norms, "seed": seed, "device": device},
        failures=failures, timings=timer.timings,
        arrays={"case_errors": np.array([v for v in per_case.values()])},
    )


def main(argv=None) -> int:
    return cli_main(run, argv, help=HELP, choices={"convention": CONVENTIONS, "key_norms": KEY_NORMS})


if __name__ == "__main__":
    raise SystemExit(main())
