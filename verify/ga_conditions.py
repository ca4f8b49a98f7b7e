"""When do n Gaussian tokens follow the Gaussian solution at n^(-1/2)? The softmax coupling condition (GA-6).

GA-1 .. GA-4 (:mod:`verify.ga_moments`) check that the empirical moments of ``n`` tokens converge to the
Gaussian solution of the Transformer PDE (Castin, Ablin, Carrillo & Peyre, arXiv 2501.18322) at
``n^(-1/2)``, in settings chosen well inside a condition that the paper does not state. The finite-``n``
softmax velocity ``sum_j e^(beta <x, B x_j>) V x_j / sum_j e^(beta <x, B x_j>)`` is a self-normalised
importance sampler of the tilted Gaussian, with weights ``w(x, y) = e^(beta <B^T x, y>)``. Whitening
``x = alpha + Sigma^(1/2) u``, ``y = alpha + Sigma^(1/2) v`` and writing ``kappa`` for the largest singular
value of ``beta Sigma^(1/2) B Sigma^(1/2)``:

* the fluctuation of a moment right-hand side, ``(1/n^2) sum_(i,j) h(x_i, y_j)``, is led by its projection
  ``(1/n) sum_j h_1(y_j)`` with ``h_1(v) ~ exp(kappa^2 v^2 / (2 (1 + kappa^2)))`` along the top direction
  (a Gaussian integral over ``u``). ``h_1(y)`` has a finite variance iff ``kappa < 1``; beyond, its tail
  index is ``(1 + kappa^2) / kappa^2 < 2`` and the sum obeys a stable law: the error decays like
  ``n^(-1/(1 + kappa^2))``, not ``n^(-1/2)``;
* the per-token weights' relative variance ``E[w^2]/E[w]^2 = e^(|beta Sigma^(1/2) B^T (x - alpha)|^2 ...)``
  averaged over ``x`` is finite iff ``kappa < 1/sqrt(2)`` (the degenerate part; it only shifts constants).

So the mean-field rate ``n^(-1/2)`` for Gaussian data needs ``kappa(t) < 1`` along the flow. For
``V = lambda I`` the covariance blows up at ``T*`` (GA-5) and ``kappa(t) -> infinity`` as ``t -> T*``: the
rate degrades before the blow-up, and at ``T*`` the particles' covariance stays finite (every velocity is
a convex combination of ``V x_j``) while the limit's is infinite.

The check isolates the mechanism without time stepping: ``n`` i.i.d. tokens of ``N(0, 1)`` in ``d = 1``
(``V = 1``, ``B = kappa``, ``beta = 1``), their softmax velocities from :func:`spectral.attention_velocity`,
and the mean and covariance right-hand sides ``v_bar`` and ``(2/n) sum_i (x_i - m)(v_i - v_bar)`` against the
exact ``(1 + kappa Sigma_n) m`` and ``2 kappa Sigma_n^2`` at the sample's own moments
(:func:`manifolds.references.gaussian_attention.moment_rhs`); the error is ``sqrt(e_mean^2 + e_cov^2)`` with
``e_mean = (v_bar - exact) / kappa`` and ``e_cov = (... - exact) / (2 kappa)``.
Its fitted order (``verify.rates``, 95 % interval) is ``-1/2`` at ``kappa = 0.3`` (within a
pre-asymptotic spread, the calibration table's) and ``-1/(1 + kappa^2) = -0.2`` at ``kappa = 2``, with
its slowly varying corrections: the ``n^(-1/2)`` claim fails there. The full tier adds
the crossover ``kappa = 0.6 .. 2`` and particle flows toward the blow-up (``T / T* = 0.3 .. 0.9``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

import spectral
from manifolds.references.gaussian_attention import GaussianAttention, moment_flow, moment_rhs
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.memory import PathNeed
from verify.core.params import Flag, Int, Ints, Reals
from verify.core.result import Recorder
from verify.core.threads import single_blas_thread
from verify.rates import RateQuantities, decide_rate

__all__ = ["CHECK", "CALIBRATION", "Params", "Quantities", "run", "main", "predicted_order", "FLOW_FRACTIONS"]

CHECK = Check("ga_conditions", devices=("cpu", "gpu"))

DEFAULT_KAPPAS = (0.3, 2.0)
FULL_KAPPAS = (0.3, 0.6, 0.9, 1.2, 2.0, 3.0)
DEFAULT_SIZES = (64, 128, 256, 512, 1024)
#: score entries computed together: samples are split into chunks of at most this many n x n entries (256 MiB)
CHUNK_ENTRIES = 2**25
FULL_SIZES = (128, 256, 512, 1024, 2048, 4096)
#: sizes of the full tier's particle flows (144 field evaluations each: n = 4096 would take hours here)
FLOW_SIZES = (64, 128, 256, 512, 1024)
#: the particle flows of the full tier: d = 1, B = 0.25, V = 1, N(0, 1) at t = 0 (T* = 2), at these fractions of T*
FLOW_B = 0.25
FLOW_FRACTIONS = (0.3, 0.6, 0.8, 0.9)

_SEEDS = {"seed": tuple(range(10))}
_VALID = {"repeats": (64, None), "sizes": ((64, 128, 256, 512, 1024),)}
CALIBRATION = Calibration(
    Tolerance("kappa*_finite_variance_order_deviation", 0.3, measured=0.228, over=_SEEDS, valid=_VALID,
              why="the farther end of the fitted order's 95 % interval from -1/2 at kappa = 0.3 (AVX-512 host): "
                  "the orders sit near -1/2, a little above it, at n <= 1024 (the weights' higher moments are "
                  "heavy, the asymptote slow), the intervals +-0.1; a non-converging implementation (order 0 or "
                  "above) deviates by 0.5 and more"),
    Tolerance("kappa*_heavy_tail_order_deviation", 0.15, measured=0.121, over=_SEEDS, valid=_VALID,
              why="the farther end of the fitted order's 95 % interval from -1/(1 + kappa^2) = -0.2 at kappa = 2 "
                  "(AVX-512 host): a stable law's mean log error with its slowly varying corrections; an error "
                  "decaying like n^-1/2 deviates by 0.3, a non-converging one by 0.2 and more"),
)


def predicted_order(kappa: float) -> float:
    """``-1/2`` for ``kappa <= 1``, ``-1/(1 + kappa^2)`` beyond (module docstring)."""
    return -0.5 if kappa <= 1.0 else -1.0 / (1.0 + kappa * kappa)


@CHECK.parameters
class Params:
    kappas: tuple = Reals(None, "Coupling strengths kappa = beta |Sigma^(1/2) B Sigma^(1/2)| (d = 1)", low=0.01,
                          high=10.0, auto="0.3, 2; with full 0.3, 0.6, 0.9, 1.2, 2, 3")
    sizes: tuple = Ints(None, "Numbers of tokens n (at least 3, increasing)", low=8, high=2**15, min_len=3,
                        auto="64 .. 1024 (doubling); with full 128 .. 4096", unit="tokens")
    repeats: int = Int(None, "Seeded samples per size", low=2, high=1024, auto="64")
    full: bool = Flag(False, "The kappa crossover, n up to 4096, and particle flows toward the blow-up (n up to "
                             "1024): 5 CPU minutes (107 s user, 186 s system), 13 minutes on a loaded 2-core host, "
                             "0.6 GB; on a GPU the (chunk, n, n) fields (256 MiB each) fit any device")

    def resolve(self):
        """Tier defaults; sizes increasing."""
        sizes = self.sizes if self.sizes is not None else (FULL_SIZES if self.full else DEFAULT_SIZES)
        if any(b <= a for a, b in zip(sizes, sizes[1:])):
            raise InputError(f"sizes must increase, got {tuple(sizes)}")
        kappas = self.kappas if self.kappas is not None else (FULL_KAPPAS if self.full else DEFAULT_KAPPAS)
        repeats = self.repeats if self.repeats is not None else 64
        return dataclasses.replace(self, sizes=tuple(sizes), kappas=tuple(kappas), repeats=repeats)


@CHECK.memory
def needs(p: Params) -> dict:
    """One chunk's ``(chunk, n, n)`` scores, three arrays of them (the flows' chunks are no larger)."""
    def estimate(n):
        return 24.0 * min(p.repeats, _chunk(n)) * n * n + (32 << 20)

    n = max(p.sizes)
    return {"velocities": PathNeed(estimate, n, "--sizes", 8, f"the softmax velocities of {p.repeats} x n = {n} "
                                   "tokens", "fewer --repeats")}


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What ga_conditions measures."""

    sizes: np.ndarray
    #: kappa -> ``[size, repeat]`` error of the mean and covariance right-hand sides (module docstring)
    rhs_errors: dict[float, np.ndarray]
    #: the full tier's flows (sizes FLOW_SIZES): T / T* -> ``[size, repeat]`` relative variance error at T, and
    #: kappa(T); empty otherwise
    flow_errors: dict[float, np.ndarray]
    flow_kappa: dict[float, float]


