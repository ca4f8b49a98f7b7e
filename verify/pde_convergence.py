"""Thm. D.3: PL-type exponential convergence of (stochastic) gradient descent (PDE-13).

Synthetic least squares ``L(theta) = 1/2 |X theta - y|^2`` with ``X`` of shape (200, 50) and rank 30 and
noisy targets (``L* > 0``). ``L`` satisfies the PL inequality with ``gamma = sigma_min+^2`` (smallest
non-zero singular value) and is ``mu``-smooth with ``mu = sigma_max^2``.

* Full-batch GD with ``eta = 1/mu``: eq. (16) ``L(theta_t) - L* <= (1 - eta gamma)^t (L(theta_0) - L*)``
  holds. Eq. (15) ``|theta_t - theta*|^2 <= (1 - eta gamma)^t |theta_0 - theta*|^2`` holds only for
  ``theta*`` the projection of ``theta_0`` onto the solution set; for another minimiser (e.g. the
  minimum-norm one) the null-space part of ``theta_0 - theta*`` never moves.
* SGD (minibatches of 10 drawn with replacement, constant ``eta = 1/(2 mu)``): the excess loss stalls at
  a noise floor; its exact stationary value follows from the linear recursion of the second moment
  (solved here in the row space of X), and the printed eq. (16) "in expectation, under stochastic
  noise" fails after the transient. The PDE plays no role in the theorem.

``claim="printed"`` asserts eq. (15) with the minimum-norm minimiser and eq. (16) for SGD; both fail.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.memory import PathNeed
from verify.core.params import Int, Real
from verify.core.reduce import worst
from verify.core.result import Recorder

CHECK = Check("pde_convergence",
              host_only="a least-squares problem of at most 2000 x 200, stepped one minibatch at a time with "
                        "indices drawn on the host (3000 steps of (64, 10, 50) products at the defaults); the "
                        "noise floor is one dense solve of size rank^2",
              printed="eq. (15) with the minimum-norm minimiser and eq. (16) for SGD, which fail")

#: The measured tolerances (the others are exact algebra or bounds computed from theory next to their assertion).
CALIBRATION = Calibration(
    Tolerance("gd_eq15_min_norm_max_ratio", 1.2, measured=1.71, over={"seed": tuple(range(20))},
              why="with the minimum-norm minimiser the null-space part of theta_0 never moves, so the ratio grows "
                  "like (1 - eta gamma)^-t; eq. (15) holding would give <= 1"),
)


@CHECK.parameters
class Params:
    n: int = Int(200, "Rows of X (samples)", low=20, high=2000)
    p: int = Int(50, "Columns of X (parameters)", low=5, high=200)
    rank: int = Int(30, "Rank of X (< p, so the minimiser is not unique), in [2, p - 1]", low=2, high=199)
    noise: float = Real(0.5, "Standard deviation of the target noise (L* > 0 needs noise > 0)", low=0.0, high=10.0,
                        low_open=True)
    gd_steps: int = Int(300, "Full-batch gradient steps", low=10, high=5000)
    batch: int = Int(10, "SGD minibatch size (drawn with replacement), at most n", low=1, high=2000)
    sgd_steps: int = Int(3000, "SGD steps; the second half is averaged for the noise floor", low=500, high=50000)
    chains: int = Int(64, "Independent SGD runs averaged (the expectation in eq. 16)", low=8, high=1024)

    def resolve(self):
        """The rules between parameters: rank <= p - 1, rank < n, batch <= n."""
        if self.rank > self.p - 1:
            raise InputError(f"rank must be an integer in [2, {self.p - 1}], got {self.rank!r}")
        if self.rank >= self.n:
            raise InputError(f"rank must be < n = {self.n}, got {self.rank}")
        if self.batch > self.n:
            raise InputError(f"batch must be an integer in [1, {self.n}], got {self.batch!r}")
        return self


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What pde_convergence measures (excess losses are L(theta) - L*)."""

    #: PL constant sigma_min+^2, smoothness sigma_max^2, the minimal loss
    pl_gamma: float
    smoothness_mu: float
    l_star: float
    #: GD with eta = 1/mu: max over t of (excess loss) / ((1 - eta gamma)^t (L(theta_0) - L*))
    gd_eq16_max_ratio: float
    #: max over t of |theta_t - theta*|^2 / ((1 - eta gamma)^t |theta_0 - theta*|^2) for theta* the projection of
    #: theta_0 onto the minimisers, and for the minimum-norm minimiser
    gd_eq15_projected_max_ratio: float
    gd_eq15_min_norm_max_ratio: float
    #: GD excess loss at t = 1..gd_steps and its eq. (16) bound
    gd_excess_loss: np.ndarray
    pl_bound: np.ndarray
    #: SGD (eta = 1/(2 mu)): mean excess loss over the chains at t = 1..sgd_steps and its eq. (16) bound
    sgd_mean_excess_loss: np.ndarray
    pl_bound_sgd: np.ndarray
    #: exact stationary excess loss of SGD, the mean over the second half, its standard error (20 batch means)
    sgd_floor_predicted: float
    sgd_floor_measured: float
    sgd_floor_standard_error: float
    #: the eq. (16) bound for the SGD step at t = sgd_steps
    eq16_bound_at_end: float


