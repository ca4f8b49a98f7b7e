"""Weyl law of fractional neural attention (FNA paper Fig. 2a, eq. 22): the generator spectrum
-log(eta_k)/t of the FNA attention matrix on S^1 (or S^2) against its exact continuum spectrum.

The discrete spectrum comes from the toolkit (spectral.fna_kernel, the circulant FFT on the equispaced
circle grid, spectral.markov_spectrum on random points and on the sphere); the reference is the exact
finite-scale continuum spectrum of the same kernel at the same scale (manifolds.kernel_spectra:
Gauss-Legendre quadrature on S^1, Funk-Hecke on S^2), computed independently. The check compares
shapes (log-log slope and scale-free log error over the fit window) and recovers alpha by fitting the
continuum family; the exact s -> 0 limit m(k)/M0 and the naive slope of Fig. 2a against the raw
eigen-index j are reported as information: both are biased at finite scale (the relative bias decays
only like (k s)^(2 - alpha), FNA-13), so neither is a fair target for a slope at s = 2 h.

At Fig. 2a's own setting (``paper_setting``: n = 500, s = 0.01, h/s = 1.26) the check asserts what
FNA-10 states there: the slope over the fit window lies in [alpha - 0.15, alpha + 0.05], and, on a
sweep of scales s = 1e-2 ... 1e-5 with resolving grids (h <= s/8), it approaches its s -> 0 limit
monotonically; the comparison with the same-scale continuum uses tolerances measured at that coarse
grid, and the same kernel on a resolving grid at the paper's scale is shown next to it.

Your own kernel (``--kernel package.module:function``). The contract of an FNA kernel profile: a
function ``Phi(z)`` of the scaled distance ``z = d / s`` (a float64 NumPy array of any shape in; an
array of the same shape, float64 or float32, out), finite and non-negative everywhere and positive
somewhere. The check builds the attention matrix ``Phi(d(x_i, x_j) / s)`` on the same points, distance
and scale as for the built-in kernel and asserts: (1) ``profile_values``: Phi is finite and >= 0 on a
probe of 2049 scaled distances in ``[0, d_max / s]`` and at every evaluation (NaN, inf or a negative
value fails this record; nothing else is measured then); (2) ``slope_gap`` and ``shape_error``: the
discrete generator spectrum has the shape of the exact continuum spectrum of *that profile* at the same
scale (``manifolds.kernel_spectra.circle_relaxation_of`` / ``sphere_relaxation_of``: Gauss-Legendre
quadrature of Phi itself, independent of the toolkit), within the calibrated tolerances of the setting;
(3) ``reference_quadrature_error``: that reference is resolved (24 against 48 nodes per panel within
1% of the shape tolerance); (4) ``best_fit_alpha``: the FNA family ``Phi_a`` that fits the spectrum
best has ``a`` = the claimed ``alpha`` (the Weyl law of order alpha). On S^1 the FNA profile of order
alpha is ``(1 + z)^-(1 + alpha)``, on S^2 ``(1 + z)^-(2 + alpha)`` (d_M = 2); ``exp(-z^2)`` is alpha = 2.
A profile that raises, or returns another shape or dtype, is one line naming it (exit 2). The options
of the built-in kernels (``kernel_alpha``, ``dim``, ``temperature``), ``paper_setting`` and ``--device
gpu`` are refused with a user's profile (it runs on the host). The final line states the contract's
verdict on the profile, not the ledger's verdict on the paper.

Memory first: the peak of the whole request (points, kernel, copies, eigensolver) is estimated before
anything is allocated (on ``--device gpu`` against the GPU's free memory); a path that would not fit
is refused with the estimate and the options of this command that would (``--method matrix-free``:
kernel tiles recomputed in every block product of the block eigensolver, memory O(n); a smaller
``--n``), and ``auto`` takes the matrix-free path itself when the stored kernel does not fit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math

import numpy as np

import manifolds
import spectral
from manifolds import kernel_spectra as ks
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.fits import fit_power_law
from verify.core.implementation import is_reference, load
from verify.core.memory import PathNeed
from verify.core.params import Choice, Flag, Int, Ints, Real, Text
from verify.core.result import Recorder

CHECK = Check("weyl", devices=("cpu", "gpu"),
              methods=("auto", "circulant", "dense", "lanczos", "matrix-free"))

MANIFOLDS = ("circle", "sphere")
POINTS = ("grid", "random")
KERNELS = ("fna", "softmax")
DISTANCES = ("geodesic", "chordal")

#: Fig. 2a of the FNA paper (Methods, "Markov chain diagonalization"): n = 500 equispaced points,
#: kappa = sqrt(eps), eps = 1e-4, t = eps^(alpha/2).
PAPER_N = 500
PAPER_SCALE = math.sqrt(1e-4)
#: FNA-10 at the paper setting: the slope over the fit window lies in [alpha - 0.15, alpha + 0.05]
#: (2.00 +- 0.02 for alpha = 2), and moves monotonically as the scale shrinks on grids with h = s/8.
PAPER_WINDOW = (-0.15, 0.05)
PAPER_WINDOW_GAUSSIAN = 0.02
SWEEP_SCALES = (1e-2, 1e-3, 1e-4, 1e-5)
SWEEP_H_OVER_S = 1.0 / 8.0

# ------------------------------------------------------------------------------------ tolerances
# Each tolerance bounds a statistic of the measured spectrum against the exact continuum reference at
# the same scale, per setting (manifold, points; Fig. 2a's own setting apart). The measured values are
# the toolkit's own (python -m verify.calibrate weyl measures them again).
_ALPHAS = (1.0, 1.2, 1.5, 1.8, 2.0)
#: the seed ensemble of the i.i.d. settings (a run at n = 3000-4000 takes 5-50 s here: Lanczos on a clustered
#: spectrum)
_RANDOM_OVER = ({"alpha": (1.2,), "seed": (0, 1, 2, 3)}, {"alpha": (2.0,), "seed": (0,)})
#: the smallest n at which the S^2 i.i.d. tolerances (set at n = 3000) were seen to hold: at n = 2000 seeds 0-5
#: gave |best fit - alpha| <= 0.101 (alpha 1.2) and slope gap <= 0.047 (alpha 2); at n = 1500 one of seeds 0-5
#: gave 0.158 > 0.15 (alpha 1.2) and the slope gap reached 0.060 (alpha 2); at n = 1000 0.232 and 0.064; at
#: n = 600 the best fit is 1.544 (seed 0)
SPHERE_RANDOM_MIN_N = 2000
#: the rows of each setting: where they apply, what they were measured over and the n they hold from
_CIRCLE_GRID = {"setting": {"manifold": "circle", "points": "grid"}, "over": {"alpha": _ALPHAS},
                "valid": {"n": (1000, None)}}
_CIRCLE_RANDOM = {"setting": {"manifold": "circle", "points": "random"}, "over": _RANDOM_OVER,
                  "valid": {"n": (4000, None)}}
_PAPER = {"setting": {"manifold": "circle", "points": "grid", "paper_setting": True}, "over": {"alpha": _ALPHAS}}
_SPHERE_GRID = {"setting": {"manifold": "sphere", "points": "grid"}, "over": {"alpha": _ALPHAS},
                "valid": {"n": (5000, None)}}
_SPHERE_RANDOM = {"setting": {"manifold": "sphere", "points": "random"}, "over": _RANDOM_OVER,
                  "valid": {"n": (SPHERE_RANDOM_MIN_N, None)}}

CALIBRATION = Calibration(
    # S^1, equispaced grid, h/s = 1/2 (n = 2000 default), fit k = 2..10 (circulant path; the dense path agrees
    # to round-off). Wrong kernels fail by >= 1.8x: kernel alpha 1.25 claimed as 1.2 gives 0.037 / 0.036 /
    # 0.049, kernel 1.21 as 1.2 gives best-fit 1.209 (|diff| 0.009 > 0.005), softmax claimed as 1.5 gives shape
    # 0.022 (its slope gap 0.014 alone would pass: both statistics are needed). The calibration runs fit modes
    # with k h <= 0.063 (k = 10 at n = 1000).
    Tolerance("slope_gap", 0.02, measured=0.0009, **_CIRCLE_GRID,
              why="S^1 grid, h/s = 1/2, k = 2..10: the grid's discretisation error of the slope; kernel alpha 1.25 "
                  "claimed as 1.2 gives 0.037"),
    Tolerance("shape_error", 0.01, measured=0.0007, **_CIRCLE_GRID,
              why="S^1 grid, h/s = 1/2, k = 2..10: the grid's discretisation error of the shape; kernel alpha 1.25 "
                  "claimed as 1.2 gives 0.036, softmax claimed as 1.5 gives 0.022"),
    Tolerance("best_fit_alpha", 0.005, measured=0.0012, **_CIRCLE_GRID,
              why="S^1 grid, h/s = 1/2, k = 2..10: the grid's bias of the best-fit order; kernel alpha 1.21 claimed as "
                  "1.2 gives |diff| 0.009"),
    # S^1, i.i.d. uniform points, n = 4000, h/s = 1/4 (1/16 for alpha = 2), diagonal dropped, k = 2..10: the
    # sampling noise of the spectrum. Kernel 1.5 claimed as 1.2 gives 0.21 / 0.20 / 1.49; kernel 1.9 claimed as
    # 2 gives 0.52 / 0.49. A kernel-alpha error of 0.05 is within the noise at this n (only the grid resolves
    # it).
    Tolerance("slope_gap", 0.05, measured=0.0121, **_CIRCLE_RANDOM,
              why="S^1 i.i.d., n = 4000, h/s = 1/4 (s = 16 h at alpha 2): sampling noise of the slope; kernel 1.5 "
                  "claimed as 1.2 gives 0.21"),
    Tolerance("shape_error", 0.1, measured=0.0323, **_CIRCLE_RANDOM,
              why="S^1 i.i.d., n = 4000, h/s = 1/4 (s = 16 h at alpha 2): sampling noise of the shape; kernel 1.5 "
                  "claimed as 1.2 gives 0.20"),
    Tolerance("best_fit_alpha", 0.1, measured=0.0107, **_CIRCLE_RANDOM,
              why="S^1 i.i.d., n = 4000, h/s = 1/4: sampling noise of the best-fit order; kernel 1.5 claimed as 1.2 "
                  "gives 0.29"),
    # S^1, equispaced grid at the paper's Fig. 2a setting: n = 500, s = 0.01 (h/s = 1.26), k = 2..10 (circulant
    # path): the coarse grid's own discretisation error against the continuum spectrum at the same scale (alpha
    # = 2: to rounding). Kernel alpha 1.25 claimed as 1.2 gives 0.030 / 0.031 / 0.042, 1.15 gives 0.041 / 0.040
    # / 0.059 (both fail by 2x); 1.21 gives at most 0.0024 on each (passes: 0.01 is below this grid's
    # resolution).
    Tolerance("slope_gap", 0.015, measured=0.0067, **_PAPER,
              why="S^1 grid at the paper setting (n = 500, s = 0.01, h/s = 1.26), k = 2..10: the grid's "
                  "discretisation error of the slope; kernel alpha 1.25 claimed as 1.2 gives 0.030"),
    Tolerance("shape_error", 0.012, measured=0.0054, **_PAPER,
              why="S^1 grid at the paper setting, k = 2..10: the grid's discretisation error of the shape; kernel "
                  "alpha 1.25 claimed as 1.2 gives 0.031, softmax claimed as 1.5 0.021"),
    Tolerance("best_fit_alpha", 0.02, measured=0.0096, **_PAPER,
              why="S^1 grid at the paper setting: the grid biases the fit low; kernel alpha 1.25 claimed as 1.2 gives "
                  "|diff| 0.042"),
    # Slack of the monotone approach: at h = s/8 the discrete slope over k = 2..10 equals the continuum slope at
    # the same scale within 1e-4 (0.9964 / 0.9964, 1.1367 / 1.1368, 1.3442 / 1.3443 at s = 0.01 for alpha = 1,
    # 1.2, 1.5), so a rise of the distance to the limit below 1e-4 is grid noise. The largest rise is at alpha =
    # 2 (the slope is 2 at every scale, to rounding); alpha < 2 approach by -0.0016 to -0.028; kernel 1.21
    # claimed as 1.2 rises by 0.0039.
    Tolerance("monotone_approach", 1e-4, measured=7.6e-8, **_PAPER,
              why="FNA-10: the slope must move monotonically toward its limit as the scale shrinks; slack 1e-4 = the "
                  "slope noise of a grid with h = s/8 (discrete and continuum slopes agree within 1e-4)"),
    # S^2, Fibonacci grid, n = 5000, s = 8 h (h = sqrt(4 pi / n)), degrees l = 1..6 (best fit exact at alpha =
    # 2). Kernels 0.1 away (alpha -+ 0.1 for every alpha, 1.9 claimed as 2) give gap >= 0.0144, shape >= 0.0153,
    # |best fit - alpha| >= 0.093; 0.05 away (1.25 and 1.15 claimed as 1.2) 0.0069 / 0.0074 / 0.045 and 0.0084 /
    # 0.0087 / 0.055: all fail. The remaining bias of the best fit is the self score Phi(0) = 1 of each node, a
    # point mass where the continuum has the mean of Phi over the node's cell: with that mean on the diagonal the
    # best fit is 1.203 (n = 5000, s = 6 h) and 1.211 (n = 2000, s = 3 h) instead of 1.193 and 1.165. More
    # points shrink it: with the block solver (--method matrix-free) at n = 20000, s = 8 h the best fit is 1.1986
    # (gap 0.0003) and kernel 1.3 gives 1.2985 (gap 0.020), 36-39 s each here. (Before: n = 2000, s = 3 h, best
    # fit 1.165 and tolerance 0.1; kernel 1.3 claimed as 1.2 passed with 1.263.)
    Tolerance("slope_gap", 0.004, measured=0.0010, **_SPHERE_GRID,
              why="S^2 Fibonacci grid, n = 5000, s = 8 h, l = 1..6: the grid's discretisation error of the slope; "
                  "kernels 0.1 away give >= 0.0144"),
    Tolerance("shape_error", 0.004, measured=0.0010, **_SPHERE_GRID,
              why="S^2 Fibonacci grid, n = 5000, s = 8 h, l = 1..6: the grid's discretisation error of the shape; "
                  "kernels 0.1 away give >= 0.0153"),
    Tolerance("best_fit_alpha", 0.03, measured=0.0066, **_SPHERE_GRID,
              why="S^2 Fibonacci grid, n = 5000, s = 8 h: the self score Phi(0) biases the fit low; kernels 0.1 away "
                  "give >= 0.093"),
    Tolerance("shell_spread", 0.001, measured=0.00012, **_SPHERE_GRID,
              why="S^2 Fibonacci grid, n = 5000, l = 1..6: relative spread of the eigenvalues within a shell (2l + 1 "
                  "equal in the continuum)"),
    # S^2, i.i.d. points, n = 3000, h/s = 1/4, diagonal dropped, degrees l = 1..6: random points cluster by 2l+1
    # only barely. Kernel alpha 1.5 claimed as 1.2 gives slope gap 0.059-0.062, shape 0.062 (near the
    # tolerances) and best-fit 1.52-1.55: the family fit is what rejects it here. They hold from n = 2000
    # (SPHERE_RANDOM_MIN_N); below, a failure names that range.
    Tolerance("slope_gap", 0.06, measured=0.0285, **_SPHERE_RANDOM,
              why="S^2 i.i.d., n = 3000, h/s = 1/4: sampling noise of the slope, largest at alpha 2"),
    Tolerance("shape_error", 0.07, measured=0.0292, **_SPHERE_RANDOM,
              why="S^2 i.i.d., n = 3000, h/s = 1/4: sampling noise of the shape, largest at alpha 2"),
    Tolerance("best_fit_alpha", 0.15, measured=0.0482, **_SPHERE_RANDOM,
              why="S^2 i.i.d., n = 3000: sampling noise of the best-fit order; kernel 1.5 claimed as 1.2 gives "
                  "0.32-0.35"),
    Tolerance("shell_spread", 0.5, measured=0.35, **_SPHERE_RANDOM,
              why="S^2 i.i.d., n = 3000: random points split each shell's 2l + 1 eigenvalues, most at alpha 2"),
)


# ------------------------------------------------------------------------------- the parameters


@CHECK.parameters
class Params:
    alpha: float = Real(1.2, "Claimed order alpha of the Weyl law lambda_k ~ k^alpha (FNA eqs. 9-10, 22; 2 = "
                        "Gaussian kernel); at least 0.05, where the best-fit scan of the continuum family starts",
                        low=0.05, high=2)
    manifold: str = Choice("circle", MANIFOLDS, "S^1 (circle, Fig. 2a) or S^2 (sphere, FNA-11: lambda_j ~ "
                           "j^(alpha/2))")
    n: int = Int(None, "Number of points (the matrix-free path scales to 10^5 and beyond: FNA top 10 at n = 10^5 on S^2 measured 131 min wall (28 CPU min), 701 MiB peak, "
                 "benchmarks/bench_tiles.py --sections large)", low=8, unit="points",
                 auto="2000 on the circle grid, 4000 random on the circle, 5000 on the sphere grid, 3000 random "
                      "on the sphere; 500 with paper_setting")
    scale: float = Real(None, "Kernel scale kappa (FNA eq. 13); h = 2 pi / n on S^1, sqrt(4 pi / n) on S^2", low=0,
                        low_open=True,
                        auto="2 h on the circle grid, 8 h on the sphere grid, 4 h on random points (16 h for "
                             "alpha = 2 on the circle); 0.01 with paper_setting")
    points: str = Choice("grid", POINTS, "grid (equispaced S^1 / Fibonacci S^2) or random (i.i.d. uniform; the "
                         "diagonal self score Phi(0) is then dropped: it is an atom that biases every eigenvalue by "
                         "~1/(1 + 2 pi/(n Z)))")
    modes: int = Int(None, "Number of nontrivial eigenvalues lambda_1..lambda_modes used, at most n - 3", low=2,
                     auto="20 on S^1 (k <= 10 paired modes), 48 on S^2 (degrees l <= 6), at most n - 3")
    fit_range: tuple = Ints(None, "Window (lo, hi) of the fits: frequencies k on S^1, degrees l on S^2, with "
                            "1 <= lo < hi", low=1, min_len=2, max_len=2, auto="2,10 on S^1, 1,6 on S^2 (within the "
                                                                                 "modes)")
    distance: str = Choice("geodesic", DISTANCES, "Distance inside Phi: geodesic or chordal (|x - y|, the paper's "
                           "eq. 13 on S^1 points)")
    reference_distance: str = Choice(None, DISTANCES, "Distance of the continuum reference",
                                     auto="the same as distance")
    kernel_alpha: float = Real(None, "Alpha used to BUILD the kernel (another value is a negative control)", low=0,
                               high=2, low_open=True, auto="the claimed alpha")
    dim: float = Real(None, "Exponent dimension d_M of Phi = (1+z)^-(d_M+alpha) (2 on S^1 is the ambient-dimension "
                      "trap of FNA-10)", low=1, high=16, auto="intrinsic: 1 on S^1, 2 on S^2")
    kernel: str = Text("fna", "fna (Phi_alpha, FNA eqs. 9-10), softmax (dot-product exp(x.y/T), a negative control) "
                       "or package.module:function, your profile Phi(z) of the scaled distance z = d/s (a float64 "
                       "array of any shape in, an array of that shape out), held to the Weyl law against the "
                       "continuum spectrum of that profile")
    timeout: float = Real(60.0, "Seconds one call of a profile given as --kernel package.module:function may take "
                                "(NumPy evaluates a profile on the 4e6 distances of n = 2000 in about 0.1 s; 60 s ends a "
                                "hung profile's run within a minute)", low=0.0, high=86400.0, low_open=True, unit="s")
    temperature: float = Real(None, "Softmax temperature T, kernel=softmax only", low=0, low_open=True,
                              auto="sqrt(2) = sqrt of the ambient dimension of S^1 points (sqrt(3) on S^2), the "
                                   "dot-product baseline of FNA Assumptions 1+2")
    paper_setting: bool = Flag(False, "The Fig. 2a setting: n = 500, kappa = sqrt(1e-4) = 0.01 (h/kappa = 1.26); "
                               "circle grid only")

    def resolve(self):
        """The per-setting automatic values and the rules between parameters."""
        circle = self.manifold == "circle"
        reference_distance = self.distance if self.reference_distance is None else self.reference_distance
        if is_reference(self.kernel):  # a user's profile: the options of the built-in kernels do not apply
            for name in ("kernel_alpha", "dim", "temperature"):
                if getattr(self, name) is not None:
                    raise InputError(f"{name} configures the built-in kernels; it does not apply to a profile given "
                                     f"as --kernel {self.kernel!r}: leave it out")
            if self.paper_setting:
                raise InputError("paper_setting reproduces Fig. 2a with the paper's kernel; it does not apply to a "
                                 f"profile given as --kernel {self.kernel!r}")
            if self.device != "cpu":
                raise InputError(f"a profile given as --kernel {self.kernel!r} runs on the host: device must be "
                                 f"'cpu', got {self.device!r}")
            load(self.kernel, parameter="kernel", builtins=KERNELS)
        elif self.kernel not in KERNELS:
            load(self.kernel, parameter="kernel", builtins=KERNELS)  # raises, naming the forms allowed
        if not circle:
            if self.distance != "geodesic" or reference_distance != "geodesic":
                raise InputError("distance must be 'geodesic' on the sphere (the Funk-Hecke reference is geodesic)")
            if self.method == "circulant":
                raise InputError("method='circulant' needs the equispaced circle grid (manifold='circle')")
        if self.points == "random" and self.method == "circulant":
            raise InputError("method='circulant' needs points='grid' (an equispaced circle grid)")
        n, scale = self.n, self.scale
        if self.paper_setting:
            if not circle or self.points != "grid":
                raise InputError("paper_setting reproduces Fig. 2a: it needs manifold='circle' and points='grid'")
            # the recorded parameters of a paper_setting run hold n = 500, scale = 0.01: rerunning them is allowed
            if n not in (None, PAPER_N) or scale not in (None, PAPER_SCALE):
                raise InputError(f"paper_setting fixes n = {PAPER_N} and scale = {PAPER_SCALE}; do not pass another n "
                                 "or scale with it")
            n, scale = PAPER_N, PAPER_SCALE
        if n is None:
            n = {("circle", "grid"): 2000, ("circle", "random"): 4000, ("sphere", "grid"): 5000,
                 ("sphere", "random"): 3000}[(self.manifold, self.points)]
        h = _spacing(self.manifold, n)
        if scale is None:
            # S^1 grid: h/s = 1/2; S^2 Fibonacci grid: h/s = 1/8 (best-fit bias of alpha = 1.2 at n = 5000:
            # -0.016 at 3 h, -0.011 at 4 h, -0.007 at 6 h, -0.005 at 8 h; at n = 2000 -0.035 at 3 h, while a kernel
            # 0.1 away moves the best fit by 0.099 at every setting); random points: h/s = 1/4.
            scale = (4.0 if self.points == "random" else 2.0 if circle else 8.0) * h
            if self.points == "random" and circle and self.alpha == 2:
                # The local Gaussian kernel sees only ~8 neighbours within s = 4 h: on i.i.d. points its
                # generator is then dominated by sampling noise (slope gap 0.16, shape 0.135, pair splitting
                # 0.47 measured at n = 4000, seed 0; the variance grows like (n s^3)^-1/2, Singer). Its
                # continuum spectrum k^2/4 holds at every scale, so take s = 16 h (gap <= 0.022, shape <= 0.054).
                scale = 16.0 * h
        temperature = self.temperature
        if temperature is not None and self.kernel != "softmax":
            raise InputError(f"temperature applies to kernel='softmax' only, got kernel={self.kernel!r}")
        intrinsic = 1 if circle else 2
        if self.kernel == "softmax" and temperature is None:
            temperature = math.sqrt(intrinsic + 1)  # sqrt(ambient dimension): softmax(Q K^T / sqrt(d))
        modes = self.modes
        if modes is None:  # 20 (k <= 10) on S^1, 48 (l <= 6) on S^2, fewer for tiny n
            modes = min(20 if circle else 48, n - 3)
        if modes > n - 3:  # Lanczos needs modes + 1 <= n - 2
            raise InputError(f"modes must be an integer in [2, {n - 3}] (at most n - 3), got {modes}")
        if circle:
            top, unit = modes // 2, "frequencies k (paired modes)"
        else:
            top, unit = int(math.isqrt(modes + 1)) - 1, "degrees l (complete shells of 2l+1)"
        fit_range = self.fit_range
        if fit_range is None:
            lo, hi = (2, 10) if circle else (1, 6)
            fit_range = (min(lo, max(top - 1, 1)), min(hi, top))
        lo, hi = fit_range
        if not 1 <= lo < hi <= top:
            raise InputError(f"fit_range must satisfy 1 <= lo < hi <= {top} ({unit} available with modes={modes}), "
                             f"got {fit_range!r}")
        kernel_alpha = self.alpha if self.kernel_alpha is None else self.kernel_alpha
        dim = float(intrinsic if self.dim is None else self.dim)
        _check_resolvable(self.kernel, self.manifold, n, scale, self.alpha, kernel_alpha, dim, temperature,
                          self.distance)
        if self.user_kernel:
            return dataclasses.replace(self, n=n, scale=scale, modes=modes, fit_range=(lo, hi),
                                       reference_distance=reference_distance)
        return dataclasses.replace(
            self, n=n, scale=scale, modes=modes, fit_range=(lo, hi), reference_distance=reference_distance,
            kernel_alpha=self.alpha if self.kernel_alpha is None else self.kernel_alpha,
            dim=float(intrinsic if self.dim is None else self.dim), temperature=temperature)

    @property
    def user_kernel(self) -> bool:
        """Whether the kernel is a user's profile Phi(z) given as ``package.module:function``."""
        return is_reference(self.kernel)

    @property
    def h(self) -> float:
        """Point spacing: 2 pi / n on S^1, sqrt(4 pi / n) on S^2."""
        return _spacing(self.manifold, self.n)

    @property
    def intrinsic(self) -> int:
        """The intrinsic dimension of the manifold (1 on S^1, 2 on S^2)."""
        return 1 if self.manifold == "circle" else 2

    @property
    def circle_grid(self) -> bool:
        """Whether the points are the equispaced circle grid (where the circulant path applies)."""
        return self.manifold == "circle" and self.points == "grid"


