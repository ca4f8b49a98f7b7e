"""Expressivity proxy: bilinear (dot-product) fit vs a shared-weight MLP fit of non-bilinear scores (NEURAL-8).

Section 1.2 and the Conclusion say MLP scores capture "nonlinear dependencies that a dot product
cannot". On a grid of Gaussian queries and keys (``q_i, k_j ~ N(0, I_d')``) four target scores are
fitted: ``f1 = -|q - k|``, ``f2 = |q_1 - k_2|``, ``f3 = cos(q.k)``, ``f4 = q_1 k_1 q_2 k_2``. Both fits
are compared on the *doubly-centred* target (row and column means removed): the softmax ignores
query-only terms and a key-only term is a key bias, so what is left is the genuinely query-key
dependent part.

* Best bilinear fit ``q^T M k`` (+ biases): closed-form least squares on the centred inputs,
  ``M = Q_c^+ T_c (K_c^T)^+``. For ``f3`` and ``f4`` the centred target is orthogonal to every
  ``q_a k_b`` in expectation (``f3`` is even in ``q``; ``f4`` has only odd moments against
  ``q_a k_b``), so the bilinear residual stays near 100%. ``-|q - k|^2`` is fitted exactly (NEURAL-2).
* Shared-weight Neural Attention ``w_a . ReLU(W_h [q; k] + b_h)`` (= additive attention, NEURAL-3),
  fitted with L-BFGS (SciPy) from a seeded start for at most ``max_iter`` iterations, on one BLAS
  thread (deterministic per seed). The fitted weights are put into :class:`spectral.ScoreMLP` and
  re-evaluated with ``neural_scores(form="concat")`` to confirm the residual.

The MLP is judged **out of sample**: fitted on one grid, its residual is measured on a fresh grid
drawn from the same law (``child_rng(seed, "held-out")``). On the training grid alone its ``2 d' h + 2 h``
weights can memorise ``n^2`` values (640 weights against 1,024 at ``n = 32, h = 64``), so in-sample
residuals are reported, never asserted. Asserted: the held-out MLP residual of ``-|q - k|`` is well below
its bilinear floor, and ``|q_1 - k_2|`` is fitted on the fresh grid (one ReLU suffices after the double
centring). Reported: ``cos(q.k)`` is *not* captured at ``h <= 64`` (held-out residual about 1 or above, no
better than predicting zero), and the quartic only partly. So the paper's "non-linear dependencies that
a dot product cannot" holds for some targets (distance-like, piecewise linear) and not for others;
``claim="printed"`` asserts it for all four and fails on ``cos(q.k)``. The property is that of additive
attention in general, not new to Neural Attention.
"""

from __future__ import annotations

import dataclasses

import numpy as np

import spectral
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.params import Int
from verify.core.reduce import worst as _worst
from verify.core.result import Recorder
from verify.core.threads import single_blas_thread

#: the smallest grid n x n on which the bilinear floors decide: the lowest cos(q.k) residual over seeds 0-199 is
#: 0.947-0.99 for n >= 32 (d' 4-16 within MAX_BILINEAR_SHARE) but 0.87 at n = 16 (d' 2 and 4) and 0.47 at n = 8
MIN_GRID = 32
#: the largest share d'^2 / (n - 1)^2 of the centred values the bilinear fit may span: a target orthogonal to
#: every q_a k_b keeps the residual sqrt(1 - share) on noise alone; over seeds 0-199 share 0.064-0.067 (n, d' =
#: 64, 16 and 32, 8) keeps the four floors (lowest 0.946 / 0.763 / 0.125 / 0.313), share 0.27 (32, 16) does not
#: (cos(q.k) 0.82, -|q - k| 0.098)
MAX_BILINEAR_SHARE = 0.07

CHECK = Check("neural_expressivity",
              host_only="L-BFGS fits (SciPy) of n^2 h score tensors, n <= 128, on one BLAS thread",
              printed="'captures non-linear dependencies that a dot product cannot' for every target: the MLP's "
                      "held-out residual below the bilinear floor on all four (fails on cos(q.k))")

