"""The contract of a PDE refinement step (PDE-1, PDE-2), for the toolkit's step or your own function.

The PDE paper refines an attention matrix by explicit diffusion steps ``A <- A + r nabla_s^2 A``
(App. E eq. 23, ``r = alpha dt / ds^2``) and leaves open along which index the second difference acts
and how the sequence ends are treated. This check holds one step to the convention of
``manifolds.references.pde`` (built token by token from ghost values, independently of the toolkit):
``axis="key"`` is ``A + r A L^T``, ``"query"`` is ``A + r L A``, ``"both"`` their sum; ``L`` is the
unit-spacing second difference with the boundary ``periodic`` (ring), ``neumann`` (cell-centred zero
flux, ``a_(-1) = a_0``), ``reflect`` (ghost reflection, ``a_(-1) = a_1``), ``dirichlet`` (zero
outside) or ``fixed`` (end tokens unchanged).

The contract. An implementation is a function ``f(a, *, r, axis, boundary) -> a_next``: ``a`` a
float64 NumPy array of shape ``(T, T)``, ``r`` a float, ``axis`` one of "key", "query", "both" and
``boundary`` one of the five names; it returns the ``(T, T)`` array after one explicit diffusion step
(float64 or float32; anything ``numpy.asarray`` converts) and must not change ``a``. For every
requested axis, boundary and size ``T`` the check asserts:

1. ``step_error``: one step from a random softmax matrix and from a Gaussian matrix equals the
   reference ``A + r (A L^T | L A | both)`` within 16 eps relative to ``max |A|`` (rounding of a
   five-point update; the toolkit measured <= 2.6e-16; ``eps`` of the output's dtype here and below);
2. ``conserving_row_sum_deviation``: ``steps`` steps from a row-stochastic softmax matrix keep every
   row sum 1 within ``4 eps sqrt(T) steps`` where the one-step operator conserves them (PDE-1: key
   axis with periodic or cell-centred Neumann ends; query axis with every boundary but Dirichlet;
   both axes with periodic or Neumann);
3. ``stable_growth_rate`` and ``unstable_growth_rate`` (PDE-2): iterated at ``(1 - margin) r*`` and
   ``(1 + margin) r*``, with ``r* = 2 / mu_max`` from the closed-form eigenvalues of ``L``
   (``manifolds.references.pde.closed_form_limit``; half of it on both axes), the growth rate of
   ``|A|_F`` per step over the second half of ``ceil(log(1e6) / log(1 + 2 margin))`` steps from a
   Gaussian matrix is ``<= 1 + margin / 2`` below the limit (the step map's spectral radius is 1)
   and ``>= 1 + margin`` above it (its top mode grows by ``1 + 2 margin`` per step);
4. ``non_finite_outputs``: every output of the runs at or below the limit is finite;
5. ``arguments_unchanged``: ``f`` does not change ``a``.

A function that raises, runs past ``timeout`` seconds per call, or returns another shape or dtype, is
the user's code failing: one line naming it (exit 2). A third party's run ends with the contract's verdict on that function
(``[contract on mymod:step: holds]``), not the ledger's verdict on the paper. ``implementation``
"toolkit" is ``spectral.evolve_attention`` with one step (``dt = 1``, ``alpha = r``).

Sizes: the default ``T = 16, 33, 258, 301`` holds the step to short sequences and to two past 256,
even and odd, so that a step right only for short sequences (a fixed-size buffer, an index bug that
appears past 200 tokens) fails. Time: about 2 x 145 stability steps, 50 conservation steps and 2
reference steps per (axis, boundary, T); the toolkit's step takes about 9 s of CPU for the defaults
here (4 s each for T = 258 and 301).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import spectral
from manifolds.references import pde
from spectral.floor.validation import child_rng
from verify.core.check import Check, Context
from verify.core.implementation import Implementation, hold_to_contract, load
from verify.core.params import Int, Ints, Options, Real, Text
from verify.core.result import Recorder

CHECK = Check("pde_contract",
              host_only="the contract is for step functions f(a, ...) taking and returning NumPy arrays")

AXES = ("key", "query", "both")
BOUNDARIES = ("periodic", "neumann", "reflect", "dirichlet", "fixed")
#: the (axis, boundary) pairs whose one-step operator conserves the row sums of a row-stochastic A (PDE-1): the
#: columns of L sum to zero (key axis) / its rows sum to zero (query axis)
CONSERVING = {"key": ("periodic", "neumann"), "query": ("periodic", "neumann", "reflect", "fixed"),
              "both": ("periodic", "neumann")}
#: relative rounding bound of one step against the reference: a five-point update, in units of eps
STEP_EPS = 16
#: growth of the top mode the stability probe waits for (sets its number of steps)
GROWTH = 1e6
#: the default lengths: short ones (even and odd) and two past 256 (even and odd), where a step with a fixed-size
#: buffer or an index bug for long sequences shows
DEFAULT_SIZES = (16, 33, 258, 301)
#: seconds per call of a third party's step: one step on T = 301 takes about 1 ms in NumPy and 0.2 s as a Python loop
#: over its entries here; 10 s leaves 50x the loop, and a hung step ends the run within seconds
DEFAULT_TIMEOUT = 10.0


@CHECK.parameters
class Params:
    implementation: str = Text("toolkit", '"toolkit" (spectral.evolve_attention, one step) or '
                                          '"package.module:function": your step f(a, *, r, axis, boundary) returning '
                                          "the (T, T) array after one explicit diffusion step")
    sizes: tuple = Ints(DEFAULT_SIZES, "Sequence lengths T, even and odd (an odd T moves the periodic limit); the "
                                       "defaults pass 256 so that a step wrong only for long sequences fails",
                        low=4, high=1024, unit="tokens")
    axes: tuple = Options(AXES, AXES, "Axes the step is held to (key: A + r A L^T, query: A + r L A, both)")
    boundaries: tuple = Options(BOUNDARIES, BOUNDARIES, "Boundaries the step is held to")
    r: float = Real(0.1, "Step number r = alpha dt / ds^2 of the agreement and conservation runs (PDE Table 5: "
                         "alpha = 0.1, dt = 1); stable on both axes up to 1/4", low=0.0, high=0.25, low_open=True)
    steps: int = Int(50, "Steps of the conservation run", low=1, high=1000)
    margin: float = Real(0.05, "Relative distance of the stability probes from the limit r* (the probe runs "
                               "ceil(log(1e6) / log(1 + 2 margin)) steps: 145 at 0.05)", low=0.01, high=0.5)
    timeout: float = Real(DEFAULT_TIMEOUT, "Seconds one call of a third party's step may take (one step on T = 301 "
                                           "takes about 1 ms in NumPy, 0.2 s as a Python loop over its entries)",
                          low=0.0, high=86400.0, low_open=True, unit="s")

    def resolve(self):
        """The implementation loads."""
        if self.implementation != "toolkit":
            load(self.implementation, parameter="implementation", builtins=("toolkit",))
        return self

    @property
    def probe_steps(self) -> int:
        """Steps of each stability probe: the top mode grows by GROWTH at 1 + 2 margin per step."""
        return math.ceil(math.log(GROWTH) / math.log(1.0 + 2.0 * self.margin))


def _toolkit_step(a, *, r, axis, boundary):
    """One explicit diffusion step of the toolkit (spectral.evolve_attention, dt = 1, alpha = r)."""
    return spectral.evolve_attention(a, steps=1, dt=1.0, alpha=r, axis=axis, boundary=boundary,
                                     allow_unstable=True).attention


def _implementation(p) -> Implementation:
    if p.implementation == "toolkit":
        return Implementation("toolkit", _toolkit_step, user=False)
    return load(p.implementation, parameter="implementation", builtins=("toolkit",), timeout=p.timeout)


def _reference(a, r, axis, boundary):
    """One diffusion step (dt = 1, alpha = r) by the independent reference of manifolds.references.pde.

    Matrix products with the stencil's ghost values, and for ``fixed`` the public code's layer token by
    token (the end tokens of each acted axis are copied; on both axes the frame is held).
    """
    return pde.brute_evolve(np.asarray(a, dtype=float), pde="diffusion", steps=1, dt=1.0, alpha=r, axis=axis,
                            boundary=boundary)[0]


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What pde_contract measures on the step, per (axis, boundary, T) and worst over them."""

    #: the implementation ("toolkit" or "package.module:function")
    label: str
    #: max |f(A) - reference step| / max |A| per (axis, boundary, T), over a softmax and a Gaussian A
    step_error: dict[tuple[str, str, int], float]
    #: max_i |sum_j A_ij - 1| after `steps` steps from a softmax A, per conserving (axis, boundary, T)
    row_sum_deviation: dict[tuple[str, str, int], float]
    #: the closed-form limit r* and the growth rates of |A|_F per step below / above it, per (axis, boundary, T)
    limit: dict[tuple[str, str, int], float]
    stable_rate: dict[tuple[str, str, int], float]
    unstable_rate: dict[tuple[str, str, int], float]
    #: NaN or inf entries among the outputs at or below the limit, and the entries read
    non_finite_outputs: int
    output_entries: int
    #: calls of f and those after which `a` had changed
    calls: int
    mutating_calls: int
    #: the coarsest dtype f returned ("float64" or "float32"): its eps sets the rounding bounds
    output_dtype: str = "float64"


