"""Spectral convergence rates of eps-graph and k-NN graph Laplacians on S^m (GL-3, GL-4, GL-5).

GL-3, GL-4 (Calder & Garcia Trillos, ACHA 2022, arXiv 1910.13476: abstract and the eps-graph and k-NN
theorems of section 2): with ``(log n / n)^(1/(m+4)) << eps << 1`` the eigenvalues and eigenvectors of
the eps-graph Laplacian converge to those of ``-Delta`` with error ``O(eps)``, so ``O(n^(-1/(m+4)))`` up to
logs at the smallest such eps; the k-NN graph likewise with ``eps = (k/n)^(1/m)``. Their experiment (the
authors' public code): uniform points on S^2, ``n = 2^12 .. 2^17``, 100 trials, ``k = n^(4/(m+4))``
(``n^(2/3)``), the eps-graph at ``eps = `` the smallest k-NN radius, errors of the eigenvalue groups
``l = 1`` (multiplicity 3) and ``l = 2`` (5): the mean ``|lambda - l(l+1)|`` and the eigenvector error
through projection on the exact eigenspace. A refit of their published error table gives orders
``-0.28 .. -0.53`` in ``n`` (k-NN eigenvalues ``l = 1``: -0.28, ``l = 2``: -0.53; eps-graph eigenvalues
-0.52, -0.40; eigenvectors -0.46 .. -0.51) against the proved ``-1/6``: the bound holds with room, so it
is checked one-sided.

GL-5 (Garcia Trillos, Gerlach, Hein & Slepcev, FoCM 2020, arXiv 1801.10108, abstract and main theorems):
eigenvalues and eigenvectors of the eps-graph Laplacian converge at ``O((log n / n)^(1/(2m)))`` with
``eps ~ (log n / n)^(1/(2m))``; checked on ``error / (log n)^(1/(2m))``.

The construction is ``spectral.graph_laplacians`` (eps-graph ``2 / (sigma_eta p n eps^(m+2)) (D - W)``,
k-NN with ``eps_k = (k / (n p alpha_m))^(1/m)``; GL-1 checks the constants against the exact continuum
spectra). The exact references are the Laplace-Beltrami eigenvalues ``l (l + m - 1)`` and eigenspaces
(``cos, sin`` of ``l theta``; the ``2l + 1`` real spherical harmonics) of
``manifolds.references.graph_laplacian``; the eigenvector error is the root-mean-square sine of the
principal angles between the computed group of eigenvectors and the exact eigenspace. Every rate is
decided by ``verify.rates.decide_rate`` (kind ``"bound"`` with the theorems' log factors,
``log_power`` of :func:`log_powers`: the upper end of the 95 % interval of the asymptotic order of
``error / (log n)^a`` must be at most the claimed order plus the margin ``RATE_MARGIN``); the fitted
orders, their intervals and the asymptotic intervals are reported.

Tiers: the default sizes ``n = 256 .. 2048`` with 12 repeats (3 s; with 4 or 8 repeats the local orders of
the smallest sizes leave one or two of seeds 0-9 pre-asymptotic, with 12 every seed decides); ``full=True`` the paper's
``n = 2^12 .. 2^17`` with 4 repeats (the paper took 100 trials; the k-NN graph at ``2^17`` holds
``k = 2580`` neighbours per point; measured 40 CPU minutes and a 4.8 GiB peak, orders -0.40 .. -0.52,
and errors at ``2^17`` within the 4 repeats' noise of the authors' published table).
``benchmarks/bench_graph_laplacians.py --huge 262144`` measures one sample at ``n = 2^18``. Beyond that
the ``streamed`` path recomputes the graphs block by block in each product (``O(block n)`` memory) and
runs on a GPU (``path="auto"`` takes it there): ``python -m verify.gl_eps_knn --device gpu
--sizes 65536,131072,262144,524288,1048576 --repeats 2``.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

import manifolds
from manifolds.references import graph_laplacian
from spectral import graph_laplacians
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError, child_rng
from verify.core.check import Check, Context
from verify.core.memory import PathNeed
from verify.core.params import Choice, Flag, Int, Ints, Real
from verify.core.result import Recorder
from verify.core.threads import single_blas_thread
from verify.rates import RateQuantities, decide_rate, record_bound

CHECK = Check("gl_eps_knn", devices=("cpu", "gpu"))

#: Margin of the one-sided rate rule (``verify.rates``' ``tolerance``): the bound holds when the upper end of
#: the order's 95 % interval is at most ``claimed + RATE_MARGIN`` (a rule, not a measured tolerance: the
#: observed orders are -0.3 .. -0.6 against -1/6 and -1/4).
RATE_MARGIN = 0.05
#: Laplace-Beltrami degrees whose eigenvalue groups are measured (multiplicities 3 and 5 on S^2).
DEGREES = (1, 2)
#: Sizes and repeats of the tiers.
DEFAULT_SIZES = (256, 512, 1024, 2048)
FULL_SIZES = tuple(2**e for e in range(12, 18))
#: Peak bytes per stored pair of the largest graph (4 of the pattern's int32 indices, 8 of the unit data
#: SciPy's products use while they fit in 256 MiB, 1 of slack) and per point (eigensolver basis, points,
#: errors); the k-NN graph has about 1.25 n k pairs (the union of the two directed relations).
BYTES_PER_PAIR = 13
BYTES_PER_POINT = 400


@CHECK.parameters
class Params:
    sizes: tuple = Ints(None, "Numbers of points n (at least 3, increasing)", low=64, high=2**21, min_len=3,
                        auto="256, 512, 1024, 2048; with full the paper's 2^12 .. 2^17", unit="points")
    repeats: int = Int(None, "Independent samples per size", low=2, high=200, auto="12; 4 with full")
    m: int = Int(2, "Dimension of the unit sphere S^m the points are drawn from, uniformly (the paper's S^2)",
                 low=1, high=2)
    gghs_scale: float = Real(1.5, "c in the GGHS radius eps = c (log n / n)^(1/(2m))", low=0.5, high=10.0)
    claimed_order: float = Real(None, "Exponent p asserted in error = O(n^p) for every construction (other values "
                                      "are negative controls: a steeper p fails)", low=-3.0, high=0.0,
                                auto="the papers': -1/(m+4) for GL-3, GL-4 and -1/(2m) for GL-5")
    path: str = Choice("auto", ("auto", "sparse", "streamed"),
                       '"sparse": cKDTree neighbour lists on the host; "streamed": the graphs recomputed block by '
                       "block in every product, on the device (O(block n) memory, O(n^2) time: for a GPU); \"auto\": "
                       "sparse on the cpu, streamed on the gpu")
    full: bool = Flag(False, "The paper's sizes n = 2^12 .. 2^17 (40 CPU minutes, 5 GiB)")

    def resolve(self):
        """Tier defaults; sizes increasing; the GPU computes on the streamed path only."""
        sizes = self.sizes if self.sizes is not None else (FULL_SIZES if self.full else DEFAULT_SIZES)
        if any(b <= a for a, b in zip(sizes, sizes[1:])):
            raise InputError(f"sizes must increase, got {tuple(sizes)}")
        repeats = self.repeats if self.repeats is not None else (4 if self.full else 12)
        path = self.path if self.path != "auto" else ("streamed" if self.device == "gpu" else "sparse")
        if self.device == "gpu" and path != "streamed":
            raise InputError("path must be 'streamed' or 'auto' with device='gpu' (the sparse graphs are built on the "
                             "host)")
        return dataclasses.replace(self, sizes=tuple(sizes), repeats=repeats, path=path)


def k_neighbours(n: int, m: int) -> int:
    """The paper's ``k = floor(n^(4/(m+4)))`` (``n^(2/3)`` on S^2)."""
    return int(n ** (4.0 / (m + 4)))