#: The bilinear residuals do not depend on hidden or max_iter: their grids run max_iter = 1 to stay cheap
#: (seeds 0-499); the held-out MLP fits below.
_BILINEAR_OVER = {"seed": tuple(range(500)), "max_iter": (1,)}
#: held-out fits: n = 64 at h = 32 (max_iter 150 over seeds 0-5, 300 over 0-9) and h = 64 (max_iter 300, seeds 0-11),
#: n = 48 at h = 32 (max_iter 300, seeds 0-7)
_HELD_OUT_OVER = ({"n": (64,), "hidden": (32,), "max_iter": (150,), "seed": tuple(range(6))},
                  {"n": (64,), "hidden": (32,), "max_iter": (300,), "seed": tuple(range(10))},
                  {"n": (64,), "hidden": (64,), "max_iter": (300,), "seed": tuple(range(12))},
                  {"n": (48,), "hidden": (32,), "max_iter": (300,), "seed": tuple(range(8))})
#: below n = 48 the fit memorises the grid (2 d' h + 2 h weights against n^2 values); below h = 32 or 150 iterations
#: it was not measured
_HELD_OUT_VALID = {"n": (48, 128), "hidden": (32, 256), "max_iter": (150, 20000)}
CALIBRATION = Calibration(
    Tolerance("bilinear_residual_f3", 0.9, measured=0.957, over=_BILINEAR_OVER,
              why="cos(q.k) is orthogonal to every q_a k_b in expectation (even in q); on the grid the fit only "
                  "picks up sampling noise"),
    Tolerance("bilinear_residual_f4", 0.75, measured=0.817, over=_BILINEAR_OVER,
              why="q_1 k_1 q_2 k_2 is orthogonal to every q_a k_b in expectation (odd moments), but heavy-tailed, so "
                  "the sampling noise the fit picks up is larger (1 % quantile 0.897)"),
    Tolerance("bilinear_residual_f1", 0.1, measured=0.227, over=_BILINEAR_OVER,
              why="-|q - k| is not bilinear"),
    Tolerance("bilinear_residual_f2", 0.1, measured=0.325, over=_BILINEAR_OVER,
              why="|q_1 - k_2| is not bilinear"),
    Tolerance("mlp_held_out_over_bilinear_f1", 0.85, measured=0.79, over=_HELD_OUT_OVER, valid=_HELD_OUT_VALID,
              why="held-out MLP residual of -|q - k| over the bilinear (in-sample, so optimistic) residual: the MLP "
                  "fitted on one grid beats every bilinear form on a fresh grid; the worst ratio is at h = 32 (h = 64: "
                  "about half of it); a linear 'MLP' (no ReLU) gives 1 / floor, a memorising lookup table > 1"),
    Tolerance("mlp_held_out_residual_f2", 0.05, measured=0.019, over=_HELD_OUT_OVER, valid=_HELD_OUT_VALID,
              why="relu(q_1 - k_2) = (|q_1 - k_2| + q_1 - k_2) / 2 and the linear part is removed by the double "
                  "centring: one unit represents it exactly, so the fit generalises to a fresh grid"),
)

#: target name -> (formula, function of the query and key arrays)
TARGETS = {
    "f1": ("-|q - k|", lambda q, k: -np.sqrt(np.sum((q[:, None, :] - k[None, :, :]) ** 2, axis=2))),
    "f2": ("|q_1 - k_2|", lambda q, k: np.abs(q[:, None, 0] - k[None, :, 1])),
    "f3": ("cos(q.k)", lambda q, k: np.cos(q @ k.T)),
    "f4": ("q_1 k_1 q_2 k_2", lambda q, k: (q[:, None, 0] * q[:, None, 1]) * (k[None, :, 0] * k[None, :, 1])),
}


def double_centre(t):
    """Remove row and column means (and add back the grand mean): the query-key dependent part."""
    return t - t.mean(axis=1, keepdims=True) - t.mean(axis=0, keepdims=True) + t.mean()


def bilinear_residual(q, k, target) -> float:
    """Relative residual of the best ``q^T M k`` (+ query and key biases) fit of ``target``."""
    tc = double_centre(target)
    qc = q - q.mean(axis=0)
    kc = k - k.mean(axis=0)
    M = np.linalg.pinv(qc) @ tc @ np.linalg.pinv(kc.T)
    return float(np.linalg.norm(tc - qc @ M @ kc.T) / np.linalg.norm(tc))


