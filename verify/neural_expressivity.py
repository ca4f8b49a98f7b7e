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

Measured: the MLP lowers every residual well below the bilinear floor and fits ``|q_1 - k_2|``
exactly (one ReLU suffices after the double centring), but at ``h = 64`` it does not reach a 5%
residual on ``cos(q.k)`` or on the quartic, even with 10^4 iterations (0.32 and 0.10 on a 32 x 32
grid): the gain over a dot product is real, its size depends on ``h``. The property is that of additive attention in general, not new to Neural Attention.
"""

from __future__ import annotations

import numpy as np

from spectral.validation import check_int, child_rng
from verify.core.check import Check
from verify.core.result import Recorder
from verify.core.threads import single_blas_thread

CHECK = Check("neural_expressivity", claims=("NEURAL-8",))

#: target name -> (formula, function of the query and key arrays)
TARGETS = {
    "f1": ("-|q - k|", lambda q, k: -np.sqrt(np.sum((q[:, None, :] - k[None, :, :]) ** 2, axis=2))),
    "f2": ("|q_1 - k_2|", lambda q, k: np.abs(q[:, None, 0] - k[None, :, 1])),
    "f3": ("cos(q.k)", lambda q, k: np.cos(q @ k.T)),
    "f4": ("q_1 k_1 q_2 k_2", lambda q, k: (q[:, None, 0] * q[:, None, 1]) * (k[None, :, 0] * k[None, :, 1])),
}

#: The MLP residual must be at most this fraction of the bilinear one: measured <= 0.42 (f3) over seeds
#: 0-9 at the defaults; a width-1 MLP gives 3.3 (worse than bilinear on -|q - k|).
_GAIN = 0.5


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


class _AdditiveReLU:
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
    model = _AdditiveReLU(d, hidden)
    theta0 = np.concatenate([rng.standard_normal(2 * hidden * d) / np.sqrt(2 * d), rng.standard_normal(hidden),
                             rng.standard_normal(hidden) / np.sqrt(hidden)])
    tc = double_centre(target)
    res = minimize(model.loss, theta0, args=(q, k, tc, float(np.sum(tc * tc))), jac=True, method="L-BFGS-B",
                   options={"maxiter": max_iter, "maxfun": 2 * max_iter, "gtol": 1e-12, "ftol": 1e-15})
    return res.x, model, int(res.nit)


@CHECK.define
def run(*, n=32, d_prime=4, hidden=64, max_iter=300, seed=0, device="cpu"):
    """Best bilinear fit vs a shared-weight ReLU MLP fit of non-bilinear score targets (doubly centred).

    Parameters
    ----------
    n : int
        Queries and keys per grid (n x n pairs), in [8, 128].
    d_prime : int
        Query/key width d' (f2 and f4 use the first two coordinates), in [2, 16].
    hidden : int
        Hidden width h of the score MLP, in [1, 256].
    max_iter : int
        L-BFGS iterations per target, in [1, 20000].
    seed : int
        Seed of the queries, keys and initial weights.
    device : {"cpu"}
        Array device; this check runs on the host only.

    Returns
    -------
    CheckResult
        Passes when the bilinear residual of cos(q.k) stays >= 0.9 and of the quartic >= 0.75, the
        one of |q_1 - k_2| and -|q - k| is clearly nonzero, -|q - k|^2 is fitted exactly, and the
        MLP residual is at most half the bilinear one on every target (below 1% on |q_1 - k_2|).
    """
    from spectral import ScoreMLP, neural_scores

    n = check_int("n", n, low=8, high=128)
    d_prime = check_int("d_prime", d_prime, low=2, high=16)
    hidden = check_int("hidden", hidden, low=1, high=256)
    max_iter = check_int("max_iter", max_iter, low=1, high=20000)
    rec = Recorder()
    rng = child_rng(seed, "grid")
    q = rng.standard_normal((n, d_prime))
    k = rng.standard_normal((n, d_prime))
    held = child_rng(seed, "held-out")
    q_new = held.standard_normal((n, d_prime))
    k_new = held.standard_normal((n, d_prime))

    with rec.timed("bilinear"):
        bil = {name: bilinear_residual(q, k, f(q, k)) for name, (_, f) in TARGETS.items()}
        quad = bilinear_residual(q, k, -np.sum((q[:, None, :] - k[None, :, :]) ** 2, axis=2))
    rec.at_most("bilinear_residual_l2_squared", quad, 1e-12,
                why="-|q-k|^2 = 2 q.k - |q|^2 - |k|^2: bilinear plus biases, fitted exactly up to rounding "
                    "(measured <= 1e-15)",
                label="NEURAL-8: -|q - k|^2 is not fitted by a bilinear form plus biases")
    floors = {"f3": (0.9, "orthogonal to every q_a k_b in expectation (even in q); on the grid the fit only picks "
                          "up sampling noise: measured min 0.957 over seeds 0-499 at the defaults"),
              "f4": (0.75, "orthogonal to every q_a k_b in expectation (odd moments), but heavy-tailed, so the "
                           "sampling noise the fit picks up is larger: measured min 0.817, 1% quantile 0.897 over "
                           "seeds 0-499"),
              "f1": (0.1, "not bilinear: measured min 0.227 over seeds 0-499"),
              "f2": (0.1, "not bilinear: measured min 0.325 over seeds 0-499")}
    for name, (floor, why) in floors.items():
        rec.at_least(f"bilinear_residual_{name}", bil[name], floor, why=f"{TARGETS[name][0]}: {why}",
                     label=f"NEURAL-8: a bilinear form fits {TARGETS[name][0]}")

    mlp_res, nits, held_res = {}, {}, {}
    toolkit_err = 0.0
    with rec.timed("mlp_fits"), single_blas_thread():
        for name, (_, f) in TARGETS.items():
            target = f(q, k)
            theta, model, nit = fit_additive_relu(q, k, target, hidden=hidden, max_iter=max_iter,
                                                  rng=child_rng(seed, "init", name))
            tc = double_centre(target)
            mine = double_centre(model.scores(theta, q, k))
            mlp_res[name] = float(np.linalg.norm(mine - tc) / np.linalg.norm(tc))
            nits[name] = nit
            # the fitted weights as Neural Attention, evaluated by the toolkit in the concatenated form
            W1, W2, b, w = model.unpack(theta)
            mlp = ScoreMLP(d_prime, d_prime, hidden, rng=0, activation="relu")
            mlp.W_h, mlp.b_h, mlp.w_a, mlp.b_a = np.concatenate([W1, W2], axis=1), b, w, 0.0
            theirs = double_centre(np.asarray(neural_scores(q, k, mlp, form="concat")))
            toolkit_err = max(toolkit_err, float(np.max(np.abs(theirs - mine)) / np.max(np.abs(tc))))
            t_new = double_centre(f(q_new, k_new))
            held_res[name] = float(np.linalg.norm(double_centre(model.scores(theta, q_new, k_new)) - t_new)
                                   / np.linalg.norm(t_new))
    rec.at_most("toolkit_evaluation_error", toolkit_err, 1e-12,
                why="the fitted additive model re-evaluated by neural_scores(form='concat'), relative to max |T_c|: "
                    "rounding only (the concatenated MLP is the additive one, NEURAL-3)",
                label="NEURAL-8: the fitted weights give other scores in the concatenated form")
    worst = max(mlp_res[name] / bil[name] for name in TARGETS)
    stalled = [name for name in TARGETS if nits[name] >= max_iter]
    hint = ""
    if hidden < 8:
        hint = f"h = {hidden} hidden units are too few for these targets: raise hidden"
    elif stalled:
        hint = f"the fits of {', '.join(stalled)} used all {max_iter} iterations: raise max_iter"
    rec.at_most("mlp_over_bilinear_residual", worst, _GAIN,
                why="largest ratio of MLP to bilinear residual over the four targets: measured 0.28-0.42 (always "
                    "cos(q.k)) over seeds 0-9 at the defaults; h = 1 gives 3.3",
                label="NEURAL-8: the MLP does not beat the bilinear fit on every target", hint=hint)
    rec.at_most("mlp_residual_f2", mlp_res["f2"], 0.01,
                why="relu(q_1 - k_2) = (|q_1 - k_2| + q_1 - k_2) / 2 and the linear part is removed by the double "
                    "centring: one unit fits it exactly; measured <= 6e-5 over seeds 0-9",
                label="NEURAL-8: the MLP does not fit |q_1 - k_2|", hint=hint)
    for name in TARGETS:
        if name != "f2":  # f2 has its own assertion above
            rec.info(f"mlp_residual_{name}", mlp_res[name])
        rec.info(f"mlp_held_out_residual_{name}", held_res[name])
        rec.info(f"lbfgs_iterations_{name}", nits[name])
    below = [name for name in TARGETS if mlp_res[name] < 0.05]
    rec.info("targets_below_5_percent", ", ".join(below) or "none")
    rec.note("residuals are |fit - T_c|_F / |T_c|_F on the doubly-centred target; held-out residuals use a fresh "
             f"{n} x {n} grid and are not asserted (a fit of {2 * d_prime * hidden + 2 * hidden} weights to "
             f"{n * n} values also memorises)")
    rec.array("residual_targets", np.array(list(TARGETS)))
    rec.array("residual_bilinear", np.array([bil[name] for name in TARGETS]))
    rec.array("residual_mlp", np.array([mlp_res[name] for name in TARGETS]))
    rec.array("residual_mlp_held_out", np.array([held_res[name] for name in TARGETS]))
    return rec.finish(f"a bilinear form leaves most of cos(q.k) and q_1 k_1 q_2 k_2 unexplained; a shared-weight "
                      f"ReLU MLP (h = {hidden}, = additive attention) at most halves every bilinear residual and "
                      "fits |q_1 - k_2| exactly")


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