def _chunk(n: int) -> int:
    return max(1, CHUNK_ENTRIES // (n * n))


def _velocity(ctx, Y, kappa):
    """Softmax velocities of the tokens ``Y`` (``(repeats, n, 1)``) with ``B = kappa``, ``V = 1`` (a test seam)."""
    out = []
    chunk = _chunk(Y.shape[1])
    for s in range(0, Y.shape[0], chunk):  # chunk samples at a time: (chunk, n, n) scores at most
        v = spectral.attention_velocity(ctx.xp.asarray(Y[s:s + chunk]), beta=1.0, query_key=[[kappa]],
                                        geometry="euclidean")
        out.append(np.asarray(to_numpy(v), dtype=float))
    return np.concatenate(out, axis=0)


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Per kappa and size: the covariance right-hand side of n Gaussian tokens against the exact one."""
    shape = (len(p.sizes), p.repeats)
    errors = {float(k): np.empty(shape) for k in p.kappas}
    with single_blas_thread():
        for i, n in enumerate(p.sizes):
            Y = child_rng(p.seed, "ga_conditions", int(n)).standard_normal((p.repeats, int(n), 1))
            m = Y.mean(axis=1)
            var = ((Y - m[:, None, :]) ** 2).mean(axis=1)[:, 0]
            for k in p.kappas:
                with ctx.timed(f"kappa={k:g}"):
                    v = _velocity(ctx, Y, float(k))
                emp_cov = 2.0 * np.mean((Y - m[:, None, :])[..., 0] * (v - v.mean(axis=1, keepdims=True))[..., 0],
                                        axis=1)
                emp_mean = v.mean(axis=1)[:, 0]
                spec = GaussianAttention(1, beta=1.0, query_key=[[k]])
                exact = [moment_rhs(spec, [mu], [[s]]) for mu, s in zip(m[:, 0], var)]
                e_mean = (emp_mean - np.array([e[0][0] for e in exact])) / k
                e_cov = (emp_cov - np.array([e[1][0, 0] for e in exact])) / (2.0 * k)
                errors[float(k)][i] = np.hypot(e_mean, e_cov)
    flow_errors, flow_kappa = {}, {}
    if p.full:
        spec = GaussianAttention(1, beta=1.0, query_key=[[FLOW_B]])
        T_star = 1.0 / (2.0 * FLOW_B)
        times = [f * T_star for f in FLOW_FRACTIONS]
        ref = moment_flow(spec, [0.0], [[1.0]], times)
        for f, S in zip(FLOW_FRACTIONS, ref.covs):
            flow_kappa[f] = float(FLOW_B * S[0, 0])
            flow_errors[f] = np.empty((len(FLOW_SIZES), p.repeats))
        with single_blas_thread():
            for i, n in enumerate(FLOW_SIZES):
                X0 = child_rng(p.seed, "ga_conditions", "flow", int(n)).standard_normal((p.repeats, int(n), 1))
                parts = []
                for s in range(0, p.repeats, _chunk(n)):
                    with ctx.timed("flows"):
                        fl = spectral.attention_flow(ctx.xp.asarray(X0[s:s + _chunk(n)]), times=times, method="rk4",
                                                     dt=0.05,
                                                     **spec.flow_kwargs())
                    parts.append(np.asarray(to_numpy(fl.tokens), dtype=float))
                tokens = np.concatenate(parts, axis=1)
                for k, (f, S) in enumerate(zip(FLOW_FRACTIONS, ref.covs)):
                    flow_errors[f][i] = np.abs(tokens[k].var(axis=1)[:, 0] - S[0, 0]) / S[0, 0]
    return Quantities(sizes=np.asarray(p.sizes), rhs_errors=errors, flow_errors=flow_errors, flow_kappa=flow_kappa)


def decisions(q: Quantities, p) -> dict[float, object]:
    """kappa -> verify.rates.RateResult of the right-hand side's error (kind "equal" against the predicted order)."""
    out = {}
    for k, errs in q.rhs_errors.items():
        data = RateQuantities(sizes=np.asarray(q.sizes), errors=np.asarray(errs), deterministic=False)
        out[k] = decide_rate(data, claimed=predicted_order(k), kind="equal", tolerance=0.2, seed=p.seed)
    return out


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Order -1/2 below kappa = 1/sqrt(2); -1/(1 + kappa^2) above 1, where n^(-1/2) fails; the crossover reported."""
    texts = []
    for k, res in decisions(q, p).items():
        lo, hi = res.interval
        tag = f"kappa{k:g}"
        rec.info(f"{tag}_order", res.order)
        rec.info(f"{tag}_order_interval", f"[{lo:.4f}, {hi:.4f}]")
        texts.append(f"kappa {k:g}: {res.order:.2f} [{lo:.2f}, {hi:.2f}]")
        dev = float(max(abs(lo - predicted_order(k)), abs(hi - predicted_order(k))))
        if k <= 1.0 / np.sqrt(2.0):
            rec.at_most(f"{tag}_finite_variance_order_deviation", dev,
                        CALIBRATION.get(f"{tag}_finite_variance_order_deviation", p),
                        label=f"GA-6: at kappa = {k:g} (finite variance) the softmax moment error is not ~ n^-1/2 "
                              f"(order {res.order:.3f} [{lo:.3f}, {hi:.3f}])")
        elif k > 1.0:
            rec.at_most(f"{tag}_heavy_tail_order_deviation", dev, CALIBRATION.get(f"{tag}_heavy_tail_order_deviation", p),
                        label=f"GA-6: at kappa = {k:g} the softmax moment error does not decay like n^(-1/(1 + "
                              f"kappa^2)) = n^{predicted_order(k):.3f} (order {res.order:.3f} [{lo:.3f}, {hi:.3f}])")
            rec.at_least(f"{tag}_slower_than_sqrt_n", lo, -0.5 + 0.1,
                         why="the whole 95 % interval of the order lies above -1/2 + 0.1 (its lower end -0.19 .. -0.32 "
                             "at kappa = 2 over seeds 0-9): the mean-field rate n^-1/2 does not hold at this coupling",
                         label=f"GA-6: at kappa = {k:g} the error still decays like n^-1/2: the heavy tail is not seen")
    for f, errs in q.flow_errors.items():
        res = decide_rate(RateQuantities(sizes=np.asarray(FLOW_SIZES), errors=np.asarray(errs), deterministic=False),
                          claimed=-0.5, kind="equal", tolerance=0.2, seed=p.seed)
        rec.info(f"flow_T{f:g}Tstar_order", res.order)
        rec.info(f"flow_T{f:g}Tstar_interval", f"[{res.interval[0]:.4f}, {res.interval[1]:.4f}]")
        rec.info(f"flow_T{f:g}Tstar_kappa", q.flow_kappa[f])
    return ("n Gaussian tokens reproduce the Gaussian solution's covariance right-hand side at n^-1/2 only while the "
            "softmax coupling kappa = beta |Sigma^(1/2) B Sigma^(1/2)| stays below 1; beyond, the error decays like "
            "n^(-1/(1 + kappa^2)) (orders, 95 % intervals: " + "; ".join(texts) + ")")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