def _spacing(manifold: str, n: int) -> float:
    return 2 * math.pi / n if manifold == "circle" else math.sqrt(4 * math.pi / n)


#: A kernel matrix is resolved in float64 when its weights differ from one another by at least sqrt(eps)
#: (half the digits kept): the nearest neighbour's weight at least sqrt(eps) of the self-weight (else the
#: matrix is the identity to that precision), and the farthest point's weight at most 1 - sqrt(eps) of it
#: (else the kernel is flat over the manifold and its nontrivial eigenvalues are rounding).
RESOLVED = math.sqrt(np.finfo(np.float64).eps)


def _check_resolvable(kernel, manifold, n, scale, alpha, kernel_alpha, dim, temperature, distance):
    """Refuse a scale (or temperature) at which the computation has no digits: before anything is computed.

    ``t = scale^alpha`` must be a positive normal float (``--scale 1e300`` overflowed, ``1e-300`` gave
    t = 0); for the built-in kernels the weights must be resolved (:data:`RESOLVED`): the FNA profile
    ``(1 + z)^-(dim + alpha)`` at the spacing ``h`` and at the diameter (pi geodesic, 2 chordal), the softmax
    ``exp((x.y - 1) / T)`` at the spacing and at the antipode. A user's profile is probed when it runs.
    """
    # scale^alpha within [tiny, huge], compared in logs (tiny^(1/alpha) underflows, huge^(1/alpha) overflows)
    log_lo, log_hi = math.log(np.finfo(np.float64).smallest_normal) / alpha, math.log(np.finfo(np.float64).max) / alpha
    lo_t, hi_t = math.exp(max(log_lo, -745.0)), math.exp(min(log_hi, 709.0))
    h, diameter = _spacing(manifold, n), (2.0 if distance == "chordal" else math.pi)
    if kernel == "fna":
        power = dim + kernel_alpha
        lo = h / math.expm1(-math.log(RESOLVED) / power)  # (1 + h/s)^-power >= RESOLVED
        hi = diameter / math.expm1(-math.log1p(-RESOLVED) / power)  # (1 + D/s)^-power <= 1 - RESOLVED
        why = (f"the FNA kernel (1 + d/s)^-{power:g} is resolved in float64 (the nearest of n = {n} points weighs "
               f"at least sqrt(eps) = {RESOLVED:.2g} of the self-weight, the farthest at most 1 - sqrt(eps))")
        lo, hi = max(lo, lo_t), min(hi, hi_t)
    else:
        lo, hi, why = lo_t, hi_t, f"t = scale^alpha is a positive normal float (alpha = {alpha:g})"
    if not (lo <= scale <= hi and log_lo <= math.log(scale) <= log_hi):
        raise InputError(f"scale must be in [{lo:.3g}, {hi:.3g}], where {why}, got {scale!r}")
    if kernel == "softmax":
        t_lo = (1.0 - math.cos(h)) / -math.log(RESOLVED)  # the nearest neighbour at angle h: exp(-(1 - cos h) / T)
        t_hi = 2.0 / -math.log1p(-RESOLVED)  # exp(-2 / T) <= 1 - RESOLVED
        if not t_lo <= temperature <= t_hi:
            raise InputError(f"temperature must be in [{t_lo:.3g}, {t_hi:.3g}], where the softmax kernel "
                             f"exp(x.y / T) is resolved in float64 on n = {n} points (the nearest neighbour weighs at "
                             f"least sqrt(eps) of the self-weight, the antipode at most 1 - sqrt(eps)), got "
                             f"{temperature!r}")