def gghs_eps(n: int, m: int, scale: float) -> float:
    """GGHS radius ``c (log n / n)^(1/(2m))``."""
    return scale * (math.log(n) / n) ** (1.0 / (2 * m))


def claimed_orders(p) -> dict[str, float]:
    """The exponent asserted per construction (``p.claimed_order`` overrides the papers')."""
    if p.claimed_order is not None:
        return {name: p.claimed_order for name in CONSTRUCTIONS}
    return {"eps": -1.0 / (p.m + 4), "knn": -1.0 / (p.m + 4), "gghs": -1.0 / (2 * p.m)}


#: construction -> (ledger id, what it is)
CONSTRUCTIONS = {
    "eps": ("GL-3", "eps-graph at the smallest k-NN radius (Calder-Garcia Trillos)"),
    "knn": ("GL-4", "k-NN graph, k = n^(4/(m+4)) (Calder-Garcia Trillos)"),
    "gghs": ("GL-5", "eps-graph, eps = c (log n / n)^(1/(2m)) (Garcia Trillos-Gerlach-Hein-Slepcev)"),
}


@CHECK.memory
def needs(p: Params) -> dict:
    """The largest graph of the run (the k-NN graph at the largest n) as a function of --sizes' largest value."""
    def estimate(n):
        pairs = 1.25 * n * k_neighbours(n, p.m)
        return (BYTES_PER_PAIR * pairs if p.path == "sparse" else 0) + BYTES_PER_POINT * n + (64 << 20)

    n = max(p.sizes)
    what = f"the k-NN graph at n = {n} (k = {k_neighbours(n, p.m)}) on the {p.path} path"
    return {p.path: PathNeed(estimate, n, "--sizes", 64, what, "--path streamed" if p.path == "sparse" else "")}