#: the rounding of an excess loss L(theta) - L*, in units of eps L*: 64 (a sum of n squares and a difference)
LOSS_ROUNDING = 64

#: The SGD noise floor solves a rank^2 x rank^2 system built from Kronecker products (eye x H, H x eye,
#: H x H, F^T F and their sum): tracemalloc peaks 4.06 / 3.26 / 3.11 x 8 rank^4 bytes at rank 20 / 40 / 60
#: (n = 400); 4.5 x 8 rank^4 plus the (n, rank^2) feature matrix twice bounds them.
FLOOR_COPIES = 4.5


@CHECK.memory
def needs(p: Params) -> dict:
    """The noise floor's Kronecker system, O(rank^4): refused before it is built when it would not fit."""
    return {"noise-floor": PathNeed(lambda k: (8 << 20) + 8 * (FLOOR_COPIES * k ** 4 + 2 * p.n * k * k), p.rank,
                                    "--rank", 2, f"the SGD noise floor's rank^2 x rank^2 system at --rank {p.rank}")}


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """GD and SGD on a rank-deficient least-squares problem, and the exact SGD noise floor."""
    n, rank, chains, batch, sgd_steps = p.n, p.rank, p.chains, p.batch, p.sgd_steps
    rng = child_rng(p.seed, "problem")
    x = rng.standard_normal((n, rank)) @ rng.standard_normal((rank, p.p)) / math.sqrt(rank)
    y = x @ rng.standard_normal(p.p) + p.noise * rng.standard_normal(n)
    theta0 = rng.standard_normal(p.p)
    u, sv, vt = np.linalg.svd(x, full_matrices=False)
    gamma, mu = float(sv[rank - 1] ** 2), float(sv[0] ** 2)
    vk = vt[:rank].T  # basis of the row space
    theta_mn = vk @ ((u[:, :rank].T @ y) / sv[:rank])  # minimum-norm minimiser
    theta_proj = theta_mn + theta0 - vk @ (vk.T @ theta0)  # projection of theta_0 onto the minimisers

    def loss(th):
        res = x @ th - y[:, None] if th.ndim == 2 else x @ th - y
        return 0.5 * np.sum(res * res, axis=0)

    l_star = float(loss(theta_mn))
    with ctx.timed("gd"):
        eta = 1.0 / mu
        q = 1.0 - eta * gamma
        th = theta0.copy()
        l0 = float(loss(theta0)) - l_star
        d0_proj = float(np.sum((theta0 - theta_proj) ** 2))
        d0_mn = float(np.sum((theta0 - theta_mn) ** 2))
        r16 = r15p = r15mn = 0.0
        losses = []
        # the excess loss is a difference of O(L*) numbers: below 64 eps max(L*, 1) it is rounding, and eq. (16)'s
        # bound is not compared there (rank 10: the excess reached 7e-15, 2 ulp of L* = 20, against a bound of
        # 4e-15 at t = 300, a ratio of 1.74 made of rounding alone)
        loss_floor = LOSS_ROUNDING * np.finfo(float).eps * max(l_star, 1.0)
        for t in range(1, p.gd_steps + 1):
            th = th - eta * (x.T @ (x @ th - y))
            exc = float(loss(th)) - l_star
            losses.append(exc)
            if q ** t * l0 > loss_floor:
                r16 = worst(r16, exc / (q ** t * l0))
            r15p = worst(r15p, float(np.sum((th - theta_proj) ** 2)) / (q ** t * d0_proj))
            r15mn = worst(r15mn, float(np.sum((th - theta_mn) ** 2)) / (q ** t * d0_mn))
    with ctx.timed("sgd"):
        eta_s = 0.5 / mu
        srng = child_rng(p.seed, "minibatches")
        thetas = np.repeat(theta0[:, None], chains, axis=1)
        late = []
        mean_curve = np.empty(sgd_steps)
        for t in range(sgd_steps):
            idx = srng.integers(0, n, size=(chains, batch))
            xb = x[idx]  # (chains, batch, p)
            resid = np.einsum("cbp,pc->cb", xb, thetas) - y[idx]
            thetas = thetas - eta_s * (n / batch) * np.einsum("cbp,cb->pc", xb, resid)
            exc = loss(thetas) - l_star
            mean_curve[t] = float(exc.mean())
            if t >= sgd_steps // 2:
                late.append(exc)
        late = np.array(late)  # (steps/2, chains)
        floor_meas = float(late.mean())
        batches = np.array([part.mean() for part in np.array_split(late, 20, axis=0)])
        se = float(batches.std(ddof=1) / math.sqrt(len(batches)))
    excess0 = float(loss(theta0)) - l_star
    return Quantities(
        pl_gamma=gamma, smoothness_mu=mu, l_star=l_star, gd_eq16_max_ratio=r16, gd_eq15_projected_max_ratio=r15p,
        gd_eq15_min_norm_max_ratio=r15mn, gd_excess_loss=np.array(losses),
        pl_bound=q ** np.arange(1, p.gd_steps + 1) * l0, sgd_mean_excess_loss=mean_curve,
        pl_bound_sgd=(1 - eta_s * gamma) ** np.arange(1, sgd_steps + 1) * excess0,
        sgd_floor_predicted=_stationary_floor(x, y, theta_mn, vk, eta_s, batch), sgd_floor_measured=floor_meas,
        sgd_floor_standard_error=se, eq16_bound_at_end=(1 - eta_s * gamma) ** sgd_steps * excess0)