def _norm_rate(f, a0, steps: int) -> float:
    """Growth rate of |A|_F per step over the second half of `steps` steps of `f` from `a0` (NaN-propagating)."""
    a, half = a0, None
    for i in range(steps):
        a = f(a)
        if i + 1 == steps // 2:
            half = float(np.linalg.norm(a))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return float((np.linalg.norm(a) / half) ** (1.0 / (steps - steps // 2)))


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """One step against the reference, row sums over `steps` steps, growth rates below and above the limit."""
    fn = _implementation(p)
    counts = dict(calls=0, mutating=0, non_finite=0, entries=0, dtype=np.dtype(np.float64))
    step_error, sums, limits, stable, unstable = {}, {}, {}, {}, {}

    def step(a, r, axis, boundary, judged=True):
        raw, changed = fn.call(a, r=float(r), axis=axis, boundary=boundary)
        out = fn.array(raw, a.shape, what=f"step ({axis} axis, {boundary})")
        if np.finfo(out.dtype).eps > np.finfo(counts["dtype"]).eps:
            counts["dtype"] = out.dtype
        out = np.asarray(out, dtype=np.float64)
        counts["calls"] += 1
        counts["mutating"] += bool(changed)
        if judged:  # at or below the limit: every entry finite
            counts["entries"] += out.size
            counts["non_finite"] += int(out.size - np.count_nonzero(np.isfinite(out)))
        return out

    with ctx.timed("contract"), np.errstate(invalid="ignore", over="ignore"):
        for T in p.sizes:
            soft = pde.softmax_attention(child_rng(p.seed, "softmax", T), T)
            gauss = child_rng(p.seed, "gauss", T).standard_normal((T, T))
            for axis in p.axes:
                for b in p.boundaries:
                    key = (axis, b, T)
                    step_error[key] = float(np.max([
                        np.max(np.abs(step(a, p.r, axis, b) - _reference(a, p.r, axis, b))) / np.max(np.abs(a))
                        for a in (soft, gauss)]))
                    if b in CONSERVING[axis]:
                        a = soft
                        for _ in range(p.steps):
                            a = step(a, p.r, axis, b)
                        sums[key] = float(np.max(np.abs(a.sum(axis=1) - 1.0)))
                    limit = pde.closed_form_limit("diffusion", T, b, axis)
                    limits[key] = limit
                    lo, hi = (1.0 - p.margin) * limit, (1.0 + p.margin) * limit
                    stable[key] = _norm_rate(lambda a: step(a, lo, axis, b), gauss, p.probe_steps)
                    unstable[key] = _norm_rate(lambda a: step(a, hi, axis, b, judged=False), gauss, p.probe_steps)
    return Quantities(label=fn.name, step_error=step_error, row_sum_deviation=sums, limit=limits,
                      stable_rate=stable, unstable_rate=unstable, non_finite_outputs=counts["non_finite"],
                      output_entries=counts["entries"], calls=counts["calls"], mutating_calls=counts["mutating"],
                      output_dtype=str(counts["dtype"]))


def _worst(table: dict, *, lowest: bool = False) -> tuple[float, tuple]:
    """The worst value of a table (NaN first: a NaN is the worst of all) and its key."""
    keys = list(table)
    values = np.array([table[k] for k in keys], dtype=float)
    if np.any(np.isnan(values)):
        i = int(np.flatnonzero(np.isnan(values))[0])
    else:
        i = int(np.argmin(values) if lowest else np.argmax(values))
    return float(values[i]), keys[i]


def _where(key) -> str:
    axis, boundary, T = key
    return f"{axis} axis, {boundary}, T = {T}"


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """The step equals the reference; row sums kept where conserving; stable below r*, unstable above; finite."""
    name = q.label
    eps = float(np.finfo(np.dtype(q.output_dtype)).eps)
    third = hold_to_contract(rec, p.implementation, q, name,
                             why="a diffusion step at or below its stability limit maps finite matrices to finite "
                                 "matrices")
    err, at = _worst(q.step_error)
    rec.at_most("step_error", err, STEP_EPS * eps,
                why=f"one step of a five-point update against the token-by-token reference, relative to max |A|: "
                    f"rounding, {STEP_EPS} eps of {q.output_dtype} (the toolkit measured <= 2.6e-16)",
                label=f"{name}: one step differs from A + r (L applied along the axis) of manifolds.references.pde "
                      f"(worst at {_where(at)})",
                hint="the reference: neumann is cell-centred (a_(-1) = a_0), reflect mirrors (a_(-1) = a_1), "
                     "dirichlet is zero outside, fixed keeps the end tokens of each acted axis (the frame on both); "
                     "key axis A + r A L^T, query L A")
    if q.row_sum_deviation:
        dev, at = _worst(q.row_sum_deviation)
        tol = 4 * eps * math.sqrt(max(p.sizes)) * p.steps
        rec.at_most("conserving_row_sum_deviation", dev, tol,
                    why=f"PDE-1: where the columns (key axis) / rows (query axis) of L sum to zero the row sums of a "
                        f"stochastic A are conserved; rounding 4 eps sqrt(T) steps = {tol:.2g}",
                    label=f"{name}: {p.steps} steps do not keep the row sums 1 where the operator conserves them "
                          f"(worst at {_where(at)})")
    rate, at = _worst(q.stable_rate)
    rec.at_most("stable_growth_rate", rate, 1.0 + p.margin / 2,
                why=f"PDE-2: at (1 - {p.margin:g}) r* the step map's spectral radius is 1 (the slowest mode; the top "
                    f"one is damped by 1 - 2 margin), so |A| stops growing; bound half-way to the unstable rate",
                label=f"{name}: |A| grows below the stability limit r* = 2 / mu_max (worst at {_where(at)}, "
                      f"r* = {q.limit[at]:.4g})")
    rate, at = _worst(q.unstable_rate, lowest=True)
    rec.at_least("unstable_growth_rate", rate, 1.0 + p.margin,
                 why=f"PDE-2: at (1 + {p.margin:g}) r* the top mode of L grows by 1 + 2 margin per step, and after "
                     f"{p.probe_steps} steps it dominates |A|",
                 label=f"{name}: |A| does not grow above the stability limit r* = 2 / mu_max (worst at {_where(at)}, "
                       f"r* = {q.limit[at]:.4g})",
                 hint="a step that clamps r, or another stencil, has another limit")
    rec.holds("arguments_unchanged", q.mutating_calls == 0,
              why="the contract: f(a, ...) must not change a (a caller keeps the matrix it passed)",
              label=f"{name} changed its argument in {q.mutating_calls} of {q.calls} calls")
    rec.info("calls", q.calls)
    rec.info("largest_limit", max(q.limit.values()))
    rec.info("smallest_limit", min(q.limit.values()))
    pairs = f"{', '.join(p.axes)} axes x {', '.join(p.boundaries)}, T = {', '.join(map(str, p.sizes))}"
    text = (f"one step equals A + r (L applied along the axis) of the reference ({pairs}); row sums are kept where "
            f"the operator conserves them (PDE-1); the step is stable below r* = 2 / mu_max and grows above it "
            f"(PDE-2)")
    return f"contract of the step {name}: {text}" if third else f"the toolkit's PDE step: {text}"


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