# ------------------------------------------------------------------------------ memory and method
# Peak memory of each path, estimated before anything is allocated. Measured on this machine (VmHWM of
# a child process minus its start, and tracemalloc; numpy, one BLAS thread):
#: circulant path (circle grid): the points, one kernel row and its FFT; tracemalloc peak 40.0 bytes per
#: point at n = 5e5 and 2e6
CIRCULANT_BYTES_PER_POINT = 48
#: stored dense path: distances and kernel, the conjugate, eigenvectors, LAPACK workspace; measured
#: 6.1-6.2 n^2 float64 at n = 3000 (circle grid, circle i.i.d., Fibonacci sphere)
DENSE_COPIES = 6.5
#: stored Lanczos path: kernel and stored conjugate; measured 2.1-2.2 n^2 float64 at n = 3000
LANCZOS_COPIES = 2.5
#: i.i.d. points drop the diagonal, so min(C) = 0 and the component count reads the stored matrix in row
#: tiles: no copy when only the diagonal is zero (FNA power law: Lanczos measured 2.02 n^2 float64 in all
#: at n = 2000 and 3000, as with the diagonal), int32 edge indices when a softmax kernel underflows off the
#: diagonal (0.56-0.64 n^2 float64 more, tracemalloc at n = 2000 and 3000). It was 3.0 while the count
#: built a sparse graph of all n^2 entries (5.0 n^2 in all).
DROPPED_DIAGONAL_COPIES = 0.7
#: matrix-free path: the block solver's basis (spectral.block_workspace_bytes) plus about 24 floats per
#: point (points in two precisions, degrees, scalings) and the kernel tiles (4 x 4 MiB)
MATRIX_FREE_BYTES_PER_POINT = 24 * 8
TILE_BYTES = 16 << 20
#: Time of the matrix-free path, growing like n^2 (17-25 block products, each evaluating the kernel on
#: half the n^2 pairs): measured 5.6 s at n = 5000 on the Fibonacci S^2 (49 modes; 16 float32 + 1 float64
#: products; S^2 geodesic tiles cost 12 ns per pair in float32, 41 in float64) on this shared 2-core machine
MATRIX_FREE_SECONDS_PER_N2 = 2.5e-7
#: "auto" takes the matrix-free path, when the stored kernel does not fit, up to this n (about 10 minutes)
AUTO_MATRIX_FREE_MAX_N = 50_000
#: Residual target of the matrix-free solve: eigenvalues within ~1e-12 of a solve to machine precision
#: (measured 7.7e-13 at n = 5000 on S^2), far below the 1e-3 level of the statistics; one float64
#: product after the float32 iterations instead of four
MATRIX_FREE_TOL = 1e-6
#: on --device gpu the kernel and the solver live on the GPU and are compared with its free memory; the host
#: keeps the points made there before they move (tracemalloc peak 72.0 bytes per point making the Fibonacci
#: S^2 grid at n = 2e5; 40-64 for the S^1 grid and i.i.d. points) and the few eigenvalues brought back
HOST_BYTES_PER_POINT_ON_GPU = 80
#: the stored path "auto" prefers: dense up to this n, Lanczos above
DENSE_MAX_N = 200


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.2g} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.2g} minutes"
    return f"{seconds / 3600:.2g} hours"


