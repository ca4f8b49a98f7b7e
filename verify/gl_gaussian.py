"""Eigen-convergence of Gaussian-kernel graph Laplacians on S^1: both bandwidth schedules (GL-6, GL-7, GL-8).

Cheng & Wu, "Eigen-convergence of Gaussian kernelized graph Laplacian by manifold heat interpolation"
(ACHA 2022, arXiv 2101.09875; abstract, the eigen-convergence theorems of the un-normalised and
random-walk Laplacians and of the density-corrected one, Fig. 2). With ``W_ij = eps^(-d/2) h(|x_i -
x_j|^2 / eps)``, ``h(r) = exp(-r/4) / (4 pi)^(d/2)`` on ``N`` i.i.d. points of a ``d``-manifold:

* GL-6: with ``eps ~ (log N / N)^(1/(d/2+2))`` the low eigenvalues converge at ``N^(-1/(d/2+2))`` and the
  eigenvectors (2-norm) at ``N^(-1/(d+4))``, up to ``log N``, for ``L_un`` and ``L_rw`` on uniform data;
* GL-7: with ``eps ~ (log N / N)^(1/(d/2+3))`` both converge at ``N^(-1/(d/2+3))``;
* GL-8: for non-uniform data the density-corrected ``L_rw`` of ``D^-1 W D^-1`` converges to ``-Delta`` with
  the same rates, while the plain ``L_rw`` converges to the density-weighted operator
  ``-Delta - 2 grad log p . grad`` instead (not to the Laplace-Beltrami spectrum).

Their experiment (the authors' public code for Fig. 2): S^1, ``L_rw``, ``N = 562 .. 1778``, the relative
errors of eigenvalues 2 .. 9 (modes ``k = 1 .. 4``) and of their eigenvectors. Here: the unit circle
(eigenvalues ``k^2``, multiplicity 2), ``N = 256 .. 2048`` by default (``full``: ``2^9 .. 2^13``),
``eps = c (log N / N)^gamma`` with ``c = 0.1``; the non-uniform density is ``(1 + 0.5 cos theta) / (2 pi)``.
Errors: the relative RMS ``sqrt(mean (lambda_i / k_i^2 - 1)^2)`` over modes 1 .. 4, and the RMS sine of
the principal angles between each computed pair of eigenvectors and ``span(cos k theta, sin k theta)`` in
the degree-weighted inner product of the random-walk eigenproblem (exact references of
``manifolds.references.graph_laplacian``). Each rate is decided by ``verify.rates.decide_rate`` (kind
``"bound"``, margin ``RATE_MARGIN``, ``log_power=gamma``: the theorems' log factor, ``(log N / N)^gamma``);
observed orders with their 95 % intervals and the asymptotic intervals are reported. The eigenvalue bounds are
attained (the bias ``O(eps)`` dominates: the continuum eigenvalue ``(1 - I_k(z)/I_0(z)) / eps``,
``z = 1/(2 eps)``, is below ``k^2`` by ``~k^4 eps / 2``); the eigenvector errors decay faster than proved.
The plain ``L_rw`` on the non-uniform sample is asserted not to converge to ``k^2`` (GL-8: the correction
is needed).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import manifolds
from manifolds.references import graph_laplacian
from spectral import graph_laplacians
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.memory import PathNeed
from verify.core.params import Choice, Flag, Int, Ints, Real
from verify.core.result import Recorder
from verify.core.threads import single_blas_thread
from verify.gl_eps_knn import degree_spectrum
from verify.rates import RateQuantities, decide_rate, record_bound

CHECK = Check("gl_gaussian", devices=("cpu", "gpu"))

#: Margin of the one-sided rate rule (``verify.rates``' ``tolerance``; a rule, not a measured tolerance). The
#: eigenvalue bounds are attained: the exact continuum bias alone (``Run.bias_rms``, the O(eps) term) has
#: local orders -0.378 .. -0.393 (schedule 1) and -0.262 .. -0.275 (schedule 2) in N = 128 .. 4096 after the log
#: factor, approaching -0.4 and -0.286 from above (its second-order term has the other sign), and the
#: bootstrap half-width of the fitted order (widened for few repeats by verify.rates) is about 0.12 at 8 repeats
#: and 0.06 at 16 (the default; at 8 seed 0 is inconclusive, at 16 seeds 0-9 decide): 0.1 keeps an attained
#: bound from failing on that, and a claim 0.1 steeper than the truth still fails.
RATE_MARGIN = 0.1
#: Fourier modes k whose eigenvalue pairs and eigenspaces are measured (Cheng & Wu's eigenvalues 2 .. 9).
MODES = (1, 2, 3, 4)
DEFAULT_SIZES = (256, 512, 1024, 2048)
FULL_SIZES = tuple(2**e for e in range(9, 14))
#: amplitude a of the non-uniform density (1 + a cos theta) / (2 pi) of GL-8
AMPLITUDE = 0.5

CALIBRATION = Calibration(
    Tolerance("GL-8_uncorrected_eigenvalue_error", 0.08, measured=0.125, over={"seed": tuple(range(10))},
              why="the plain L_rw on (1 + 0.5 cos theta)/(2 pi) converges to -Delta - 2 grad log p . grad: its relative "
                  "RMS eigenvalue error at N = 2048 stays large (and at N = 8192, the full tier) while the "
                  "density-corrected one is 0.048-0.054 (0.029 at 8192); 0.08 lies between"),
)


@CHECK.parameters
class Params:
    sizes: tuple = Ints(None, "Numbers of points N (at least 3, increasing)", low=64, high=2**20, min_len=3,
                        auto="256, 512, 1024, 2048; with full 2^9 .. 2^13", unit="points")
    repeats: int = Int(None, "Independent samples per size", low=2, high=200, auto="16; 12 with full")
    scale: float = Real(0.1, "c in eps = c (log N / N)^gamma (both schedules)", low=0.01, high=2.0)
    normalization: str = Choice("random_walk", ("random_walk", "unnormalized"),
                                "Laplacian of GL-6 and GL-7: L_rw (the paper's Fig. 2) or L_un")
    claimed_order: float = Real(None, "Exponent p asserted in error = O(N^p) for every rate (other values are "
                                      "negative controls: a steeper p fails)", low=-3.0, high=0.0,
                                auto="the paper's: -1/(d/2+2) (eigenvalues) and -1/(d+4) (eigenvectors) for GL-6 "
                                     "and GL-8, -1/(d/2+3) for GL-7")
    path: str = Choice("auto", ("auto", "dense", "streamed"),
                       '"dense": the N x N kernel; "streamed": recomputed block by block in every product '
                       '(O(block N) memory: the GPU path for large N); "auto": dense')
    full: bool = Flag(False, "Sizes 2^9 .. 2^13 with 12 repeats (90 CPU seconds; 1.1 GiB at 2^13)")

    def resolve(self):
        """Tier defaults; sizes increasing."""
        sizes = self.sizes if self.sizes is not None else (FULL_SIZES if self.full else DEFAULT_SIZES)
        if any(b <= a for a, b in zip(sizes, sizes[1:])):
            raise InputError(f"sizes must increase, got {tuple(sizes)}")
        repeats = self.repeats if self.repeats is not None else (12 if self.full else 16)
        path = "dense" if self.path == "auto" else self.path
        return dataclasses.replace(self, sizes=tuple(sizes), repeats=repeats, path=path)


#: dimension of S^1
D = 1
#: schedule -> bandwidth exponent gamma in eps = c (log N / N)^gamma
SCHEDULES = {"eigenvalue": 1.0 / (D / 2 + 2), "both": 1.0 / (D / 2 + 3)}


def bandwidth(n: int, schedule: str, scale: float) -> float:
    """``eps = c (log N / N)^gamma`` of the schedule."""
    return scale * (math.log(n) / n) ** SCHEDULES[schedule]


def claimed_orders(p) -> dict[tuple[str, str], float]:
    """``(run, "eigenvalue" | "eigenvector") -> exponent`` (``p.claimed_order`` overrides the paper's)."""
    paper = {("GL-6", "eigenvalue"): -1.0 / (D / 2 + 2), ("GL-6", "eigenvector"): -1.0 / (D + 4),
             ("GL-7", "eigenvalue"): -1.0 / (D / 2 + 3), ("GL-7", "eigenvector"): -1.0 / (D / 2 + 3),
             ("GL-8", "eigenvalue"): -1.0 / (D / 2 + 2), ("GL-8", "eigenvector"): -1.0 / (D + 4)}
    if p.claimed_order is not None:
        return {key: p.claimed_order for key in paper}
    return paper


@CHECK.memory
def needs(p: Params) -> dict:
    """The dense path holds the N x N kernel and its distances (3 arrays of 8 bytes), the streamed one blocks."""
    def estimate(n):
        return (24.0 * n * n if p.path == "dense" else 64.0 * 2**22) + 800.0 * n + (32 << 20)

    n = max(p.sizes)
    return {p.path: PathNeed(estimate, n, "--sizes", 64, f"the {p.path} Gaussian kernel at N = {n}",
                             "--path streamed" if p.path == "dense" else "")}


@dataclasses.dataclass(frozen=True)
class Run:
    """One construction over sizes and repeats."""

    #: ``[size, repeat, i]``: the lowest eigenvalues (i = 0 .. 2 max(MODES))
    eigenvalues: np.ndarray
    #: mode k -> ``[size, repeat]`` RMS sine of the angles between the computed pair and span(cos k t, sin k t)
    eigenvector: dict[int, np.ndarray]
    #: ``[size]`` bandwidths
    eps: np.ndarray
    #: ``[size, mode]`` the continuum eigenvalues of the modes of MODES at these bandwidths (uniform density)
    continuum: np.ndarray
    #: the exponent gamma of the schedule (the log factor (log N)^gamma is divided out of the errors)
    gamma: float

    def eigenvalue_rms(self) -> np.ndarray:
        """``[size, repeat]`` relative RMS ``sqrt(mean (lambda_i / k_i^2 - 1)^2)`` over the modes of MODES."""
        target = np.repeat(np.asarray(MODES, dtype=float) ** 2, 2)
        rel = self.eigenvalues[:, :, 1:1 + 2 * len(MODES)] / target - 1.0
        return np.sqrt(np.mean(rel**2, axis=2))

    def bias_rms(self) -> np.ndarray:
        """``[size]`` the relative RMS error of the exact continuum eigenvalues: the bias part of :meth:`eigenvalue_rms`."""
        return np.sqrt(np.mean((self.continuum / np.asarray(MODES, dtype=float) ** 2 - 1.0) ** 2, axis=1))

    def eigenvector_rms(self) -> np.ndarray:
        """``[size, repeat]`` RMS sine over the eigenvector pairs of MODES."""
        return np.sqrt(np.mean(np.stack([self.eigenvector[k] ** 2 for k in MODES], axis=2), axis=2))


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What gl_gaussian measures (uniform data: GL-6, GL-7; non-uniform: GL-8 and its uncorrected control)."""

    sizes: np.ndarray
    schedule_eigenvalue: Run
    schedule_both: Run
    density_corrected: Run
    uncorrected: Run
    #: ``[size]`` (log N)^gamma of each schedule
    log_factor_eigenvalue: np.ndarray
    log_factor_both: np.ndarray


def _laplacian(x, **kwargs):
    """The graph Laplacian under test (a seam for the tests' wrong constructions)."""
    return graph_laplacians.graph_laplacian(x, **kwargs)


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Uniform samples for GL-6 and GL-7, non-uniform ones for GL-8; the low spectra of each Laplacian."""
    xp = ctx.xp
    circle = manifolds.Circle()
    law = manifolds.CosineDensity(amplitude=AMPLITUDE)
    shape = (len(p.sizes), p.repeats)
    count = 1 + 2 * len(MODES)
    runs = {name: (np.empty(shape + (count,)), {k: np.empty(shape) for k in MODES})
            for name in ("schedule_eigenvalue", "schedule_both", "density_corrected", "uncorrected")}
    uniform = 1.0 / (2 * math.pi)
    plain = {"m": D, "method": p.path}
    setups = {  # run -> (sample, schedule, normalization, density value)
        "schedule_eigenvalue": ("uniform", "eigenvalue", p.normalization, uniform),
        "schedule_both": ("uniform", "both", p.normalization, uniform),
        "density_corrected": ("cosine", "eigenvalue", "density_corrected", None),
        "uncorrected": ("cosine", "eigenvalue", "random_walk", None),
    }
    for i, n in enumerate(p.sizes):
        with ctx.timed(f"N={n}"), single_blas_thread():
            for j in range(p.repeats):
                samples = {"uniform": circle.sample(n, rng=child_rng(p.seed, "gl_gaussian", "uniform", n, j)),
                           "cosine": circle.sample(n, density=law, rng=child_rng(p.seed, "gl_gaussian", "cosine", n,
                                                                                  j))}
                for name, (sample, schedule, norm, density) in setups.items():
                    x_host = samples[sample]
                    lap = _laplacian(xp.asarray(x_host), graph="gaussian", eps=bandwidth(n, schedule, p.scale),
                                     normalization=norm, density=density, **plain)
                    lam, sines = degree_spectrum(lap, x_host, D, MODES)
                    runs[name][0][i, j] = lam
                    for k, s in zip(MODES, sines):
                        runs[name][1][k][i, j] = s
    out = {}
    for name, (lam, vec) in runs.items():
        schedule = setups[name][1]
        eps = np.asarray([bandwidth(n, schedule, p.scale) for n in p.sizes])
        norm = "unnormalized" if setups[name][2] == "unnormalized" else "random_walk"
        cont = np.asarray([[graph_laplacian.continuum_eigenvalue(1, k, e, kernel="gaussian",
                                                                 normalization=norm) for k in MODES]
                           for e in eps])
        out[name] = Run(eigenvalues=lam, eigenvector=vec, eps=eps, continuum=cont, gamma=SCHEDULES[schedule])
    logn = np.log(np.asarray(p.sizes, dtype=float))
    return Quantities(sizes=np.asarray(p.sizes), **out, log_factor_eigenvalue=logn ** SCHEDULES["eigenvalue"],
                      log_factor_both=logn ** SCHEDULES["both"])


#: ledger id -> (run, what)
RUNS = {"GL-6": ("schedule_eigenvalue", "eps ~ (log N/N)^(1/(d/2+2)), uniform"),
        "GL-7": ("schedule_both", "eps ~ (log N/N)^(1/(d/2+3)), uniform"),
        "GL-8": ("density_corrected", "density-corrected L_rw, p = (1 + 0.5 cos theta)/(2 pi)")}


def rate_decisions(q: Quantities, p) -> dict[tuple[str, str], object]:
    """``(ledger id, "eigenvalue" | "eigenvector") -> verify.rates.RateResult`` of ``error ~ N^p (log N)^gamma``.

    The theorems' rates are ``(log N / N)^gamma``-type: the log factor is claimed (``log_power=gamma``).
    """
    claimed = claimed_orders(p)
    out = {}
    for cid, (name, _) in RUNS.items():
        run = getattr(q, name)
        for kind, err in (("eigenvalue", run.eigenvalue_rms()), ("eigenvector", run.eigenvector_rms())):
            data = RateQuantities(sizes=np.asarray(q.sizes), errors=err, deterministic=False)
            out[cid, kind] = decide_rate(data, claimed=claimed[cid, kind], kind="bound", tolerance=RATE_MARGIN,
                                         log_power=run.gamma, seed=p.seed)
    return out


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Each rate one-sided, with its observed order and interval; the uncorrected L_rw misses -Delta."""
    claimed = claimed_orders(p)
    for (cid, kind), res in rate_decisions(q, p).items():
        _, what = RUNS[cid]
        tag = f"{cid}_{kind}"
        record_bound(rec, tag, res, decide="range",
                     why=f"verify.rates, kind 'bound', margin {RATE_MARGIN}, log power gamma; asymptotic order: "
                         f"{res.message}",
                     label=f"{cid}: the {kind} error ({what}) does not fall like O(N^{claimed[cid, kind]:.4g}) up to "
                           f"the log factor over the sizes measured [asymptotic order: {res.status}]")
    corrected = float(np.mean(q.density_corrected.eigenvalue_rms()[-1]))
    uncorrected = float(np.mean(q.uncorrected.eigenvalue_rms()[-1]))
    rec.info("GL-8_corrected_eigenvalue_error", corrected)
    rec.at_least("GL-8_uncorrected_eigenvalue_error", uncorrected, CALIBRATION.get("GL-8_uncorrected_eigenvalue_error", p),
                 label="GL-8: the plain L_rw on non-uniform data converges to -Delta as well (the density correction "
                       "would not be needed)")
    rec.holds("GL-8_correction_helps", corrected < uncorrected,
              why="the density-corrected L_rw targets -Delta, the plain one the weighted operator",
              label="GL-8: the density-corrected L_rw is not closer to the Laplace-Beltrami spectrum than the plain one")
    sizes = ", ".join(str(int(n)) for n in q.sizes)
    return (f"on S^1 (N = {sizes}) the Gaussian-kernel {p.normalization} Laplacian's eigenvalues converge at "
            f"N^{claimed['GL-6', 'eigenvalue']:.3g} and its eigenvectors at N^{claimed['GL-6', 'eigenvector']:.3g} "
            f"with eps ~ (log N/N)^(1/(d/2+2)), both at N^{claimed['GL-7', 'eigenvalue']:.3g} with eps ~ "
            f"(log N/N)^(1/(d/2+3)) (up to the log factor); on non-uniform data the density-corrected L_rw converges "
            f"to -Delta at the first rates and the plain one does not")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
