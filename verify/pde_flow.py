"""Explicit steps against the exact flow: global error, layers as time, the hybrid bound (PDE-5, 6, 7).

The reference is the exact semi-discrete flow (method of lines): ``A(t) = A(0) exp(t alpha L^T)`` for
key-axis diffusion and ``A(t) = A(0) cos(c t sqrt(-L))^T`` for the wave with ``V(0) = 0``, from the
eigendecomposition of the token-by-token second-difference matrix (periodic, T = 64).

PDE-5 (Prop. D.4 item 3, eq. 17). The global error is first order: slope 1 in dt at fixed t. For
diffusion it is bounded in t (per mode ``sup_n |(1-x)^n - e^(-x n)| ~ x / (2e)``, so
``|error| <~ alpha mu_max dt / (2e) |A(0)|``) and decays; the ``(1 + t)`` factor is pessimistic. For
the wave the phase error makes it grow with t. If ``A_true`` is the continuum PDE (as the paper
writes), an ``O(ds^2)`` spatial error remains at ``ds = 1`` and the error does not vanish as dt -> 0.

PDE-6 (Prop. D.4 item 2). L layers of one step each equal one evolution of length ``L dt`` only if the
same matrix is carried across layers (error ``O(dt)``); Algorithm 1 recomputes
``A^(l)(0) = softmax(Q^(l) K^(l)T / sqrt(d))`` in every layer, and then the final attention differs
from ``E_(L dt)[A^(0)]`` by O(1). Toy stack: random (untrained) weights, LayerNorm, residuals, FFN.

PDE-7 (Prop. D.5, eq. 19). ``A_true = softmax`` is not stationary (``L A_true != 0``), so
``|A_final - A_true|`` grows with the pseudo-time towards ``|A_true - row mean|`` (smoothing bias)
instead of decaying; what holds is ``|A_final - E_T A_true| <= (1 - r mu_1)^N_t eps_0 <= eps_0``
(both row-stochastic, r <= 1/4) and ``|A_final - A_true| <= eps_0 + |E_T A_true - A_true|``. The
sparse surrogate (band of width 33 plus 4 global tokens, renormalised) approximates a local
``A_true`` (scores with a distance bias ``-|i - j| / 4``); without it the surrogate is no
approximation at all (recorded).

``claim="printed"`` asserts the printed statements: first-order convergence to the continuum PDE,
``A^(L) ~ E_(L dt)[A^(0)]`` for the Algorithm-1 stack, and a decaying ``delta(T)`` with stationary
``A_true``; all fail.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.validation import check_int, check_option, check_real, child_rng
from verify.core.check import Check
from verify.core.result import Recorder

CHECK = Check("pde_flow", claims=("PDE-5", "PDE-6", "PDE-7"))


@CHECK.define
def run(*, size=64, alpha=0.1, c=0.15, times=(1.0, 10.0, 100.0), dt_exponents=(3, 4, 5, 6), long_dt=0.5,
        layers_time=8.0, hybrid_size=256, hybrid_steps=(0, 1, 4, 16, 64, 256, 1024), claim="corrected", seed=0,
        device="cpu"):
    """Global error of the explicit schemes, layers as pseudo-time, and the hybrid bound.

    Parameters
    ----------
    size : int
        Sequence length T of the error runs (periodic), in [16, 256].
    alpha : float
        Diffusion coefficient (PDE Table 5: 0.1), in (0, 0.5].
    c : float
        Wave speed (PDE Table 11: 0.15), in (0, 0.5].
    times : tuple of float
        Pseudo-times t at which the error is measured against dt, each in [0.5, 200].
    dt_exponents : tuple of int
        dt = 2^-k for these k (at least 3, each in [0, 8]); the slope in dt is fitted over them.
    long_dt : float
        dt of the error-versus-t run up to t = 1000, in [0.05, 1].
    layers_time : float
        Pseudo-time L dt of the Algorithm-1 stack (L = layers_time / dt layers), in [1, 32].
    hybrid_size : int
        Sequence length of the hybrid-bound test (PDE-7), in [64, 512].
    hybrid_steps : tuple of int
        Step counts N_t of the hybrid-bound test, increasing, each in [0, 4096].
    claim : {"corrected", "printed"}
        "corrected" asserts the statements above; "printed" asserts convergence to the continuum PDE,
        the layer equivalence for Algorithm 1 and a decaying hybrid error with stationary A_true (fail).
    seed : int
        Seed of the random queries, keys and layer weights.
    device : {"cpu"}
        Array device; this check runs on the host only.

    Returns
    -------
    CheckResult
        Passes when every corrected statement holds.
    """
    from spectral.validation import InputError

    size = check_int("size", size, low=16, high=256)
    alpha = check_real("alpha", alpha, low=0.0, high=0.5, low_open=True)
    c = check_real("c", c, low=0.0, high=0.5, low_open=True)
    times = tuple(check_real("times", t, low=0.5, high=200.0) for t in times)
    dt_exponents = tuple(sorted(check_int("dt_exponents", k, low=0, high=8) for k in dt_exponents))
    if len(set(dt_exponents)) < 3 or not times:
        raise InputError("dt_exponents must hold at least 3 distinct values and times at least one")
    long_dt = check_real("long_dt", long_dt, low=0.05, high=1.0)
    layers_time = check_real("layers_time", layers_time, low=1.0, high=32.0)
    hybrid_size = check_int("hybrid_size", hybrid_size, low=64, high=512)
    hybrid_steps = tuple(check_int("hybrid_steps", n, low=0, high=4096) for n in hybrid_steps)
    if len(hybrid_steps) < 3 or list(hybrid_steps) != sorted(set(hybrid_steps)):
        raise InputError(f"hybrid_steps must be at least 3 increasing values, got {hybrid_steps}")
    claim = check_option("claim", claim, ("corrected", "printed"))

    rec = Recorder()
    with rec.timed("global_error"):
        _global_error(rec, size, alpha, c, times, dt_exponents, long_dt, seed, claim)
    with rec.timed("layers"):
        _layers(rec, alpha, layers_time, seed, claim)
    with rec.timed("hybrid"):
        _hybrid(rec, hybrid_size, hybrid_steps, seed, claim)
    return rec.finish(
        "the explicit schemes converge to the exact semi-discrete flow with order 1 in dt (diffusion error "
        "bounded in t, wave error growing with t); L one-step layers equal one evolution of length L dt only "
        "when the same matrix is carried (Algorithm 1 recomputes it: O(1) difference); softmax attention is not "
        "stationary, the hybrid error grows towards |A_true - row mean| while |A_final - E_T A_true| <= eps_0"
        if claim == "corrected" else
        "the scheme converges to the continuum PDE with error C dt (1 + t), the Algorithm-1 stack equals "
        "E_(L dt)[A^(0)], and the hybrid error decays because A_true is stationary (PDE-5, 6, 7 as printed)")


def _global_error(rec, T, alpha, c, times, dt_exponents, long_dt, seed, claim):
    from spectral import evolve_attention
    from verify.core.fits import fit_power_law
    from manifolds.references.pde import softmax_attention, stencil_matrix

    a0 = softmax_attention(child_rng(seed, "global-error"), T)
    w, u = np.linalg.eigh(stencil_matrix(T, "periodic"))
    w = np.minimum(w, 0.0)

    def exact(pde, t):
        if pde == "diffusion":
            return a0 @ (u * np.exp(alpha * t * w)) @ u.T
        return a0 @ (u * np.cos(c * t * np.sqrt(-w))) @ u.T

    dts = [2.0 ** -k for k in dt_exponents]
    worst_dev = 0.0
    for pde in ("diffusion", "wave"):
        for t in times:
            errs = []
            for dt in dts:
                n = int(round(t / dt))
                a = evolve_attention(a0, pde=pde, steps=n, dt=t / n, alpha=alpha, c=c, boundary="periodic").attention
                errs.append(float(np.linalg.norm(a - exact(pde, t))))
            slope = fit_power_law(dts, errs).slope
            rec.info(f"{pde}_slope_t{t:g}", slope)
            worst_dev = max(worst_dev, abs(slope - 1.0))
    rec.at_most("error_order_deviation", worst_dev, 0.05,
                why="first-order scheme; the dt^2 terms bias the fitted slope by <= 0.03 for dt <= 1/8 "
                    "(measured <= 0.030, the wave at t = 100)",
                label="the global error is not first order in dt")

    # error versus t at fixed dt (t up to 1000): diffusion bounded and decaying, wave growing
    ts = (1, 3, 10, 30, 100, 300, 1000)
    err = {"diffusion": [], "wave": []}
    for pde in ("diffusion", "wave"):
        res, done = None, 0
        for t in ts:
            n = int(round(t / long_dt))
            if res is None:
                res = evolve_attention(a0, pde=pde, steps=n, dt=long_dt, alpha=alpha, c=c, boundary="periodic")
            else:
                res = evolve_attention(res.attention, pde=pde, steps=n - done, dt=long_dt, alpha=alpha, c=c,
                                       boundary="periodic", velocity=res.velocity)
            done = n
            err[pde].append(float(np.linalg.norm(res.attention - exact(pde, n * long_dt))))
    rec.array("error_vs_t_times", np.array(ts, dtype=float))
    rec.array("error_vs_t_diffusion", np.array(err["diffusion"]))
    rec.array("error_vs_t_wave", np.array(err["wave"]))
    bound = alpha * 4.0 * long_dt / (2 * math.e) * float(np.linalg.norm(a0))
    if claim == "corrected":
        rec.at_most("diffusion_sup_error_over_t", max(err["diffusion"]), bound,
                    why="per mode sup_n |(1-x)^n - exp(-x n)| <= x / (2e) to first order, x <= alpha mu_max dt "
                        f"= {alpha * 4 * long_dt:g} (measured sup 0.027 against 0.056 at the defaults)",
                    label="the diffusion error exceeds alpha mu_max dt / (2e) |A(0)|")
        rec.at_most("diffusion_error_decay_t1000", err["diffusion"][-1] / max(err["diffusion"]), 0.1,
                    why="every non-constant mode decays in both the scheme and the flow, so the error does too "
                        "(measured 9e-4 of its maximum at t = 1000)",
                    label="the diffusion error does not decay at large t: (1 + t) would not be pessimistic")
        rec.at_least("wave_error_growth_100_to_1000", err["wave"][-1] / err["wave"][4], 2.0,
                     why="phase error t omega^3 dt^2 / 24 accumulates (measured 3.0 from t = 100 to 1000)",
                     label="the wave error does not grow with t")
    else:
        # continuum reference: a cosine of k0 = T/4 periods per row decays like exp(-alpha kappa^2 t)
        k0 = T // 4
        j = np.arange(T)
        kappa = 2 * np.pi * k0 / T
        row = 1.0 / T + (0.5 / T) * np.cos(kappa * j)
        b0 = np.tile(row, (T, 1))
        t = 10.0
        cont = 1.0 / T + (0.5 / T) * np.exp(-alpha * kappa ** 2 * t) * np.cos(kappa * j)
        errs = []
        for dt in dts:
            n = int(round(t / dt))
            b = evolve_attention(b0, steps=n, dt=t / n, alpha=alpha, boundary="periodic").attention
            errs.append(float(np.max(np.abs(b - cont[None, :]))))
        slope = fit_power_law(dts, errs).slope
        rec.info("continuum_error_smallest_dt", errs[-1])
        rec.close("printed_continuum_error_order", slope, 1.0, atol=0.05,
                  why="eq. (17) as printed: A_true solves the continuous PDE; first order in dt",
                  label="eq. (17) as printed: against the continuum PDE the error does not vanish with dt at ds = 1 "
                        "(O(ds^2) spatial error)")
        rec.info("error_order_wave_growth_100_to_1000", err["wave"][-1] / err["wave"][4])


def _layers(rec, alpha, t_total, seed, claim):
    """Algorithm 1 toy stack (T = 128, d = 32): recomputed softmax per layer vs the carried matrix."""
    from spectral import evolve_attention
    from verify.core.fits import fit_power_law
    from manifolds.references.pde import stencil_matrix

    T, d = 128, 32
    rng = child_rng(seed, "stack")
    x0 = rng.standard_normal((T, d))
    n_layers_max = int(round(t_total / 0.25))
    weights = [[rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(6)] for _ in range(n_layers_max)]
    w, u = np.linalg.eigh(stencil_matrix(T, "neumann"))
    w = np.minimum(w, 0.0)

    def layernorm(x):
        return (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)

    def softmax(s):
        s = s - s.max(axis=1, keepdims=True)
        e = np.exp(s)
        return e / e.sum(axis=1, keepdims=True)

    carried_err, recomputed_err, dts = [], [], (1.0, 0.5, 0.25)
    for dt in dts:
        n_layers = int(round(t_total / dt))
        x = x0.copy()
        a_first = a_carried = a_rec = None
        for layer in range(n_layers):
            wq, wk, wv, wo, w1, w2 = weights[layer]
            a_init = softmax((x @ wq) @ (x @ wk).T / math.sqrt(d))
            if a_first is None:
                a_first = a_carried = a_init
            a_rec = evolve_attention(a_init, steps=1, dt=dt, alpha=alpha).attention
            a_carried = evolve_attention(a_carried, steps=1, dt=dt, alpha=alpha).attention
            x = layernorm(x + a_rec @ (x @ wv) @ wo)
            x = layernorm(x + np.maximum(x @ w1, 0.0) @ w2)
        ref = a_first @ (u * np.exp(alpha * t_total * w)) @ u.T
        carried_err.append(float(np.linalg.norm(a_carried - ref) / np.linalg.norm(ref)))
        recomputed_err.append(float(np.linalg.norm(a_rec - ref) / np.linalg.norm(ref)))
    slope = fit_power_law(dts, carried_err).slope
    rec.info("carried_relative_error_dt1", carried_err[0])
    rec.info("recomputed_relative_error_dt1", recomputed_err[0])
    rec.close("carried_error_order", slope, 1.0, atol=0.05,
              why="the carried matrix is the explicit scheme itself: first order in dt (measured 1.003)",
              label="carrying A across layers is not a first-order approximation of E_(L dt)")
    if claim == "corrected":
        rec.at_least("recomputed_relative_discrepancy", min(recomputed_err), 0.2,
                     why="every layer starts from its own softmax with its own random W_Q, W_K: O(1) "
                         "(measured 0.53-0.59 over dt = 1, 1/2, 1/4)",
                     label="recomputing softmax per layer still matches E_(L dt)[A^(0)]")
    else:
        rec.at_most("printed_recomputed_relative_error", max(recomputed_err), 2 * max(carried_err),
                    why="Prop. D.4(2) as printed for Algorithm 1: the stack approximates E_(L dt)[A^(0)] to first "
                        "order, like the carried matrix",
                    label="Prop. D.4(2) as printed: the Algorithm-1 stack (softmax recomputed per layer) differs "
                          "from E_(L dt)[A^(0)] by O(1)")


def _hybrid(rec, T, steps_list, seed, claim):
    """Band (33) + 4 global tokens surrogate of a local softmax, key-axis Neumann diffusion, r = 1/4."""
    from spectral import evolve_attention
    from manifolds.references.pde import laplacian_eigenvalues, softmax_attention, stencil_matrix

    r = 0.25
    i, j = np.indices((T, T))
    keep = (np.abs(i - j) <= 16) | (i < 4) | (j < 4)

    def surrogate(a):
        s = np.where(keep, a, 0.0)
        return s / s.sum(axis=1, keepdims=True)

    a_true = softmax_attention(child_rng(seed, "hybrid"), T, bias_length=4.0)
    a0 = surrogate(a_true)
    eps0 = float(np.linalg.norm(a0 - a_true))
    lap_true = float(np.linalg.norm(a_true @ stencil_matrix(T, "neumann").T))
    limit = float(np.linalg.norm(a_true - a_true.mean(axis=1, keepdims=True)))
    mu1 = laplacian_eigenvalues(T, "neumann")[1]
    dist_true, dist_flow, decay_ratio, triangle_excess = [], [], -np.inf, -np.inf
    af, et, done = a0, a_true, 0
    for n in steps_list:
        af = evolve_attention(af, steps=n - done, alpha=r, boundary="neumann").attention
        et = evolve_attention(et, steps=n - done, alpha=r, boundary="neumann").attention
        done = n
        d_true = float(np.linalg.norm(af - a_true))
        d_flow = float(np.linalg.norm(af - et))
        dist_true.append(d_true)
        dist_flow.append(d_flow)
        if n > 0:
            decay_ratio = max(decay_ratio, d_flow / (eps0 * (1 - r * mu1) ** n))
            triangle_excess = max(triangle_excess, d_true - (eps0 + float(np.linalg.norm(et - a_true))))
    rec.array("hybrid_steps", np.array(steps_list))
    rec.array("hybrid_distance_to_true", np.array(dist_true))
    rec.array("hybrid_distance_to_flow", np.array(dist_flow))
    rec.info("hybrid_eps0", eps0)
    rec.info("hybrid_row_mean_limit", limit)
    rec.info("hybrid_distance_final", dist_true[-1])
    # the unbiased setting (random scores without a distance bias, same surrogate): no approximation at all
    a_rand = softmax_attention(child_rng(seed, "hybrid-unbiased"), T)
    rec.info("unbiased_eps0", float(np.linalg.norm(surrogate(a_rand) - a_rand)))
    rec.info("unbiased_row_mean_limit", float(np.linalg.norm(a_rand - a_rand.mean(axis=1, keepdims=True))))
    if claim == "corrected":
        rec.at_least("laplacian_of_true_attention", lap_true, 1.0,
                     why="softmax rows are peaked: |L A_true|_F is O(1) (measured 10.7), far from stationary",
                     label="A_true is (nearly) stationary under the Laplacian")
        increments = np.diff(dist_true)
        rec.at_least("hybrid_error_min_increment", float(increments.min()), 0.0,
                     why="smoothing bias: |A_final - A_true| grows monotonically with N_t (measured increments >= 0.38)",
                     label="the hybrid error does not grow with the pseudo-time")
        rec.at_least("hybrid_error_fraction_of_limit", dist_true[-1] / limit, 0.5,
                     why="it approaches |A_true - row mean| as N_t -> infinity (measured 0.92 at N_t = 1024)",
                     label="the hybrid error does not approach |A_true - row mean|")
        rec.at_most("contraction_bound_ratio", decay_ratio, 1.0 + 1e-10,
                    why="(A_0 - A_true) has zero row sums: key-axis steps shrink it by max_(k>=1)|1 - r mu_k| = "
                        "1 - r mu_1 per step (r <= 1/4); rounding (measured max ratio 0.77 over N_t >= 1)",
                    label="|A_final - E_T A_true| exceeds (1 - r mu_1)^N_t eps_0")
        rec.at_most("triangle_bound_excess", triangle_excess, 1e-12,
                    why="|A_final - A_true| <= |E_T(A_0 - A_true)| + |E_T A_true - A_true| <= eps_0 + bias "
                        "(measured margin >= 0.15 over N_t >= 1)",
                    label="|A_final - A_true| exceeds eps_0 + |E_T A_true - A_true|")
    else:
        rec.at_most("printed_laplacian_of_true_attention", lap_true, 1e-12,
                    why="D.5 sketch as printed: 'A_true is stationary for (18)', i.e. L A_true = 0",
                    label=f"D.5 as printed: A_true is not stationary (|L A_true|_F = {lap_true:.3g})")
        rec.at_most("printed_hybrid_error_max_increment", float(np.diff(dist_true).max()), 0.0,
                    why="eq. (19) as printed: delta(T) = O(exp(-alpha lambda_min T) + dt) decays with T",
                    label="eq. (19) as printed: |A_final - A_true| grows with the pseudo-time instead of decaying")


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