def _stored_path(n: int) -> str:
    """The stored-kernel path ``auto`` prefers at ``n`` points: dense for small n, else Lanczos."""
    return "lanczos" if n > DENSE_MAX_N else "dense"


@CHECK.memory
def needs(p: Params) -> dict:
    """Peak bytes of each eigensolver path that applies here (points, kernel, copies, eigensolver), in auto's order.

    ``auto``: the circulant FFT on the circle grid (the only path it takes there); elsewhere the stored
    kernel (dense for n <= 200, else Lanczos) when it fits, else the matrix-free block solver up to
    ``AUTO_MATRIX_FREE_MAX_N``. On the GPU the host keeps the points made there (``host``).
    """
    k = p.modes + 1
    circle_grid = p.circle_grid
    where = (f"n = {p.n} {'equispaced' if p.points == 'grid' else 'i.i.d.'} points on "
             f"{'S^1' if p.manifold == 'circle' else 'S^2'}")
    extra = DROPPED_DIAGONAL_COPIES if p.points == "random" else 0.0

    def host(m):
        return HOST_BYTES_PER_POINT_ON_GPU * m

    out = {}
    if circle_grid:
        sweep = [_sweep_n(s) for s in SWEEP_SCALES] if p.paper_setting else []
        out["circulant"] = PathNeed(lambda m: CIRCULANT_BYTES_PER_POINT * max([m, *sweep]), p.n, "--n", 8,
                                    f"the circulant path on {where} (~{CIRCULANT_BYTES_PER_POINT} bytes per point: "
                                    "points, one kernel row, its FFT)", host=host)
    preferred = _stored_path(p.n)
    late = ""
    if p.n > AUTO_MATRIX_FREE_MAX_N and not circle_grid:
        late = (f" (auto takes the matrix-free path only up to n = {AUTO_MATRIX_FREE_MAX_N}: here it would take about "
                f"{_duration(MATRIX_FREE_SECONDS_PER_N2 * p.n * p.n)})")
    for name in (preferred, "dense" if preferred == "lanczos" else "lanczos"):
        copies = (DENSE_COPIES if name == "dense" else LANCZOS_COPIES) + extra
        what = ("the dense path (distances and kernel, conjugate, eigenvectors, LAPACK workspace: about "
                f"{copies:.2g} n^2 float64) on {where}" if name == "dense" else
                "the stored-kernel Lanczos path (kernel and stored conjugate"
                + (", and the component count of a kernel without its diagonal" if extra else "")
                + f": about {copies:.2g} n^2 float64) on {where}") + late
        out[name] = PathNeed(lambda m, c=copies: int(c * m * m * 8), p.n, "--n", 8, what, host=host,
                             auto=name == preferred and not circle_grid)
    out["matrix-free"] = PathNeed(
        lambda m: spectral.block_workspace_bytes(m, k) + MATRIX_FREE_BYTES_PER_POINT * m + TILE_BYTES, p.n, "--n", 8,
        f"the matrix-free path (block eigensolver basis, kernel tiles) on {where}", host=host,
        auto=not circle_grid and p.n <= AUTO_MATRIX_FREE_MAX_N)
    return out