class AdditiveReLU:
    """``s_ij = w . relu(W_1 q_i + W_2 k_j + b)`` with the loss ``|centre(S) - T_c|^2 / |T_c|^2`` and its gradient."""

    def __init__(self, d, h):
        self.d, self.h = d, h

    def unpack(self, theta):
        d, h = self.d, self.h
        W1 = theta[: h * d].reshape(h, d)
        W2 = theta[h * d: 2 * h * d].reshape(h, d)
        return W1, W2, theta[2 * h * d: 2 * h * d + h], theta[2 * h * d + h:]

    def scores(self, theta, q, k):
        W1, W2, b, w = self.unpack(theta)
        z = (q @ W1.T)[:, None, :] + (k @ W2.T + b)[None, :, :]
        return np.maximum(z, 0.0) @ w

    def loss(self, theta, q, k, tc, norm2):
        W1, W2, b, w = self.unpack(theta)
        z = (q @ W1.T)[:, None, :] + (k @ W2.T + b)[None, :, :]
        a = np.maximum(z, 0.0)
        e = double_centre(a @ w) - tc
        # d/dS of |centre(S) - T_c|^2 is 2 centre(e) = 2 e (centring is an orthogonal projection, e is centred)
        g = 2.0 * e / norm2
        dz = g[:, :, None] * w[None, None, :] * (z > 0)
        dp = dz.sum(axis=1)
        dr = dz.sum(axis=0)
        grad = np.concatenate([(dp.T @ q).ravel(), (dr.T @ k).ravel(), dr.sum(axis=0),
                               np.einsum("ij,ijm->m", g, a)])
        return float(np.sum(e * e) / norm2), grad


def fit_additive_relu(q, k, target, *, hidden, max_iter, rng):
    """L-BFGS fit of a shared-weight ReLU score MLP to the doubly-centred ``target``; returns (theta, model, nit)."""
    from scipy.optimize import minimize

    d = q.shape[1]
    model = AdditiveReLU(d, hidden)
    theta0 = np.concatenate([rng.standard_normal(2 * hidden * d) / np.sqrt(2 * d), rng.standard_normal(hidden),
                             rng.standard_normal(hidden) / np.sqrt(hidden)])
    tc = double_centre(target)
    res = minimize(model.loss, theta0, args=(q, k, tc, float(np.sum(tc * tc))), jac=True, method="L-BFGS-B",
                   options={"maxiter": max_iter, "maxfun": 2 * max_iter, "gtol": 1e-12, "ftol": 1e-15})
    return res.x, model, int(res.nit)


@CHECK.parameters
class Params:
    n: int = Int(64, "Queries and keys per grid (n x n pairs; a training grid and a held-out grid)", low=8, high=128)
    d_prime: int = Int(4, "Query/key width d' (f2 and f4 use the first two coordinates)", low=2, high=16)
    hidden: int = Int(64, "Hidden width h of the score MLP", low=1, high=256)
    max_iter: int = Int(300, "L-BFGS iterations per target", low=1, high=20000)

    def resolve(self):
        """The grid must be large enough for the bilinear floors to decide (n >= 32, d'^2 <= 0.07 (n - 1)^2)."""
        if self.n < MIN_GRID:
            raise InputError(f"n must be in [{MIN_GRID}, 128] for the bilinear floors to decide, got {self.n}: on "
                             f"smaller grids a bilinear fit of cos(q.k) picks up sampling structure (lowest residual "
                             f"over 200 seeds 0.87 at n = 16, 0.47 at n = 8, against the floor 0.9)")
        if self.d_prime ** 2 > MAX_BILINEAR_SHARE * (self.n - 1) ** 2:
            most = int((MAX_BILINEAR_SHARE * (self.n - 1) ** 2) ** 0.5)
            raise InputError(f"d_prime must be in [2, {most}] at n = {self.n}, got {self.d_prime}: the bilinear fit's "
                             f"d'^2 = {self.d_prime ** 2} weights span {self.d_prime ** 2 / (self.n - 1) ** 2:.2g} of "
                             f"the (n - 1)^2 centred values (at most {MAX_BILINEAR_SHARE:g}), so it fits noise (at "
                             f"n = 32, d' = 16 the cos(q.k) residual is 0.82-0.86, against the floor 0.9); "
                             f"raise n or lower d_prime")
        return self


