"""Row sums and positivity of PDE-refined attention by axis, boundary and PDE (PDE-1).

The PDE paper (Sec. 3.2, Alg. 1, App. E eqs. 22-30) multiplies the refined ``A(N_t)`` by ``V`` as if
it were still an attention matrix (rows non-negative, summing to 1). Which it is depends on choices
the paper does not state. With ``r = alpha dt / ds^2`` and the second-difference matrix ``L``:

* key axis (``A <- A + r A L^T``): the step adds ``r A (L^T 1)`` to the row sums, so they are
  conserved iff the columns of ``L`` sum to zero: periodic and cell-centred Neumann. Ghost-point
  reflection changes them by ``r [(a_1 - a_0) + (a_(T-2) - a_(T-1))]`` per step (it conserves the
  trapezoid sum instead), Dirichlet loses ``r (a_0 + a_(T-1))``, fixed ends change them too;
* query axis (``L A``): row sums change by ``r L (A 1)``, zero for row-stochastic ``A`` iff the
  rows of ``L`` sum to zero (all boundaries but Dirichlet); both axes need both;
* non-negativity of a diffusion step holds iff ``r <= 1/2`` (one axis; ``1/4`` for both);
* the wave (eqs. 26-27) and central advection conserve row sums like diffusion; the wave does not
  keep entries non-negative; central advection-diffusion does iff ``|beta| dt / (2 ds) <= r <= 1/2``
  (so it does at the paper's alpha = 0.1, beta = 0.03, dt = 1);
* the reaction term ``beta A (1 - A)`` (eq. 30) adds ``beta dt (1 - sum_j A_ij^2) > 0`` to each
  row sum per step.

``claim="printed"`` asserts the implicit claim that ``A(N_t)`` stays row-stochastic and
non-negative for every PDE, axis and boundary; it fails.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import spectral
from manifolds.references import pde as pde_module
from spectral.floor.backend import to_numpy, zeros_on
from spectral.floor.validation import InputError, child_rng
from verify.core.check import Check, Context
from verify.core.params import Int, Ints, Real, check_resolved
from verify.core.reduce import least, worst
from verify.core.result import Recorder

CHECK = Check("pde_conservation", devices=("cpu", "gpu"),
              printed="that A(N_t) stays row-stochastic and non-negative for every PDE, axis and boundary, "
                      "which fails")

_EPS = float(np.finfo(float).eps)
_AXES = ("key", "query", "both")
_BOUNDARIES = ("periodic", "neumann", "reflect", "dirichlet", "fixed")
_PDES = ("diffusion", "wave", "reaction-diffusion", "advection-diffusion")
# combinations whose one-step map conserves every row sum of a row-stochastic A
_CONSERVING = {"key": ("periodic", "neumann"), "query": ("periodic", "neumann", "reflect", "fixed"),
               "both": ("periodic", "neumann")}
#: The wave's first negative entry appears near c t = 1.3 tokens of travel (a softmax row's peak follows ~J_0(2 c t),
#: zero at c t = 1.2; measured 1.3 at T = 16 and 64, seeds 0-4, min entry -0.15 by c t = 3). Runs with
#: c dt max(steps) below WAVE_NEGATIVE_CT add one wave run to c t = WAVE_NEGATIVE_CT (3 / (c dt) steps at the
#: smallest size: 8.5 us a step, 2.6 s at the floor c dt = WAVE_MIN_COURANT).
WAVE_NEGATIVE_CT = 3.0
WAVE_MIN_COURANT = 1e-5
#: the Fig. 16 setting: T = 64, query row 32, N_t in {0, 1, 2, 4, 8}
FIG16_SIZE, FIG16_ROW, FIG16_STEPS = 64, 32, (0, 1, 2, 4, 8)


@CHECK.parameters
class Params:
    sizes: tuple = Ints((16, 64, 256), "Sequence lengths T of the random softmax A(0)", low=8, high=1024,
                        unit="tokens")
    steps: tuple = Ints((1, 4, 100), "Step counts N_t", low=1, high=1000)
    dt: float = Real(1.0, "Pseudo-time step (the paper leaves it unstated; 1 here)", low=0.0, high=5.0,
                     low_open=True)
    alpha: float = Real(0.1, "Diffusion coefficient (PDE Table 5: 0.1); r = alpha dt must be <= 1/4 (stable on "
                             "both axes)", low=0.0, low_open=True)
    c: float = Real(0.15, "Wave speed (PDE Table 11: 0.15); the Courant number c dt must be in [1e-5, 0.7): the "
                    "wave's first negative entry appears near c t = 1.3, so a run to c t = 3 takes 3 / (c dt) steps "
                    "(3e5, ~2.6 s at the floor; more below it); below 0.7 (~1 / sqrt 2) it is stable on both axes",
                    low=0.0, low_open=True)
    beta_reaction: float = Real(0.02, "Reaction rate of R(A) = beta A (1 - A) (PDE Table 5: 0.02)", low=0.0,
                                high=1.0, low_open=True)
    beta_advection: float = Real(0.03, "Advection speed (PDE Table 5: 0.03), with |beta| dt / 2 <= r", low=-0.5,
                                 high=0.5)
    d: int = Int(16, "Head dimension of Q, K", low=1, high=256)

    def resolve(self):
        """The rules between parameters: stability on both axes and cell Peclet <= 2."""
        r = self.alpha * self.dt
        if r > 0.25:
            raise InputError(f"alpha must keep r = alpha dt <= 0.25 (stable on both axes), got r = {r:g}")
        check_resolved("alpha and dt", r, "r = alpha dt")
        check_resolved("c and dt", self.c * self.dt, "c dt")
        if self.c * self.dt < WAVE_MIN_COURANT:
            raise InputError(f"c must keep the Courant number c dt >= {WAVE_MIN_COURANT:g}: the wave's first negative "
                             f"entry appears only after c t ~ 1.3 tokens of travel, i.e. {WAVE_NEGATIVE_CT:g} / (c dt) "
                             f"steps (more than {WAVE_NEGATIVE_CT / WAVE_MIN_COURANT:.0e} below it), got c dt = "
                             f"{self.c * self.dt:g}")
        check_resolved("beta_reaction and dt", self.beta_reaction * self.dt, "beta_reaction dt")
        if self.c * self.dt >= 0.7:
            raise InputError(f"c must keep the Courant number c dt < 0.7 (stable on both axes), got "
                             f"{self.c * self.dt:g}")
        if abs(self.beta_advection) * self.dt / 2 > r:
            raise InputError(f"beta_advection must satisfy |beta| dt / 2 <= r = {r:g} (cell Peclet <= 2), "
                             f"got {self.beta_advection:g}")
        return self


@dataclasses.dataclass(frozen=True)
class Rows:
    """One PDE of the Fig. 16 setting, at N_t = FIG16_STEPS."""

    #: row 32 of A(N_t), shape (len(FIG16_STEPS), 64)
    rows: np.ndarray
    #: max_i |sum_j A_ij(N_t) - 1| of the whole matrix
    row_sum_deviation: np.ndarray
    #: smallest entry of the whole matrix
    min_entry: np.ndarray


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What pde_conservation measures; the tables are keyed by (pde, axis, boundary)."""

    #: worst max_i |sum_j A_ij(N_t) - 1| over sizes and steps
    row_sum_deviation: dict[tuple[str, str, str], float]
    #: smallest entry of A(N_t) over sizes and steps
    min_entry: dict[tuple[str, str, str], float]
    #: whether the one-step operator keeps the row sums of a row-stochastic A (its column / row sums vanish)
    conserving: dict[tuple[str, str, str], bool]
    #: worst |observed - predicted| one-step row-sum change of the linear PDEs (predicted A M^T 1 + M A 1)
    one_step_row_sum_change_error: float
    #: worst change of the trapezoid-weighted row sums (diffusion, key axis, ghost reflection)
    reflect_key_trapezoid_sum_change: float
    #: worst |one-step row-sum increment - beta dt (1 - sum_j A_ij^2)| (reaction, key axis, conserving ends)
    reaction_one_step_increment_error: float
    #: smallest one-step row-sum increment of reaction-diffusion there, and the smallest beta dt (1 - sum_j A_ij^2)
    reaction_min_row_sum_increment: float
    reaction_min_row_sum_increment_closed_form: float
    #: one step from A = I: min entry at r = 1/2 (key axis) and 1/4 (both axes), the smaller of the two
    identity_min_entry_at_threshold: float
    #: the larger min entry at r = 0.55 (key axis) and 0.3 (both axes)
    identity_min_entry_beyond_threshold: float
    #: smallest entry of the wave run to pseudo-time c t = WAVE_NEGATIVE_CT (key axis, periodic, the smallest size),
    #: made when c dt max(steps) is below it (None otherwise: the runs above reach that far)
    wave_min_entry_travelled: float | None
    #: min entry of one central-advection step from A = I at cell Peclet 6, and the beta used there
    advection_strong_min_entry: float
    advection_strong_beta: float
    #: the Fig. 16 step counts N_t and the rows per PDE
    fig16_steps: tuple[int, ...]
    fig16: dict[str, Rows]


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Row sums and minima of A(N_t) for every PDE, axis, boundary, size and step count.

    The evolutions and their statistics compute in ``ctx.xp`` (the run's device); ``A(0)`` is drawn and
    the token-by-token operator matrices are built on the host.
    """
    xp = ctx.xp
    dt, alpha, c = p.dt, p.alpha, p.c
    r = alpha * dt
    betas = {"reaction-diffusion": p.beta_reaction, "advection-diffusion": p.beta_advection}
    sum_dev = {}     # (pde, axis, boundary) -> worst max_i |sum_j A_ij - 1| over sizes and steps
    min_entry = {}   # (pde, axis, boundary) -> smallest entry over sizes and steps
    conserving = {}  # (pde, axis, boundary) -> whether the one-step operator keeps row sums of a stochastic A
    one_step = 0.0   # worst |observed - predicted| one-step row-sum change of the linear PDEs
    trapezoid = 0.0  # worst change of the trapezoid-weighted row sums (reflect, key axis, diffusion)
    reaction_gap = 0.0  # worst |increment - beta dt (1 - sum A^2)| (reaction, key, conservative)
    reaction_min_increment = reaction_min_expected = np.inf
    with ctx.timed("evolve"):
        for T in p.sizes:
            a0 = xp.asarray(pde_module.softmax_attention(child_rng(p.seed, "softmax", T), T, p.d))
            w = np.ones(T)
            w[[0, -1]] = 0.5
            w = xp.asarray(w)
            for pde in _PDES:
                for b in _BOUNDARIES:
                    # the one-step increment operator of the linear part (the wave's first step is
                    # A + dt^2 c^2 L A since V(0) = 0), from the token-by-token reference matrix
                    if pde == "wave":
                        op = pde_module.stencil_matrix(T, b, c * c * dt * dt)
                    elif pde == "advection-diffusion":
                        op = pde_module.stencil_matrix(T, b, r, p.beta_advection * dt / 2.0)
                    else:
                        op = pde_module.stencil_matrix(T, b, r)
                    cols_zero = bool(np.all(np.abs(op.sum(axis=0)) <= 1e-15))
                    rows_zero = bool(np.all(np.abs(op.sum(axis=1)) <= 1e-15))
                    # a NaN in the operator makes both flags false (a legitimate answer); the linear PDEs carry it
                    # through their predicted change (pred), the reaction term through finite_op below
                    finite_op = bool(np.all(np.isfinite(op)))
                    for axis in _AXES:
                        key = (pde, axis, b)
                        conserving[key] = ((axis == "query" or cols_zero) and (axis == "key" or rows_zero))
                        for n in p.steps:
                            a = spectral.evolve_attention(a0, pde=pde, steps=n, dt=dt, alpha=alpha, c=c,
                                                          beta=betas.get(pde, 0.0), axis=axis, boundary=b).attention
                            dev = _scalar(xp.max(xp.abs(xp.sum(a, axis=1) - 1.0)))
                            sum_dev[key] = worst(sum_dev.get(key, 0.0), dev)
                            min_entry[key] = least(min_entry.get(key, np.inf), _scalar(xp.min(a)))
                            if pde == "diffusion" and b == "reflect" and axis == "key":
                                trapezoid = worst(trapezoid, _scalar(xp.max(xp.abs(a @ w - a0 @ w))))
                        a1 = spectral.evolve_attention(a0, pde=pde, steps=1, dt=dt, alpha=alpha, c=c,
                                                       beta=betas.get(pde, 0.0), axis=axis, boundary=b).attention
                        if pde != "reaction-diffusion":
                            pred = zeros_on(a0, (T,))
                            if b == "fixed" and axis == "both":  # the frame is held: D (A op^T + op A) D
                                opx = xp.asarray(op)
                                inc = a0 @ opx.T + opx @ a0
                                inc[:, 0] = 0.0
                                inc[:, -1] = 0.0
                                inc[0, :] = 0.0
                                inc[-1, :] = 0.0
                                pred += xp.sum(inc, axis=1)
                            else:
                                if axis in ("key", "both"):
                                    pred += a0 @ xp.asarray(op.sum(axis=0))  # A (op^T 1)
                                if axis in ("query", "both"):
                                    pred += xp.asarray(op) @ xp.sum(a0, axis=1)  # op (A 1)
                            one_step = worst(one_step, _scalar(xp.max(xp.abs(xp.sum(a1, axis=1) - 1.0 - pred))))
                        elif axis == "key" and (cols_zero or not finite_op):
                            # conserving ends (a non-finite operator cannot say it is not one: its gap is NaN)
                            inc = xp.sum(a1, axis=1) - xp.sum(a0, axis=1)
                            expect = p.beta_reaction * dt * (1.0 - xp.sum(a0 * a0, axis=1))
                            gap = _scalar(xp.max(xp.abs(inc - expect))) if finite_op else math.nan
                            reaction_gap = worst(reaction_gap, gap)
                            reaction_min_increment = least(reaction_min_increment, _scalar(xp.min(inc)))
                            reaction_min_expected = least(reaction_min_expected, _scalar(xp.min(expect)))
        travelled = None
        if c * dt * max(p.steps) < WAVE_NEGATIVE_CT:  # the runs above end before the wave's first negative entry
            t_min = min(p.sizes)
            a0 = xp.asarray(pde_module.softmax_attention(child_rng(p.seed, "softmax", t_min), t_min, p.d))
            steps = math.ceil(WAVE_NEGATIVE_CT / (c * dt))
            travelled = _scalar(xp.min(spectral.evolve_attention(a0, pde="wave", steps=steps, dt=dt, c=c,
                                                                 boundary="periodic").attention))
    return Quantities(row_sum_deviation=sum_dev, min_entry=min_entry, conserving=conserving,
                      wave_min_entry_travelled=travelled,
                      one_step_row_sum_change_error=one_step, reflect_key_trapezoid_sum_change=trapezoid,
                      reaction_one_step_increment_error=reaction_gap,
                      reaction_min_row_sum_increment=float(reaction_min_increment),
                      reaction_min_row_sum_increment_closed_form=float(reaction_min_expected),
                      **_positivity_thresholds(r, dt, xp), fig16_steps=FIG16_STEPS, fig16=_figure16(p, xp))


def _scalar(x) -> float:
    """A 0-d result of the run's namespace as a host float (one transfer)."""
    return float(to_numpy(x))


def _positivity_thresholds(r, dt, xp) -> dict:
    """Non-negativity of one step from A = I: the weight 1 - 2r (1 - 4r both axes) decides."""
    eye = xp.eye(32, dtype=xp.float64)
    mins = {}
    for label, axis, rr in (("key_r0.5", "key", 0.5), ("key_r0.55", "key", 0.55),
                            ("both_r0.25", "both", 0.25), ("both_r0.3", "both", 0.3)):
        res = spectral.evolve_attention(eye, steps=1, dt=1.0, alpha=rr, axis=axis, boundary="periodic",
                                        allow_unstable=True)
        mins[label] = _scalar(xp.min(res.attention))
    strong = 3.0 * 2.0 * r / dt  # cell Peclet 6: weight r - beta dt / 2 = -2 r < 0
    res = spectral.evolve_attention(eye, pde="advection-diffusion", steps=1, dt=dt, alpha=r / dt, beta=strong,
                                    boundary="periodic", allow_unstable=True)
    return dict(identity_min_entry_at_threshold=least(mins["key_r0.5"], mins["both_r0.25"]),
                identity_min_entry_beyond_threshold=worst(mins["key_r0.55"], mins["both_r0.3"]),
                advection_strong_min_entry=_scalar(xp.min(res.attention)), advection_strong_beta=strong)


def _figure16(p: Params, xp) -> dict[str, Rows]:
    """PDE Fig. 16 setting: T = 64, key axis, Neumann, N_t in {0, 1, 2, 4, 8}, row T/2 of each PDE."""
    row = FIG16_ROW
    a0 = xp.asarray(pde_module.softmax_attention(child_rng(p.seed, "figure16"), FIG16_SIZE, p.d))
    betas = {"reaction-diffusion": p.beta_reaction, "advection-diffusion": p.beta_advection}
    out = {}
    for pde in _PDES:
        rows = [a0[row, :]]
        devs, mins = [xp.max(xp.abs(xp.sum(a0, axis=1) - 1))], [xp.min(a0)]
        for n in FIG16_STEPS[1:]:
            a = spectral.evolve_attention(a0, pde=pde, steps=n, dt=p.dt, alpha=p.alpha, c=p.c,
                                          beta=betas.get(pde, 0.0)).attention
            rows.append(a[row, :])
            devs.append(xp.max(xp.abs(xp.sum(a, axis=1) - 1)))
            mins.append(xp.min(a))
        out[pde] = Rows(rows=to_numpy(xp.stack(rows)), row_sum_deviation=to_numpy(xp.stack(devs)),
                        min_entry=to_numpy(xp.stack(mins)))
    return out


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Conservation where the operator's column / row sums vanish, positivity thresholds, the reaction term."""
    r = p.alpha * p.dt
    sum_dev, min_entry, conserving = q.row_sum_deviation, q.min_entry, q.conserving
    n_max, t_max = max(p.steps), max(p.sizes)
    # rounding of a row sum after n steps: each step adds O(T) terms of size <= 1 (measured worst
    # 7.8e-15 at T = 256, n = 100 for the conserving combinations; bound 4 eps sqrt(T) n)
    tol_sum = 4 * _EPS * np.sqrt(t_max) * n_max
    if p.claim == "corrected":
        for pde in ("diffusion", "wave", "advection-diffusion"):
            worst = np.max([v for k, v in sum_dev.items() if k[0] == pde and conserving[k]])
            rec.at_most(f"{pde}_conserving_row_sum_deviation", worst, tol_sum,
                        why="rounding: 4 eps sqrt(T) N_t (measured <= 7.8e-15 at T = 256, N_t = 100) where the "
                            "columns (key axis) / rows (query axis) of the one-step operator sum to zero",
                        label=f"{pde} does not conserve row sums where the columns/rows of its operator sum to zero")
        changed = np.min([v for k, v in sum_dev.items() if k[0] != "reaction-diffusion" and not conserving[k]])
        rec.at_least("nonconserving_min_row_sum_change", changed, 1e3 * tol_sum,
                     why="where the column/row sums of the operator are non-zero the sums move by O(r a_end) "
                         "per step (smallest measured 0.06 at the defaults), far above rounding",
                     label="a boundary with non-zero column/row sums of the operator conserved the row sums")
        mismatched = [f"{a}:{b}" for a in _AXES for b in _BOUNDARIES
                      if conserving[("diffusion", a, b)] != (b in _CONSERVING[a])]
        rec.equal("conserving_pairs_mismatched", len(mismatched), 0,
                  why="closed form: the columns of L sum to zero for periodic and cell-centred Neumann, the rows "
                      "for every boundary but Dirichlet",
                  label=f"the (axis, boundary) pairs whose diffusion step conserves row sums differ: {mismatched}")
        rec.at_most("one_step_row_sum_change_error", q.one_step_row_sum_change_error, 8 * _EPS * np.sqrt(t_max),
                    why="one step of diffusion, wave or advection changes the row sums by A (M^T 1) + M (A 1) "
                        "(M the increment operator), up to rounding of O(T) sums (measured <= 5e-16)",
                    label="the row-sum change of one linear PDE step differs from A M^T 1 + M A 1")
        rec.at_most("reflect_key_trapezoid_sum_change", q.reflect_key_trapezoid_sum_change, tol_sum,
                    why="w^T L = 0 for w = (1/2, 1, ..., 1, 1/2) with ghost reflection: the trapezoid sum is "
                        "conserved exactly (rounding as above)",
                    label="ghost reflection does not conserve the trapezoid-weighted row sums")
        rec.at_most("reaction_one_step_increment_error", q.reaction_one_step_increment_error,
                    8 * _EPS * np.sqrt(t_max),
                    why="on conserving boundaries the Laplacian part keeps the sums, so one step adds exactly "
                        "beta dt sum_j a_j (1 - a_j) = beta dt (1 - sum_j a_j^2) (rounding of O(T) sums)",
                    label="the reaction term does not add beta dt (1 - sum A^2) per step")
        least_expected = q.reaction_min_row_sum_increment_closed_form
        rec.at_least("reaction_min_row_sum_increment", q.reaction_min_row_sum_increment, 0.5 * least_expected,
                     why="1 - sum_j a_j^2 >= 1 - max_j a_j > 0 for a softmax row: at least half the least beta dt "
                         f"(1 - sum_j a_j^2) of A(0) ({least_expected:.3g}; 0.6 beta dt at d = 16, 0.21 beta dt at "
                         "d = 1, whose peaked rows failed the old beta dt / 4: a wrong FAIL)",
                     label="the reaction term did not increase the row sums")
        diffusion_min = np.min([v for k, v in min_entry.items() if k[0] == "diffusion"])
        rec.at_least("diffusion_min_entry", diffusion_min, 0.0,
                     why="r <= 1/4: every stencil weight 1 - 2r (1 - 4r on both axes) and r is >= 0",
                     label="diffusion with r <= 1/4 produced a negative entry")
        adv_min = np.min([v for k, v in min_entry.items() if k[0] == "advection-diffusion"])
        rec.at_least("advection_min_entry", adv_min, 0.0,
                     why="|beta| dt / 2 <= r <= 1/4: the central-advection weights r -+ beta dt / 2 are >= 0",
                     label="advection-diffusion with cell Peclet <= 2 produced a negative entry")
        wave_min = np.min([v for k, v in min_entry.items() if k[0] == "wave"]
                          + ([] if q.wave_min_entry_travelled is None else [q.wave_min_entry_travelled]))
        rec.at_most("wave_min_entry", wave_min, -1e-6,
                    why="the wave overshoots once it has travelled c t ~ 1.3 tokens: entries of order -0.1 (measured "
                        "min -0.23 within 100 steps at c dt = 0.15; -0.15 at c t = 3, the run added when c dt "
                        "max(steps) < 3)",
                    label="the wave kept every entry non-negative")
        rec.at_least("identity_min_entry_at_threshold", q.identity_min_entry_at_threshold, 0.0,
                     why="r = 1/2 (one axis) and 1/4 (both axes): the centre weight 1 - 2r resp. 1 - 4r is exactly 0",
                     label="diffusion at the positivity threshold produced a negative entry")
        rec.at_most("identity_min_entry_beyond_threshold", q.identity_min_entry_beyond_threshold, -0.05,
                    why="beyond the threshold the centre weight is 1 - 2r = -0.1 (r = 0.55) and 1 - 4r = -0.2 "
                        "(r = 0.3, both axes)",
                    label="diffusion beyond r = 1/2 (1/4) kept a delta non-negative")
        rec.at_most("advection_strong_min_entry", q.advection_strong_min_entry, -r,
                    why="|beta| dt / 2 = 3 r: the upwind-side weight r - beta dt / 2 = -2 r < 0",
                    label="central advection with cell Peclet 6 kept a delta non-negative")
        rec.info("advection_strong_beta", q.advection_strong_beta)
    else:
        rec.at_most("printed_max_row_sum_deviation", np.max(list(sum_dev.values())), tol_sum,
                    why="printed reading: A(N_t) stays row-stochastic for every PDE, axis and boundary "
                        "(rounding 4 eps sqrt(T) N_t)",
                    label="PDE-1 as printed: A(N_t) is not row-stochastic for some PDE/axis/boundary")
        rec.at_least("printed_min_entry", np.min(list(min_entry.values())), 0.0,
                     why="printed reading: A(N_t) stays non-negative for every PDE, axis and boundary",
                     label="PDE-1 as printed: A(N_t) has negative entries")
    for key in (("reaction-diffusion", "key", "neumann"), ("diffusion", "key", "reflect"),
                ("diffusion", "key", "dirichlet"), ("diffusion", "query", "dirichlet")):
        rec.info(f"row_sum_deviation_{'_'.join(key)}", sum_dev[key])
    rec.info("min_entry_wave_key_neumann", min_entry[("wave", "key", "neumann")])
    rec.info("r", r)
    if p.claim == "corrected":
        return ("row sums of A(N_t) are conserved exactly iff the columns (key axis) or rows (query axis) of the "
                "second-difference matrix sum to zero (periodic / cell-centred Neumann); reflection, Dirichlet and "
                "fixed ends change them by r A L^T 1; the reaction term adds beta dt (1 - sum A^2) per row and step; "
                "diffusion keeps entries >= 0 iff r <= 1/2 (1/4 on both axes), the wave does not")
    return "A(N_t) stays row-stochastic and non-negative for every PDE, axis and boundary (PDE-1 as printed)"


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