# ---------------------------------------------------------------------------- discrete spectrum


def _scores(x, y, p, manifold_obj):
    """Score block C[x, y] of the kernel under test (toolkit code)."""
    if p.kernel == "softmax":
        return spectral.dot_product_scores(x, y=y, temperature=p.temperature)
    if p.distance == "geodesic":
        d = manifold_obj.distance(x, y)
    else:
        d = manifold_obj.chordal_distance(x, y)
    if p.user_kernel:
        return _user_profile(p)(d / p.scale)
    return spectral.fna_kernel(d, alpha=p.kernel_alpha, scale=p.scale, dim=p.dim)


class _ProfileDefect(Exception):
    """A user's profile returned values no kernel has (NaN, inf, negative): measured, and failed by a record."""


def _user_profile(p):
    """The user's profile ``Phi(z)`` (``--kernel package.module:function``), every call guarded.

    An exception, a wrong shape or dtype is one line naming the function (exit 2, see
    :mod:`verify.core.implementation`); a NaN, inf or negative value raises :class:`_ProfileDefect`,
    which the measurement turns into a failed record.
    """
    impl = load(p.kernel, parameter="kernel", builtins=KERNELS, timeout=p.timeout)

    def phi(z):
        z = np.asarray(z)
        raw, _ = impl.call(z, copy=False)  # z is a temporary of the caller
        values = impl.array(raw, z.shape, what="profile values")
        bad = ~np.isfinite(values)
        if bad.any():
            raise _ProfileDefect(f"{int(bad.sum())} of {values.size} values are NaN or inf (the first at z = "
                                 f"{float(z[bad].flat[0]):.4g})")
        if np.any(values < 0):
            i = int(np.argmin(values))
            raise _ProfileDefect(f"negative values (the smallest {float(values.flat[i]):.3g} at z = "
                                 f"{float(z.flat[i]):.4g})")
        return values

    return phi


#: points of the probe of a user's profile on [0, largest scaled distance] before any spectrum is computed
PROFILE_PROBE_POINTS = 2049


def _probe_profile(p) -> None:
    """Evaluate the user's profile on the scaled distances of the run: _ProfileDefect when no kernel has them."""
    top = (2.0 if p.distance == "chordal" else math.pi) / p.scale  # largest distance: the antipode
    z = np.linspace(0.0, top, PROFILE_PROBE_POINTS)
    if not np.any(_user_profile(p)(z) > 0):
        raise _ProfileDefect(f"Phi vanishes at every probed z in [0, {top:.4g}]: no attention weights")


def _profile_reference(p, idx, ks, per_panel: int):
    """The exact continuum generator spectrum of the user's profile at the run's scale (Gauss-Legendre quadrature,
    ``per_panel`` nodes per panel), per frequency k (S^1) or degree l (S^2)."""
    phi = _user_profile(p)
    if p.manifold == "circle":
        gap = ks.circle_relaxation_of(phi, idx, scale=p.scale, distance=p.reference_distance, nodes=per_panel)
    else:
        gap = ks.sphere_relaxation_of(phi, idx, scale=p.scale, nodes=per_panel)
    with np.errstate(invalid="ignore", divide="ignore"):  # eta <= 0: no generator (NaN fails the statistics)
        return -np.log1p(-gap) / p.scale ** p.alpha


def _markov_eigenvalues(xp, p, method: str, timed=None):
    """The modes + 1 largest eigenvalues eta_0 = 1 >= eta_1 >= ... of A = D^-1 C and the solver used.

    Points are made on the host (the same seed gives the same points on every device) and moved to
    the namespace ``xp`` of the check's device, where the scores and the spectrum are computed; the
    eigenvalues come back to the host once. ``timed(phase)`` times the phases (None: untimed).
    """
    timed = timed or (lambda phase: contextlib.nullcontext())
    man = manifolds.Circle() if p.manifold == "circle" else manifolds.Sphere(2)
    with timed("points"):
        if p.points == "grid":
            x = man.grid(p.n)
        else:
            x = man.sample(p.n, rng=child_rng(p.seed, "points"))
        x = xp.asarray(x)
    k = p.modes + 1
    with timed("kernel"):
        if method == "circulant":
            # the first row is all we need: C[i, j] = c[(j - i) mod n] on the equispaced grid
            c = _scores(x[:1, :], x, p, man)[0, :]
        elif method == "matrix-free":
            C = _operator(x, p, man)
        else:
            C = _scores(x, x, p, man)
            if p.points == "random":
                # The self score Phi(0) = 1 is an atom that biases every eigenvalue by a factor ~1/(1+x),
                # x = 2 pi / (n Z) (0.15 at n = 4000, s = 4 h): drop it.
                if xp is np:
                    np.fill_diagonal(C, 0.0)
                else:
                    C = C * (1.0 - xp.eye(p.n, dtype=C.dtype))
    with timed("spectrum"):
        if method == "circulant":
            spec = spectral.circulant_spectrum(c, k)
        else:
            # Lanczos (ARPACK) for the few leading eigenvalues of a stored kernel: 1.7 s at n = 2000 here
            # against 4 s for a dense eigvalsh; the matrix-free block solver never stores C
            tol = MATRIX_FREE_TOL if method == "matrix-free" else 0.0
            spec = spectral.markov_spectrum(C, k, method=method, rng=child_rng(p.seed, "lanczos"), tol=tol)
    eta = np.sort(np.asarray(to_numpy(spec.eigenvalues), dtype=float))[::-1]
    # a NaN has no place in the order (sorted first, it took eta_0's place and left the generator spectrum
    # one eigenvalue off): every eigenvalue is NaN then, which no diffusion spectrum has
    return (np.full_like(eta, np.nan) if np.isnan(eta).any() else eta), spec.method


def _operator(x, p, man):
    """The kernel under test as a matrix-free operator (toolkit code; the diagonal dropped on i.i.d. points)."""
    if p.kernel == "softmax":
        temperature = p.temperature

        def scores(xa, xb):
            return spectral.dot_product_scores(xa, y=xb, temperature=temperature)

        return spectral.KernelOperator(x, kernel=_identity, distance=scores, zero_diagonal=p.points == "random",
                                       fused=False)
    distance = man.distance if p.distance == "geodesic" else man.chordal_distance
    if p.user_kernel:
        # a kernel that declares its profile: the operator fuses the distance and calls Phi once per tile
        kernel = spectral.ProfileKernel(_user_profile(p), p.scale,
                                        name=f"the profile {p.kernel} at scale {p.scale:.4g}")
    else:
        kernel = functools.partial(spectral.fna_kernel, alpha=p.kernel_alpha, scale=p.scale, dim=p.dim)
    return spectral.KernelOperator(x, kernel=kernel, distance=distance, zero_diagonal=p.points == "random")