@dataclasses.dataclass(frozen=True)
class Errors:
    """What one construction gave: ``[size, repeat, ...]`` arrays."""

    #: the lowest eigenvalues, ``[size, repeat, i]`` for i = 0 .. 1 + sum of the multiplicities of DEGREES
    eigenvalues: np.ndarray
    #: degree l -> RMS sine of the principal angles between the computed group and the exact eigenspace
    eigenvector: dict[int, np.ndarray]
    #: the radius of each graph (the k-NN graph's eps_k)
    eps: np.ndarray

    def eigenvalue_error(self, m: int, l: int) -> np.ndarray:
        """``[size, repeat]`` mean ``|lambda_i - l (l + m - 1)|`` over the group of degree ``l`` (the paper's)."""
        group, target = _group(m, l)
        return np.mean(np.abs(self.eigenvalues[:, :, group] - target), axis=2)

    def eigenvalue_rms(self, m: int) -> np.ndarray:
        """``[size, repeat]`` relative RMS error ``sqrt(mean_i (lambda_i / mu_i - 1)^2)`` over every degree of DEGREES."""
        parts = []
        for l in DEGREES:
            group, target = _group(m, l)
            parts.append(self.eigenvalues[:, :, group] / target - 1.0)
        return np.sqrt(np.mean(np.concatenate(parts, axis=2) ** 2, axis=2))

    def eigenvector_rms(self, m: int) -> np.ndarray:
        """``[size, repeat]`` RMS sine over every eigenvector of the degrees of DEGREES (groups weighted by size)."""
        g = np.asarray([manifolds.sphere_multiplicity(m, l) for l in DEGREES], dtype=float)
        sq = np.stack([np.asarray(self.eigenvector[l]) ** 2 for l in DEGREES], axis=2)
        return np.sqrt(np.sum(sq * g, axis=2) / g.sum())