@dataclasses.dataclass(frozen=True)
class Quantities:
    """Relative residuals |fit - T_c|_F / |T_c|_F on the doubly-centred targets, keyed by target (TARGETS)."""

    #: the best bilinear (+ biases) fit of -|q - k|^2, which is bilinear plus biases
    bilinear_residual_l2_squared: float
    bilinear_residual: dict[str, float]
    #: the shared-weight ReLU MLP fitted on the grid, and evaluated on a fresh held-out grid
    mlp_residual: dict[str, float]
    mlp_held_out_residual: dict[str, float]
    lbfgs_iterations: dict[str, int]
    #: the fitted weights re-evaluated by neural_scores(form="concat"), relative to max |T_c|
    toolkit_evaluation_error: float


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Best bilinear fits and shared-weight ReLU MLP fits of the four targets on a seeded Gaussian grid."""
    n, d_prime, hidden = p.n, p.d_prime, p.hidden
    rng = child_rng(p.seed, "grid")
    q = rng.standard_normal((n, d_prime))
    k = rng.standard_normal((n, d_prime))
    held = child_rng(p.seed, "held-out")
    q_new = held.standard_normal((n, d_prime))
    k_new = held.standard_normal((n, d_prime))

    with ctx.timed("bilinear"):
        bil = {name: bilinear_residual(q, k, f(q, k)) for name, (_, f) in TARGETS.items()}
        quad = bilinear_residual(q, k, -np.sum((q[:, None, :] - k[None, :, :]) ** 2, axis=2))
    mlp_res, nits, held_res = {}, {}, {}
    toolkit_err = 0.0
    with ctx.timed("mlp_fits"), single_blas_thread():
        for name, (_, f) in TARGETS.items():
            target = f(q, k)
            theta, model, nit = fit_additive_relu(q, k, target, hidden=hidden, max_iter=p.max_iter,
                                                  rng=child_rng(p.seed, "init", name))
            tc = double_centre(target)
            mine = double_centre(model.scores(theta, q, k))
            mlp_res[name] = float(np.linalg.norm(mine - tc) / np.linalg.norm(tc))
            nits[name] = nit
            # the fitted weights as Neural Attention, evaluated by the toolkit in the concatenated form
            W1, W2, b, w = model.unpack(theta)
            mlp = spectral.ScoreMLP(d_prime, d_prime, hidden, rng=0, activation="relu")
            mlp.W_h, mlp.b_h, mlp.w_a, mlp.b_a = np.concatenate([W1, W2], axis=1), b, w, 0.0
            theirs = double_centre(np.asarray(spectral.neural_scores(q, k, mlp, form="concat")))
            toolkit_err = _worst(toolkit_err, float(np.max(np.abs(theirs - mine)) / np.max(np.abs(tc))))
            t_new = double_centre(f(q_new, k_new))
            held_res[name] = float(np.linalg.norm(double_centre(model.scores(theta, q_new, k_new)) - t_new)
                                   / np.linalg.norm(t_new))
    return Quantities(bilinear_residual_l2_squared=quad, bilinear_residual=bil, mlp_residual=mlp_res,
                      mlp_held_out_residual=held_res, lbfgs_iterations=nits, toolkit_evaluation_error=toolkit_err)


#: the targets the MLP captures out of sample (asserted); the others are reported (cos(q.k): not captured at h <= 64)
CAPTURED = ("f1", "f2")


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """The bilinear floors, the exact fit of -|q - k|^2, and the MLP's held-out gain over the bilinear fit."""
    rec.at_most("bilinear_residual_l2_squared", q.bilinear_residual_l2_squared, 1e-12,
                why="-|q-k|^2 = 2 q.k - |q|^2 - |k|^2: bilinear plus biases, fitted exactly up to rounding "
                    "(measured <= 1e-15)",
                label="NEURAL-8: -|q - k|^2 is not fitted by a bilinear form plus biases")
    for name in ("f3", "f4", "f1", "f2"):
        rec.at_least(f"bilinear_residual_{name}", q.bilinear_residual[name],
                     CALIBRATION.get(f"bilinear_residual_{name}", p),
                     label=f"NEURAL-8: a bilinear form fits {TARGETS[name][0]}")
    rec.at_most("toolkit_evaluation_error", q.toolkit_evaluation_error, 1e-12,
                why="the fitted additive model re-evaluated by neural_scores(form='concat'), relative to max |T_c|: "
                    "rounding only (the concatenated MLP is the additive one, NEURAL-3)",
                label="NEURAL-8: the fitted weights give other scores in the concatenated form")
    # held-out MLP residual over the bilinear floor; NaN propagates
    ratio = {name: q.mlp_held_out_residual[name] / q.bilinear_residual[name] for name in TARGETS}
    stalled = [name for name in TARGETS if q.lbfgs_iterations[name] >= p.max_iter]
    hint = ""
    if p.hidden < 8:
        hint = f"h = {p.hidden} hidden units are too few for these targets: raise hidden"
    elif p.n < 48:
        hint = f"an n = {p.n} grid is memorised by {2 * p.d_prime * p.hidden + 2 * p.hidden} weights: raise n"
    elif stalled:
        hint = f"the fits of {', '.join(stalled)} used all {p.max_iter} iterations: raise max_iter"
    ratio_tol = CALIBRATION.get("mlp_held_out_over_bilinear_f1", p)
    if p.claim == "printed":
        worst = max(ratio, key=lambda name: (not np.isfinite(ratio[name]), ratio[name]))
        rec.at_most("printed_mlp_held_out_over_bilinear", float(ratio[worst]), ratio_tol.value,
                    why=f"the paper's statement read for every non-bilinear target: each held-out MLP residual below "
                        f"the bilinear floor times the calibrated ratio of -|q - k|; worst target {TARGETS[worst][0]}",
                    label="printed NEURAL-8: the MLP does not capture every non-bilinear target out of sample",
                    hint="" if stalled and hint.startswith("the fits") else hint)
    else:
        rec.at_most("mlp_held_out_over_bilinear_f1", ratio["f1"], ratio_tol,
                    label="NEURAL-8: the MLP does not beat the bilinear fit of -|q - k| on a fresh grid", hint=hint)
        rec.at_most("mlp_held_out_residual_f2", q.mlp_held_out_residual["f2"],
                    CALIBRATION.get("mlp_held_out_residual_f2", p),
                    label="NEURAL-8: the MLP does not fit |q_1 - k_2| on a fresh grid", hint=hint)
    asserted = set() if p.claim == "printed" else {"mlp_held_out_over_bilinear_f1", "mlp_held_out_residual_f2"}
    for name in TARGETS:
        for row, value in ((f"mlp_held_out_residual_{name}", q.mlp_held_out_residual[name]),
                           (f"mlp_held_out_over_bilinear_{name}", ratio[name])):
            if row not in asserted:
                rec.info(row, value)
        rec.info(f"mlp_residual_{name}", q.mlp_residual[name])
        rec.info(f"lbfgs_iterations_{name}", q.lbfgs_iterations[name])
    missed = [TARGETS[name][0] for name in TARGETS if not ratio[name] <= ratio_tol.value]
    rec.info("targets_not_captured_held_out", ", ".join(missed) or "none")
    rec.note("residuals are |fit - T_c|_F / |T_c|_F on the doubly-centred target; the MLP is fitted on one "
             f"{p.n} x {p.n} grid and judged on a fresh one from the same law (its {2 * p.d_prime * p.hidden + 2 * p.hidden}"
             " weights can memorise the training grid: the in-sample mlp_residual rows are not evidence); a held-out "
             "residual near 1 or above is no better than predicting zero")
    if p.claim == "printed":
        return "a shared-weight ReLU MLP captures every non-bilinear target out of sample, as printed"
    return (f"a bilinear form leaves most of cos(q.k) and q_1 k_1 q_2 k_2 unexplained; a shared-weight ReLU MLP "
            f"(h = {p.hidden}, = additive attention) fitted on one grid beats it on a fresh grid for -|q - k| and "
            f"fits |q_1 - k_2|; not captured out of sample: {', '.join(missed) or 'none'}")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