def _identity(c):
    return c


def _generator(eta_modes, t):
    """lambda = -log(eta) / t for eta in (0, 1); non-positive eta give NaN (reported as failures)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(eta_modes > 0, -np.log(np.where(eta_modes > 0, eta_modes, 1.0)) / t, np.nan)


# ------------------------------------------------------------------------------------ statistics


def _shape_error(lam, ref) -> float:
    """max_k |log lam_k - log ref_k - mean_k(log lam - log ref)|: scale-free shape mismatch."""
    r = np.log(lam) - np.log(ref)
    return float(np.max(np.abs(r - np.mean(r))))


def _best_fit_alpha(lam, family) -> float:
    """The alpha whose continuum spectrum ``family(alpha)`` best matches ``lam`` in shape.

    A scan over (0.05, 1.999] plus the Gaussian endpoint alpha = 2 (the family is discontinuous
    there: Phi jumps from the power law to exp(-z^2)), then bounded Brent refinement around the best
    scanned power-law value. Returns the minimiser of :func:`_shape_error`.
    """
    from scipy.optimize import minimize_scalar

    def err(a):
        # at large scales the continuum family of some alphas has eta_l <= 0 (no generator): never the best fit
        with np.errstate(invalid="ignore", divide="ignore"):
            ref = family(a)
        if not np.all(np.isfinite(ref) & (ref > 0)):
            return np.inf
        return _shape_error(lam, ref)

    grid = np.linspace(0.05, 1.999, 40)
    errs = np.array([err(a) for a in grid])
    i = int(np.argmin(errs))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = minimize_scalar(err, bounds=(lo, hi), method="bounded", options={"xatol": 1e-5})
    best, best_err = (float(res.x), float(res.fun)) if res.fun <= errs[i] else (float(grid[i]), float(errs[i]))
    if err(2.0) < best_err:
        return 2.0
    return best


def _circle_statistics(lam_j, p, ks):
    """Paired frequencies k, measured lambda_k and the continuum references on S^1."""
    lam_pairs = lam_j[: 2 * (p.modes // 2)].reshape(-1, 2)
    lam_k = lam_pairs.mean(axis=1)
    split = np.abs(lam_pairs[:, 1] - lam_pairs[:, 0]) / lam_k
    k = np.arange(1, lam_k.size + 1)

    def family(a):
        return ks.circle_generator_eigenvalues(k, alpha=a, scale=p.scale, dim=p.intrinsic,
                                               distance=p.reference_distance, time=p.scale ** p.alpha)

    return k, lam_k, split, family


def _sphere_statistics(lam_j, p, ks):
    """Shell means (degrees l = 1..L, 2l+1 eigenvalues each) and the Funk-Hecke references on S^2."""
    top = int(math.isqrt(p.modes + 1)) - 1
    means, spreads, start = [], [], 0
    for l in range(1, top + 1):
        shell = lam_j[start : start + 2 * l + 1]
        start += 2 * l + 1
        means.append(shell.mean())
        spreads.append((shell.max() - shell.min()) / shell.mean())
    l = np.arange(1, top + 1)

    def family(a):
        return ks.sphere_generator_eigenvalues(l, alpha=a, scale=p.scale, dim=p.intrinsic,
                                               time=p.scale ** p.alpha)

    return l, np.array(means), np.array(spreads), family


def _sweep_n(scale: float) -> int:
    """Grid size of the scale sweep: h <= s/8, rounded up to a size with small prime factors (a real FFT of
    5026549 points took 1.6 s here, of the 5-smooth 5038848 points 0.1 s)."""
    from scipy.fft import next_fast_len

    return int(next_fast_len(math.ceil(2 * math.pi / (SWEEP_H_OVER_S * scale)), real=True))


# ------------------------------------------------------------------------------------- measuring


@dataclasses.dataclass(frozen=True)
class Sweep:
    """FNA-10 at Fig. 2a's setting: the slope over the fit window as the scale shrinks, on grids with h <= s/8.

    The first scale is the paper's on a resolving grid: its statistics next to the paper grid's are the
    paper grid's discretisation error.
    """

    #: the kernel scales s and the grid sizes n of the sweep
    scales: tuple[float, ...]
    sizes: tuple[int, ...]
    #: log-log slope of lambda_k over the fit window at each scale
    slopes: np.ndarray
    #: the slope of the exact s -> 0 spectrum m(k)/M0 over the fit window (2 for the Gaussian)
    limit_slope: float
    #: the paper's scale on the resolving grid: n, slope, slope gap, shape error and best-fit alpha
    resolved_n: int
    resolved_slope: float
    resolved_slope_gap: float
    resolved_shape_error: float
    resolved_best_fit_alpha: float


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What weyl measures: the generator spectrum, its continuum reference and the fits over the window.

    Per-index arrays run over the frequencies k = 1..modes/2 (S^1: each the mean of a cos/sin pair) or
    the degrees l = 1..L (S^2: each the mean of a shell of 2l+1 eigenvalues). The fits are None when the
    Markov spectrum is not a diffusion spectrum (some eta_j <= 0).
    """

    #: the eigensolver path that computed the spectrum
    method: str
    #: the modes + 1 leading Markov eigenvalues eta_0 = 1 >= eta_1 >= ...
    eta: np.ndarray
    #: generator eigenvalues lambda_j = -log(eta_j) / t, j = 1..modes (t = scale^alpha)
    lambda_j: np.ndarray
    #: frequencies k (S^1) or degrees l (S^2)
    index: np.ndarray
    #: lambda per frequency (pair mean) or degree (shell mean)
    lam: np.ndarray
    #: relative splitting of each cos/sin pair (S^1) or relative spread within each shell (S^2)
    spread: np.ndarray
    #: the exact continuum spectrum of Phi_alpha at the same scale (reference distance), per k or l
    reference: np.ndarray
    #: log-log slope of lam and of the reference over the fit window
    slope: float | None
    slope_reference: float | None
    #: max |log lam - log ref - mean| over the window
    shape_error: float | None
    #: the alpha of the continuum family that best matches lam in shape over the window
    best_fit_alpha: float | None
    #: log-log slope of lambda_j against j = 1..modes (Fig. 2a read literally)
    naive_slope_j: float | None
    #: S^1: the s -> 0 limit m(k)/M0 and its large-k asymptote (alpha < 2; None otherwise)
    limit: np.ndarray | None
    asymptote: np.ndarray | None
    #: S^1: slope of the s -> 0 limit over the window (2 for the Gaussian) and lam / limit at the window's top
    limit_slope: float | None
    limit_ratio_k_hi: float | None
    #: S^2: slope of lambda_j (and of the reference repeated per shell) against j over the window's shells
    slope_j: float | None
    slope_j_reference: float | None
    #: at Fig. 2a's setting (circle grid): the scale sweep and the resolved setting
    sweep: Sweep | None
    #: a user's profile (--kernel module:function): what is wrong with its values (NaN, inf, negative; None when
    #: nothing), and the largest relative change of its continuum reference over the window when the Gauss-Legendre
    #: nodes per panel double (24 -> 48): the reference's own error
    profile_defect: str | None = None
    reference_quadrature_error: float | None = None