def _stationary_floor(x, y, theta_star, vk, eta, b):
    """Stationary E[L(theta) - L*] of SGD (minibatch of b drawn with replacement) near theta*.

    With ``e = theta - theta*`` in the row space (coordinates ``V_k^T e``), ``g = (1/b) sum_s z_s`` and
    ``z = n x_i (x_i^T e + r_i)`` (``r = X theta* - y``, ``X^T r = 0``): ``E[g] = H e`` and
    ``E[z z^T] = n sum_i x_i x_i^T (x_i^T M x_i + r_i^2)`` at ``E[e] = 0``, so the stationary second moment
    solves ``eta (H M + M H) - eta^2 (1 - 1/b) H M H - eta^2 (n / b) sum_i x_i x_i^T (x_i^T M x_i)
    = eta^2 (n / b) sum_i r_i^2 x_i x_i^T``; the excess loss is ``tr(H M) / 2``.
    """
    n = x.shape[0]
    xt = x @ vk
    k = xt.shape[1]
    h = xt.T @ xt
    eye = np.eye(k)
    f = np.einsum("ia,ib->iab", xt, xt).reshape(n, k * k)
    r = x @ theta_star - y
    op = (eta * (np.kron(eye, h) + np.kron(h, eye)) - eta ** 2 * (1 - 1 / b) * np.kron(h, h)
          - eta ** 2 * (n / b) * f.T @ f)
    m = np.linalg.solve(op, eta ** 2 * (n / b) * f.T @ (r * r)).reshape(k, k)
    return 0.5 * float(np.trace(h @ m))


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Eq. (16) for GD, eq. (15) with the right minimiser, the SGD noise floor."""
    rec.info("pl_gamma", q.pl_gamma)
    rec.info("smoothness_mu", q.smoothness_mu)
    rec.info("l_star", q.l_star)
    # rounding floor: the excess loss is a difference of O(|y|^2) numbers
    floor = 1e-9
    rec.at_most("gd_eq16_max_ratio", q.gd_eq16_max_ratio, 1.0 + floor,
                why="PL with gamma = sigma_min+^2 and eta = 1/mu: each row-space mode decays by (1 - eta h)^2t "
                    "<= (1 - eta gamma)^t (measured max ratio 0.89)",
                label="GD does not meet eq. (16)")
    if p.claim == "corrected":
        rec.at_most("gd_eq15_projected_max_ratio", q.gd_eq15_projected_max_ratio, 1.0 + floor,
                    why="theta* = projection of theta_0: theta_t - theta* stays in the row space, where it contracts "
                        "by (1 - eta h) <= (1 - eta gamma) per step (measured max ratio 0.55)",
                    label="GD does not meet eq. (15) with the projected minimiser")
        rec.at_least("gd_eq15_min_norm_max_ratio", q.gd_eq15_min_norm_max_ratio,
                     CALIBRATION.get("gd_eq15_min_norm_max_ratio", p),
                     label="eq. (15) held for a minimiser other than the projection of theta_0")
    else:
        rec.at_most("printed_eq15_min_norm_max_ratio", q.gd_eq15_min_norm_max_ratio, 1.0 + floor,
                    why="eq. (15) as printed with theta* a minimiser of L (here the minimum-norm one)",
                    label="eq. (15) as printed fails for the minimum-norm minimiser: |theta_t - theta*| stalls at "
                          "the null-space part of theta_0")

    floor_pred, floor_meas, se = q.sgd_floor_predicted, q.sgd_floor_measured, q.sgd_floor_standard_error
    bound_end = q.eq16_bound_at_end
    rec.info("sgd_floor_predicted", floor_pred)
    rec.info("sgd_floor_measured", floor_meas)
    rec.info("sgd_floor_standard_error", se)
    rec.info("eq16_bound_at_end", bound_end)
    if p.claim == "corrected":
        rec.close("sgd_noise_floor", floor_meas, floor_pred, atol=5 * se + 0.01 * floor_pred,
                  why="exact stationary second moment of SGD with replacement (linear recursion solved in the row "
                      "space); Monte Carlo error from 20 batch means, 5 standard errors + 1 % "
                      "(measured within 0.65 % over seeds 0-19)",
                  label="the SGD excess loss does not settle at the predicted noise floor")
        return ("GD with eta = 1/mu meets the PL bound (16), and (15) with theta* the projection of theta_0 onto the "
                "minimisers; SGD with constant steps stalls at its exact stationary noise floor, so (16) without a "
                "floor fails")
    rec.at_most("printed_sgd_eq16_ratio_at_end", floor_meas / bound_end, 1.0,
                why="eq. (16) as printed holds in expectation 'even under stochastic noise'",
                label="eq. (16) as printed fails for SGD: the excess loss stalls at the noise floor "
                      f"({floor_meas:.3g} against the bound {bound_end:.3g})")
    return "(15) holds for a minimiser theta* and (16) holds for SGD in expectation (Thm. D.3 as printed)"


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