def _group(m: int, l: int) -> tuple[slice, float]:
    """The positions of the degree-``l`` eigenvalues in the ascending spectrum, and their exact value."""
    start = sum(manifolds.sphere_multiplicity(m, j) for j in range(l))
    return slice(start, start + manifolds.sphere_multiplicity(m, l)), float(l * (l + m - 1))


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What gl_eps_knn measures: errors of the three constructions at each size and repeat."""

    sizes: np.ndarray
    m: int
    k: np.ndarray
    eps_graph: Errors
    knn: Errors
    gghs: Errors
    #: the log factor the GGHS rate carries, (log n)^(1/(2m)), divided out before its rate is decided
    gghs_log_factor: np.ndarray


def _count(m: int) -> int:
    """Eigenpairs needed to cover the degrees of DEGREES (multiplicity 2 on S^1, 2l + 1 on S^2)."""
    return 1 + sum(manifolds.sphere_multiplicity(m, l) for l in DEGREES)


def _laplacian(x, **kwargs):
    """The graph Laplacian under test (a seam for the tests' wrong constructions)."""
    return graph_laplacians.graph_laplacian(x, **kwargs)


def degree_spectrum(lap, x_host, m: int, degrees) -> tuple[np.ndarray, list[float]]:
    """The lowest eigenvalues of the graph Laplacian ``lap`` of the points ``x_host`` on S^m, up to the last of
    ``degrees`` (1, 2, ...), and per degree the RMS sine between its group of eigenvectors and the exact eigenspace."""
    lam, vecs = lap.eigenpairs(_group(m, max(degrees))[0].stop)
    lam, vecs = np.asarray(to_numpy(lam)), np.asarray(to_numpy(vecs))
    weights = None if lap.inner_weights is None else np.asarray(to_numpy(lap.inner_weights))
    vectors = [graph_laplacian.eigenspace_distance(vecs[:, _group(m, l)[0]],
                                                   graph_laplacian.eigenspace_basis(x_host, m, l), weights)
               for l in degrees]
    return lam, vectors


def _draw(p: Params, xp, item) -> dict:
    """One sample (size n, repeat j): per construction the lowest eigenvalues, the RMS sine per degree and the
    graph's radius."""
    n, j = item
    manifold = manifolds.Circle() if p.m == 1 else manifolds.Sphere(p.m)
    common = {"m": p.m, "density": 1.0 / (2 * math.pi if p.m == 1 else 4 * math.pi), "method": p.path}
    with single_blas_thread():
        x_host = manifold.sample(n, rng=child_rng(p.seed, "gl_eps_knn", p.m, n, j))
        x = xp.asarray(x_host)
        knn = _laplacian(x, graph="knn", k=k_neighbours(n, p.m), **common)
        eps = float(xp.min(knn.radii))
        graphs = {"knn": knn}
        graphs["eps"] = _laplacian(x, graph="eps", eps=eps, **common)
        graphs["gghs"] = _laplacian(x, graph="eps", eps=gghs_eps(n, p.m, p.gghs_scale), **common)
        out = {}
        for name, lap in graphs.items():
            lam, vectors = degree_spectrum(lap, x_host, p.m, DEGREES)
            out[name] = (lam, vectors, lap.eps)
    return out


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Sample, build the three graphs, take their low eigenpairs, and measure the errors.

    Each (size, repeat) is one independent draw of ``ctx.map`` (progress, ``--scheduler``, ``--resume``); a
    draw costs about n k (the k-NN graph's pairs) on the sparse path, n^2 on the streamed one."""
    sizes = np.asarray(p.sizes)
    shape = (len(p.sizes), p.repeats)
    out = {name: (np.empty(shape + (_count(p.m),)), {l: np.empty(shape) for l in DEGREES}, np.empty(shape))
           for name in CONSTRUCTIONS}
    items = [(int(n), j) for n in p.sizes for j in range(p.repeats)]
    cost = (lambda it: it[0] * k_neighbours(it[0], p.m)) if p.path == "sparse" else (lambda it: float(it[0]) ** 2)
    with ctx.timed("draws"):
        draws = ctx.map(functools.partial(_draw, p, ctx.xp), items, label=lambda it: f"n={it[0]} repeat {it[1] + 1}",
                        weight=cost)
    for (n, j), draw in zip(items, draws):
        i = list(p.sizes).index(n)
        for name, (lam, vectors, eps) in draw.items():
            out[name][0][i, j] = lam
            for a, l in enumerate(DEGREES):
                out[name][1][l][i, j] = vectors[a]
            out[name][2][i, j] = eps
    errors = {name: Errors(eigenvalues=v, eigenvector=w, eps=e) for name, (v, w, e) in out.items()}
    ctx.note("the eps-graph of GL-3 takes eps = the smallest k-NN radius of the same sample (the paper's "
             "experiment), so it is a subgraph of the k-NN graph")
    return Quantities(sizes=sizes, m=p.m, k=np.asarray([k_neighbours(n, p.m) for n in p.sizes]),
                      eps_graph=errors["eps"], knn=errors["knn"], gghs=errors["gghs"],
                      gghs_log_factor=np.log(sizes.astype(float)) ** (1.0 / (2 * p.m)))


def rate_decisions(q: Quantities, p) -> dict[tuple[str, str], object]:
    """``(construction, "eigenvalue" | "eigenvector") -> verify.rates.RateResult`` for every rate.

    The errors are pooled over the degrees of DEGREES (relative RMS of the eigenvalues, RMS sine of the
    eigenvectors): the degree-1 eigenvalues of the eps-graph on S^2 have no bias at all (the continuum
    operator reproduces them exactly), so their error is pure sampling noise, too noisy alone for the
    local orders of a few repeats.
    """
    claimed = claimed_orders(p)
    logs = log_powers(q.m)
    out = {}
    for name, errs in (("eps", q.eps_graph), ("knn", q.knn), ("gghs", q.gghs)):
        for kind, err in (("eigenvalue", errs.eigenvalue_rms(q.m)), ("eigenvector", errs.eigenvector_rms(q.m))):
            data = RateQuantities(sizes=np.asarray(q.sizes), errors=err, deterministic=False)
            out[name, kind] = decide_rate(data, claimed=claimed[name], kind="bound", tolerance=RATE_MARGIN,
                                          log_power=logs[name], seed=p.seed)
    return out


def log_powers(m: int) -> dict[str, float]:
    """The theorems' powers of log n: each rate is ``(log n / n)^a``, so ``n^-a (log n)^a``.

    GL-3 and GL-4 (Calder-Garcia Trillos) prove O(eps) for eps (and (k/n)^(1/m)) down to the smallest
    admissible ``(log n / n)^(1/(m+4))``: the rate "n^(-1/(m+4)) up to logarithms" is that, with the log.
    GL-5 (GGHS) states ``(log n / n)^(1/(2m))``.
    """
    return {"eps": 1.0 / (m + 4), "knn": 1.0 / (m + 4), "gghs": 1.0 / (2 * m)}


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Each rate one-sided (``kind="bound"``), with its observed order and 95 % interval."""
    claimed = claimed_orders(p)
    degrees = "+".join(str(l) for l in DEGREES)
    for (name, kind), res in rate_decisions(q, p).items():
        cid, what = CONSTRUCTIONS[name]
        tag = f"{cid}_{name}_{kind}"
        record_bound(rec, tag, res, why=f"verify.rates, kind 'bound', margin {RATE_MARGIN}; asymptotic order: "
                                        f"{res.message}", decide="range",
                     label=f"{cid}: the {kind} error of degrees {degrees} ({what}) does not fall like "
                           f"O(n^{claimed[name]:.4g} (log n)^{res.log_power:.4g}) over the sizes measured "
                           f"[asymptotic order: {res.status}]")
    rec.info("k_largest", int(q.k[-1]))
    rec.info("eps_graph_radius_largest_n", float(np.mean(q.eps_graph.eps[-1])))
    rec.info("gghs_radius_largest_n", float(np.mean(q.gghs.eps[-1])))
    sizes = ", ".join(str(int(n)) for n in q.sizes)
    logs = log_powers(q.m)
    return (f"on S^{q.m} (n = {sizes}) the eigenvalue and eigenvector errors of the degree-1 and degree-2 groups "
            f"are O(n^{claimed['eps']:.4g} (log n)^{logs['eps']:.4g}) for the eps-graph at the smallest k-NN radius "
            f"and the k-NN graph with k = n^(4/(m+4)) (Calder-Garcia Trillos), and O(n^{claimed['gghs']:.4g} "
            f"(log n)^{logs['gghs']:.4g}) for the eps-graph at eps = {p.gghs_scale:g} (log n / n)^(1/(2m)) (GGHS)")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