def _preferred_path(p: Params) -> str:
    """The path ``auto`` takes without a memory limit (a measurement called with method="auto")."""
    return "circulant" if p.circle_grid else _stored_path(p.n)


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """The Markov spectrum, its generator eigenvalues, the continuum references and the fits."""
    method = _preferred_path(p) if p.method == "auto" else p.method
    try:
        if p.user_kernel:
            _probe_profile(p)
        eta, solver = _markov_eigenvalues(ctx.xp, p, method, ctx.timed)
    except _ProfileDefect as exc:
        return _defective(str(exc))
    if p.points == "random":
        ctx.note("diagonal self score Phi(0) dropped (i.i.d. points)")
    t = p.scale ** p.alpha  # generator time t = kappa^alpha = eps^(alpha/2) (FNA Methods)
    lam_j = _generator(eta[1 : p.modes + 1], t)
    lo, hi = p.fit_range
    circle = p.manifold == "circle"
    quadrature = None
    with ctx.timed("reference"):
        statistics = _circle_statistics if circle else _sphere_statistics
        idx, lam, spread, family = statistics(lam_j, p, ks)
        if p.user_kernel:  # the continuum spectrum of the user's own profile, and its quadrature error
            try:
                ref = _profile_reference(p, idx, ks, 24)
                finer = _profile_reference(p, idx, ks, 48)
            except _ProfileDefect as exc:
                return _defective(str(exc))
            with np.errstate(invalid="ignore", divide="ignore"):
                change = np.abs(finer - ref) / np.abs(finer)
            quadrature = float(np.max(change[(idx >= lo) & (idx <= hi)]))
        else:
            ref = family(p.alpha)
    window = (idx >= lo) & (idx <= hi)
    fits = dict(slope=None, slope_reference=None, shape_error=None, best_fit_alpha=None, naive_slope_j=None,
                limit=None, asymptote=None, limit_slope=None, limit_ratio_k_hi=None, slope_j=None,
                slope_j_reference=None, sweep=None)
    if np.all(np.isfinite(lam_j) & (lam_j > 0)):
        with ctx.timed("fits"):
            fit = fit_power_law(idx[window], lam[window])
            fits.update(slope=fit.slope, slope_reference=fit_power_law(idx[window], ref[window]).slope,
                        shape_error=_shape_error(lam[window], ref[window]),
                        best_fit_alpha=_best_fit_alpha(lam[window], lambda a: family(a)[window]),
                        naive_slope_j=fit_power_law(np.arange(1, p.modes + 1), lam_j).slope)
        if circle:
            if p.alpha < 2:
                limit = ks.limit_generator_eigenvalues(idx, alpha=p.alpha)
                fits.update(limit=limit, asymptote=ks.limit_asymptote(idx, alpha=p.alpha),
                            limit_slope=fit_power_law(idx[window], limit[window]).slope,
                            limit_ratio_k_hi=float(lam[window][-1] / limit[window][-1]))
            else:  # lambda_k -> k^2/4 exactly (Gaussian)
                fits.update(limit_slope=2.0, limit_ratio_k_hi=float(lam[window][-1] / (idx[window][-1] ** 2 / 4.0)))
            if p.paper_setting:
                with ctx.timed("scale_sweep"):
                    fits["sweep"] = _paper_sweep(ctx.xp, p, idx, window, ks)
        else:
            jw = np.arange(lo * lo, (hi + 1) ** 2)  # j over the shells l = lo..hi (lambda_j, j = l^2..l^2+2l)
            ref_j = np.repeat(ref, 2 * idx + 1)
            fits.update(slope_j=fit_power_law(jw, lam_j[jw - 1]).slope,
                        slope_j_reference=fit_power_law(jw, ref_j[jw - 1]).slope)
    return Quantities(method=solver, eta=eta, lambda_j=lam_j, index=idx, lam=lam, spread=spread, reference=ref,
                      reference_quadrature_error=quadrature, **fits)


def _defective(defect: str) -> Quantities:
    """The quantities of a user's profile whose values no kernel has: nothing measured but the defect."""
    empty = np.zeros(0)
    return Quantities(method="none", eta=np.ones(1), lambda_j=empty, index=np.zeros(0, dtype=np.int64), lam=empty,
                      spread=empty, reference=empty, slope=None, slope_reference=None, shape_error=None,
                      best_fit_alpha=None, naive_slope_j=None, limit=None, asymptote=None, limit_slope=None,
                      limit_ratio_k_hi=None, slope_j=None, slope_j_reference=None, sweep=None, profile_defect=defect)


def _paper_sweep(xp, p, idx, window, ks) -> Sweep:
    """The monotone approach of FNA-10 (scale sweep at h = s/8) and the resolved setting at the paper's scale.

    The slope over the fit window is measured at s = 1e-2 ... 1e-5 on grids with h <= s/8; its distance to
    the slope of the exact s -> 0 spectrum m(k)/M0 must not grow as s shrinks. The first point is the
    paper's scale on a resolving grid: its statistics are shown next to the paper grid's, and their
    difference is the paper grid's discretisation error.
    """
    alpha = p.alpha
    if alpha < 2:
        limit = fit_power_law(idx[window], ks.limit_generator_eigenvalues(idx, alpha=alpha)[window]).slope
    else:
        limit = 2.0  # the Gaussian's generator spectrum is k^2/4 at every scale
    slopes, sizes = [], []
    resolved = None
    for s_k in SWEEP_SCALES:
        n_k = _sweep_n(s_k)
        q = dataclasses.replace(p, n=n_k, scale=s_k, method="circulant")
        eta, _ = _markov_eigenvalues(xp, q, "circulant")  # the sweep's own phases stay out of the check's timings
        lam_j = _generator(eta[1 : q.modes + 1], s_k ** alpha)
        _, lam, _, fam = _circle_statistics(lam_j, q, ks)
        slopes.append(fit_power_law(idx[window], lam[window]).slope)
        sizes.append(n_k)
        if resolved is None:
            ref = fam(alpha)
            resolved = dict(resolved_n=n_k, resolved_slope=slopes[-1],
                            resolved_slope_gap=abs(slopes[-1] - fit_power_law(idx[window], ref[window]).slope),
                            resolved_shape_error=_shape_error(lam[window], ref[window]),
                            resolved_best_fit_alpha=_best_fit_alpha(lam[window], lambda a: fam(a)[window]))
    return Sweep(scales=tuple(SWEEP_SCALES), sizes=tuple(sizes), slopes=np.array(slopes), limit_slope=limit,
                 **resolved)


