"""Cluster structure of attention matrices: near-1 eigenvalues, eigengaps, iteration, ablation.

* DRIFT ("attention as drift-diffusion", section 3.2) and the cited rank-collapse result say that
  attention-only dynamics ``H <- A H`` converge to the stationary state and that the number of
  eigenvalues of ``A`` near 1 counts the clusters (ledger DRIFT-9): :func:`near_one_count`,
  :func:`eigengap_ratios`, :func:`iterate_attention`.
* FNA ("Fractional neural attention", Fig. 4) removes attention edges at random and reports how
  performance degrades; the synthetic counterpart here measures how the spectral gap and the
  shortest-path hop counts degrade: :func:`ablate_edges`, :func:`ablate_nodes`,
  :func:`ablation_curve`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from graphs._inputs import dense_stochastic
from graphs.gap import spectral_gap, stationary_distribution
from graphs.paths import shortest_paths
from spectral.floor.backend import from_numpy, to_numpy
from spectral.floor.display import array_summary, result_repr
from spectral.floor.validation import InputError, as_generator, check_int, check_option, check_real, check_reals

__all__ = [
    "near_one_count",
    "eigengap_ratios",
    "estimated_clusters",
    "IterationResult",
    "iterate_attention",
    "ablate_edges",
    "ablate_nodes",
    "AblationCurve",
    "ablation_curve",
    "ABLATION_KINDS",
]

ABLATION_KINDS = ("edge", "node")


def _moduli_desc(eigenvalues) -> np.ndarray:
    eta = np.asarray(to_numpy(eigenvalues)).reshape(-1)
    if eta.size == 0 or not np.all(np.isfinite(eta)):
        raise InputError("eigenvalues must be a non-empty finite array")
    return eta


def near_one_count(eigenvalues, *, delta: float = 1e-3) -> int:
    """Number of eigenvalues with ``|eta - 1| <= delta`` (one per well-separated cluster).

    DRIFT-9: with clusters separated by many kernel widths, ``A`` is close to block diagonal and
    has one eigenvalue near 1 per block. ``delta`` must be small against the intra-cluster gap
    and large against the inter-cluster leakage (``delta = 1e-3`` counts correctly for separations
    >= 8 sigma, not for 4-6 sigma).
    """
    eta = _moduli_desc(eigenvalues)
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    return int(np.sum(np.abs(eta - 1.0) <= delta))


def eigengap_ratios(eigenvalues, *, k_max: int | None = None) -> np.ndarray:
    """Relaxation-rate ratios ``(1 - |eta_{k+1}|) / (1 - |eta_k|)`` for ``k = 2 .. k_max``.

    ``eta_1 = 1 >= |eta_2| >= ...`` sorted by modulus. A large ratio at ``k`` means ``k`` slow
    modes (``k`` clusters) separated from the fast intra-cluster ones. Entry ``k - 2`` of the
    result is the ratio at ``k``; ``inf`` where ``|eta_k| = 1`` exactly.
    """
    eta = _moduli_desc(eigenvalues)
    mod = np.sort(np.abs(eta))[::-1]
    m = mod.size
    k_max = check_int("k_max", m - 1 if k_max is None else k_max, low=2, high=m - 1)
    rate = 1.0 - mod
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = rate[2:k_max + 1] / rate[1:k_max]
    return np.where(rate[1:k_max] <= 0, np.inf, ratios)


def estimated_clusters(eigenvalues, *, k_max: int | None = None) -> int:
    """The ``k`` in ``[2, k_max]`` with the largest eigengap ratio (:func:`eigengap_ratios`)."""
    return int(np.argmax(eigengap_ratios(eigenvalues, k_max=k_max))) + 2


@dataclasses.dataclass(frozen=True, repr=False)
class IterationResult:
    """Residuals of iterated attention ``H_L = A^L H`` against the stationary state.

    Attributes
    ----------
    residuals : numpy array of shape (steps + 1,)
        ``||H_L - 1 pi^T H||_F`` for ``L = 0 .. steps``.
    rate : float
        Geometric rate fitted to the residuals by least squares on ``log residual`` over the
        steps where the residual is above ``1e3`` eps times the initial one (``nan`` if < 3 such).
    eta2_modulus : float
        ``|eta_2|``, the rate predicted for a diagonalisable ``A``.
    """

    residuals: np.ndarray
    rate: float
    eta2_modulus: float

    def __repr__(self) -> str:
        return result_repr(self, steps=int(self.residuals.shape[0]) - 1, rate=f"{self.rate:.6g}",
                           eta2_modulus=f"{self.eta2_modulus:.6g}", residuals=array_summary(self.residuals))


def iterate_attention(A, H, *, steps: int) -> IterationResult:
    """Iterate ``H <- A H`` (attention without residual connections) and track the collapse.

    DRIFT-9 (b): ``||A^L H - 1 pi^T H|| ~ |eta_2|^L``: every token converges to the same
    ``pi``-weighted average (rank collapse). Host boundary only for the residual norms and the
    stationary distribution; the iteration itself runs in ``A``'s namespace.

    Parameters
    ----------
    A : array of shape (n, n)
        Row-stochastic, irreducible.
    H : array of shape (n, m)
        Token features (values), same namespace as ``A``. They are not checked: a NaN or inf in
        ``H`` is carried into the result (every residual and the rate are NaN).
    steps : int >= 1
    """
    xp = dense_stochastic(A, what="iterate_attention")
    steps = check_int("steps", steps, low=1)
    if len(H.shape) != 2 or H.shape[0] != A.shape[0]:
        raise InputError(f"H must have shape ({A.shape[0]}, m) to match A, got {tuple(H.shape)}")
    pi = stationary_distribution(A)
    limit = xp.ones((A.shape[0], 1), dtype=H.dtype) * (pi[None, :] @ H)
    res = []
    h = H
    for _ in range(steps + 1):
        res.append(float(xp.sqrt(xp.sum((h - limit) ** 2))))
        h = A @ h
    res = np.asarray(res)
    ok = res > 1e3 * np.finfo(float).eps * max(res[0], 1e-300)
    L = np.arange(steps + 1)[ok]
    rate = float(np.exp(np.polyfit(L, np.log(res[ok]), 1)[0])) if L.size >= 3 else math.nan
    return IterationResult(res, rate, abs(spectral_gap(A).eta2))


def _fraction(fraction) -> float:
    return check_real("fraction", fraction, low=0.0, high=1.0, high_open=True)


def ablate_edges(A, *, fraction: float, rng=None):
    """Remove a random ``fraction`` of the off-diagonal edges (``A_ij > 0``) and renormalise rows.

    Renormalising the rows of ``A`` after zeroing equals renormalising the scores ``C`` (the
    attention mask of FNA Fig. 4). The diagonal is kept so no row becomes empty; a row without
    self-attention that loses every edge gets a self-loop. The mask is drawn on the host.
    """
    xp = dense_stochastic(A, what="ablate_edges")
    frac = _fraction(fraction)
    gen = as_generator(rng)
    n = A.shape[0]
    a = np.asarray(to_numpy(A), dtype=np.float64)
    off = (a > 0) & ~np.eye(n, dtype=bool)
    idx = np.flatnonzero(off)
    drop = gen.choice(idx, size=int(round(frac * idx.size)), replace=False) if idx.size else idx
    keep = np.ones(n * n, dtype=bool)
    keep[drop] = False
    keep = keep.reshape(n, n)
    b = np.where(keep, a, 0.0)
    empty = b.sum(axis=1) <= 0
    b[empty, empty] = 1.0  # isolated rows: self-loop
    mask = from_numpy(keep, like=A)
    out = xp.where(mask, A, xp.zeros_like(A))
    if empty.any():
        out = out + from_numpy(np.diag(empty.astype(np.float64)), like=A)
    return out / xp.sum(out, axis=1)[:, None]


def ablate_nodes(A, *, fraction: float, rng=None):
    """Remove a random ``fraction`` of the tokens (rows and columns) and renormalise rows.

    Returns
    -------
    (A_sub, kept) : the renormalised ``(m, m)`` matrix and the host index array of kept tokens.
    """
    xp = dense_stochastic(A, what="ablate_nodes")
    frac = _fraction(fraction)
    gen = as_generator(rng)
    n = A.shape[0]
    m = n - int(round(frac * n))
    if m < 2:
        raise InputError(f"fraction={fraction!r} leaves {m} of {n} tokens; at least 2 must remain")
    kept = np.sort(gen.choice(n, size=m, replace=False))
    idx = from_numpy(kept, like=A)
    sub = xp.take(xp.take(A, idx, axis=0), idx, axis=1)
    s = xp.sum(sub, axis=1)
    if bool(xp.any(s <= 0)):
        raise InputError("node ablation left a token with no remaining attention (all its keys removed)")
    return sub / s[:, None], kept


@dataclasses.dataclass(frozen=True, repr=False)
class AblationCurve:
    """Spectral gap and hop counts after random ablation, mean and sd over repeats.

    All arrays have the shape of ``fractions``; ``unreachable`` is the mean fraction of ordered
    pairs with no path (hop statistics are over reachable pairs).
    """

    kind: str
    fractions: np.ndarray
    gap_mean: np.ndarray
    gap_sd: np.ndarray
    hops_mean: np.ndarray
    hops_sd: np.ndarray
    unreachable: np.ndarray
    repeats: int

    def __repr__(self) -> str:
        return result_repr(self, kind=repr(self.kind), fractions=array_summary(self.fractions),
                           repeats=self.repeats, gap_mean=array_summary(self.gap_mean))


def ablation_curve(A, fractions, *, kind: str = "edge", repeats: int = 5, rng=None) -> AblationCurve:
    """How the spectral gap and the mean shortest-path hop count degrade under random ablation.

    The synthetic counterpart of FNA Fig. 4 (random edge removal); ``kind="node"`` removes tokens.
    Each fraction is repeated ``repeats`` times with independent masks from ``rng``.
    """
    dense_stochastic(A, what="ablation_curve")
    kind = check_option("kind", kind, ABLATION_KINDS)
    repeats = check_int("repeats", repeats, low=1)
    if hasattr(fractions, "shape"):
        fractions = np.asarray(to_numpy(fractions), dtype=float).reshape(-1)
    fr = np.asarray(check_reals("fractions", fractions, low=0.0, high=1.0, high_open=True))
    gen = as_generator(rng)
    gaps = np.empty((fr.size, repeats))
    hops = np.empty((fr.size, repeats))
    unreach = np.empty((fr.size, repeats))
    for a, f in enumerate(fr):
        for r in range(repeats):
            B = ablate_edges(A, fraction=f, rng=gen) if kind == "edge" else ablate_nodes(A, fraction=f, rng=gen)[0]
            gaps[a, r] = spectral_gap(B).gap
            sp = shortest_paths(B)
            h = to_numpy(sp.hops)
            off = ~np.eye(h.shape[0], dtype=bool)
            unreach[a, r] = float(np.mean(h[off] < 0))
            hops[a, r] = sp.mean_hops()
    return AblationCurve(kind, fr, gaps.mean(1), gaps.std(1), hops.mean(1), hops.std(1), unreach.mean(1), int(repeats))