# ------------------------------------------------------------------------------------- asserting


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Slope gap, shape error and best-fit alpha against the continuum (and the shells on S^2; FNA-10 at Fig. 2a)."""
    lo, hi = p.fit_range
    circle = p.manifold == "circle"
    if p.points == "grid" and not circle:
        rec.note("on the Fibonacci grid the best-fit alpha is biased low (by 0.005-0.007 for alpha < 2 at the default "
                 "n = 5000, s = 8 h): the self score Phi(0) of each node is a point mass where the continuum has the "
                 "mean of Phi over the node's cell; it shrinks as s/h grows (0.035 at n = 2000, s = 3 h)")
    what = f"{'k' if circle else 'l'} = {lo}..{hi}"
    if p.user_kernel:  # a user's profile: the contract's verdict on it, starting with its values
        rec.contract_of(p.kernel)
        rec.holds("profile_values", q.profile_defect is None,
                  why="a kernel profile Phi(z) is finite and non-negative at every scaled distance, and positive "
                      "somewhere: its scores are attention weights before the row normalisation",
                  label=f"the profile {p.kernel}: {q.profile_defect}")
        if q.profile_defect is not None:
            return _statement(p, None)
    lam_j = np.asarray(q.lambda_j, dtype=float)
    bad = ~(np.isfinite(lam_j) & (lam_j > 0))
    best = q.best_fit_alpha
    if np.any(bad) or best is None:
        min_eta = float(np.min(q.eta[1 : p.modes + 1]))
        rec.holds("diffusion_spectrum", False,
                  why="a diffusion generator has 0 < eta_k < 1, i.e. finite lambda_k > 0",
                  label=f"{int(bad.sum())} of the {p.modes} leading nontrivial Markov eigenvalues are <= 0 or give "
                        f"no finite generator eigenvalue (min eta = {min_eta:.3g}): not a diffusion generator spectrum")
        rec.info("min_eta", min_eta)
        return _statement(p, None)
    calibrated = {"circle": 0.5, "sphere": 1 / 8}[p.manifold] if p.points == "grid" else 0.25
    if p.paper_setting:
        calibrated = (2 * math.pi / PAPER_N) / PAPER_SCALE  # the paper tolerances were measured there
    ratio = p.h / p.scale
    # outside the calibrated resolution a failure may be the grid's, not the kernel's: say so
    hints = []
    if ratio > calibrated * 1.001:
        hints.append(f"h/s = {ratio:.3g} > {calibrated:.3g}, where these tolerances were measured: the points do "
                     "not resolve the kernel core")
    # the calibration runs fit modes with k h <= 0.063 (k = 10 at n = 1000); far beyond that the
    # discrete spectrum bends away from the continuum one near the grid's Nyquist mode
    if circle and hi * p.h > 0.1 and not p.paper_setting:
        hints.append(f"highest fitted mode k = {hi} has k h = {hi * p.h:.3g} > 0.1: the points do not resolve "
                     "it; use a larger n")
    hint = "; ".join(hints)
    if p.user_kernel:
        shape_tol = CALIBRATION.get("shape_error", p).value
        rec.at_most("reference_quadrature_error", q.reference_quadrature_error, 0.01 * shape_tol,
                    why="the continuum reference of the profile must be exact to 1% of the shape tolerance: its "
                        "change when the Gauss-Legendre nodes per panel double (24 -> 48), relative, over the window "
                        "(the FNA profiles: <= 1e-14)",
                    label=f"the quadrature does not resolve the profile {p.kernel} (its continuum spectrum is not "
                          "known well enough to judge the discrete one)",
                    hint="a profile with a kink or a jump away from z = 0 converges slowly under Gauss-Legendre "
                         "panels; smooth it, or compare at a larger scale")
    if p.paper_setting:
        _paper_slope_window(rec, q.slope, p, what)
    else:
        rec.info("slope", q.slope)
    rec.info("slope_reference", q.slope_reference)
    rec.at_most("slope_gap", abs(q.slope - q.slope_reference), CALIBRATION.get("slope_gap", p),
                label=f"log-log slope over {what} is {q.slope:.4f}, the continuum reference's "
                      f"{q.slope_reference:.4f}", hint=hint)
    rec.at_most("shape_error", q.shape_error, CALIBRATION.get("shape_error", p),
                label=f"shape error max|log lambda - log ref - mean| over {what}", hint=hint)
    best_tol = CALIBRATION.get("best_fit_alpha", p)
    rec.close("best_fit_alpha", best, p.alpha, atol=best_tol, label="best-fit alpha of the continuum family", hint=hint)
    if circle:
        rec.info("pair_splitting", float(np.max(q.spread)))
        rec.info("limit_slope", q.limit_slope)
        rec.info("limit_ratio_k_hi", q.limit_ratio_k_hi)
        rec.info("naive_slope_j", q.naive_slope_j)  # Fig. 2a read against j = 1..modes (biased below alpha)
        if q.sweep is not None:
            _paper_sweep_records(rec, q, p, best_tol.value)
    else:
        window = (q.index >= lo) & (q.index <= hi)
        rec.at_most("shell_spread", float(np.max(q.spread[window])), CALIBRATION.get("shell_spread", p),
                    label=f"eigenvalues do not cluster in shells of 2l+1 (largest relative spread within a shell "
                          f"l in {lo}..{hi})")
        rec.info("slope_j", q.slope_j)
        rec.info("slope_j_reference", q.slope_j_reference)
        rec.info("naive_slope_j", q.naive_slope_j)  # alpha/2 only asymptotically (FNA-11)
    return _statement(p, best)


def _statement(p: Params, best: float | None) -> str:
    lo, hi = p.fit_range
    what = f"{'k' if p.manifold == 'circle' else 'l'} = {lo}..{hi}"
    where = (f"S^1, {p.n} {'equispaced' if p.points == 'grid' else 'i.i.d. uniform'} points"
             if p.manifold == "circle" else
             f"S^2, {p.n} {'Fibonacci' if p.points == 'grid' else 'i.i.d. uniform'} points")
    if p.kernel == "fna":
        built = f"Phi_{p.kernel_alpha:g} (d_M = {p.dim:g}, {p.distance} distance)"
    elif p.user_kernel:
        return (f"contract of the profile {p.kernel} (Weyl law, FNA eq. 22): on {where}, the kernel Phi(d/s) "
                f"({p.distance} distance) at scale {p.scale:.4g} (h/s = {p.h / p.scale:.3g}) has -log(eta)/t with the "
                f"shape of the exact continuum spectrum of the same profile (quadrature, same scale) over {what}, "
                f"and of Phi_alpha's for alpha = {p.alpha:g}" + (f"; best-fit alpha {best:.4f}" if best is not None
                                                                 else ""))
    else:
        built = f"dot-product softmax exp(x.y / {p.temperature:.4g})"
    return (
        f"FNA Weyl law: on {where}, kernel {built} at scale {p.scale:.4g} (h/s = {p.h / p.scale:.3g}), "
        f"-log(eta)/t has the shape of the exact continuum spectrum of Phi_{p.alpha:g} "
        f"({p.reference_distance}, same scale) over {what}"
        + (f"; best-fit alpha {best:.4f}" if best is not None else "")
        + ("; at Fig. 2a's setting the slope lies in the FNA-10 window and approaches its s -> 0 limit "
           "monotonically as s shrinks (1e-2 to 1e-5 on grids with h = s/8)" if p.paper_setting and best is not None
           else "")
    )


def _paper_slope_window(rec, slope, p, what):
    """FNA-10 at Fig. 2a's setting: the log-log slope over the fit window within the ledger's window."""
    alpha = p.alpha
    if alpha == 2:
        window = (2.0 - PAPER_WINDOW_GAUSSIAN, 2.0 + PAPER_WINDOW_GAUSSIAN)
        why = "FNA-10, Fig. 2a (alpha = 2): slope 2.00 +- 0.02 at the paper setting"
    else:
        window = (alpha + PAPER_WINDOW[0], alpha + PAPER_WINDOW[1])
        why = ("FNA-10, Fig. 2a: slope 1.1-1.2 at alpha = 1.2 (window-dependent), accepted in [alpha - 0.15, "
               "alpha + 0.05]; measured 1.131 over k = 2..10")
    hint = ""
    if 1.4 <= alpha < 2:
        hint = (f"near alpha = 2 the finite-scale slope approaches alpha only like (k s)^(2 - alpha) = (k s)^"
                f"{2 - alpha:.2g} (FNA-13): at s = {p.scale:g} it is still far below alpha")
    rec.within("slope", slope, window, why=why, label=f"log-log slope of lambda_k over {what} at the paper setting",
               hint=hint)


def _paper_sweep_records(rec, q: Quantities, p: Params, best_tol: float) -> None:
    """The monotone approach of FNA-10 and the resolved setting next to the paper's (records and notes)."""
    alpha, sweep = p.alpha, q.sweep
    slopes, limit = np.asarray(sweep.slopes, dtype=float), sweep.limit_slope
    rise = float(np.max(np.diff(np.abs(slopes - limit))))
    listed = ", ".join(f"{v:.4f}" for v in slopes)
    scales = ", ".join(f"{v:g}" for v in sweep.scales)
    rec.at_most("monotone_approach", rise, CALIBRATION.get("monotone_approach", p),
                label=f"largest rise of |slope - limit slope {limit:.4f}| as s shrinks ({scales}, h = s/8: slopes "
                      f"{listed})")
    rec.info("sweep_slope_smallest_scale", float(slopes[-1]))
    rec.info("resolved_n", sweep.resolved_n)
    rec.info("resolved_slope", sweep.resolved_slope)
    rec.info("resolved_slope_gap", sweep.resolved_slope_gap)
    rec.info("resolved_shape_error", sweep.resolved_shape_error)
    rec.info("resolved_best_fit_alpha", sweep.resolved_best_fit_alpha)
    bias = q.best_fit_alpha - sweep.resolved_best_fit_alpha
    rec.info("grid_bias_best_fit", bias)
    rec.note(f"resolved setting next to the paper's: the same kernel and scale s = {p.scale:g} on {sweep.resolved_n} "
             f"points (h/s = {2 * math.pi / sweep.resolved_n / p.scale:.3g}) give slope {sweep.resolved_slope:.4f} "
             f"and best-fit alpha {sweep.resolved_best_fit_alpha:.4f}, against {q.slope:.4f} and {q.best_fit_alpha:.4f} "
             f"on the paper's {p.n} points: the paper grid's discretisation error is "
             f"{q.slope - sweep.resolved_slope:+.4f} in slope and {bias:+.4f} in best-fit alpha (the paper-setting "
             "tolerances are ~2x its largest value over alpha 1-2)")
    reach = best_tol + abs(bias)
    told = reach < 0.05
    rec.note(f"resolution at the paper setting: on the paper's grid the best-fit test accepts a kernel alpha within "
             f"about tolerance + |grid bias| = {best_tol:g} + {abs(bias):.4f} = {reach:.3f} of the claim, so it "
             + (f"tells alpha = {alpha:g} from {alpha + 0.05:g} (kernels 0.05 apart fail) but not from "
                f"{alpha + 0.01:g}" if told else f"cannot tell alpha = {alpha:g} from {alpha + 0.05:g}")
             + "; the scale sweep runs on resolving grids and is finer")
    toward = np.abs(slopes - alpha)
    slack = CALIBRATION.get("monotone_approach", p).value
    if alpha < 2 and np.any(np.diff(toward) > slack):
        rec.note(f"the slope approaches the s -> 0 spectrum m(k)/M0 of the circle, whose slope over the window is "
                 f"{limit:.4f}, not alpha = {alpha:g}: |slope - alpha| = "
                 + ", ".join(f"{v:.3f}" for v in toward)
                 + f" at s = {scales} is not monotone (the kernel is not periodised on S^1: its low modes differ "
                   "from k^alpha, FNA-12)")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
