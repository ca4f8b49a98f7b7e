"""Independent references for the FMA checks, written from the paper's definitions with plain loops.

Nothing here imports :mod:`spectral.fma`: the sets ``N(i)`` and ``F_l(i)`` are built query by query
from the definitions of "FMA in 1D" / "FMA in 2D" (block indices ``b_l(i) = floor(i / (r 2^l))``,
windows ``|b_l(j) - b_l(i)| <= 1``, set differences), the groups ``G_l(i)`` by testing every group
``G_{l,m}`` for inclusion, and eq. (4) by explicit sums over those sets. These are slow on purpose
(loops over queries and groups) and meant for the small sizes of the checks.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["Hierarchy", "depth", "hierarchy_1d", "hierarchy_2d", "python_sets_1d", "eq4_reference",
           "softmax_attention"]


def depth(n: int, r: int) -> int:
    """``ceil(log2(n / r))`` by repeated doubling."""
    levels, size = 0, r
    while size < n:
        size *= 2
        levels += 1
    return levels


@dataclasses.dataclass(frozen=True)
class Hierarchy:
    """Definition-based sets of every query: ``level[i, j]`` (-1 = not covered, -2 = covered twice),
    ``groups[l-1][i]`` the sorted list of group indices ``m`` with ``G_{l,m} ⊆ F_l(i)``, and
    ``windows[l][i]`` the boolean level-``l`` window (``l = 0`` is the near field).
    ``group_members[l-1][m]`` are the tokens of ``G_{l,m}`` and ``group_local[l-1][m]`` their positions
    in the group's full (uncut) aggregation kernel, flattened row-major."""

    n: int
    r: int
    depth: int
    level: np.ndarray
    groups: tuple
    group_members: tuple
    group_local: tuple
    windows: tuple


def _cover(masks, n):
    """Level matrix from a list of boolean rows per level (-1 uncovered, -2 covered more than once)."""
    counts = np.sum(masks, axis=0)
    level = np.argmax(masks, axis=0).astype(np.int64)
    level[counts == 0] = -1
    level[counts > 1] = -2
    return level


def hierarchy_1d(n: int, r: int) -> Hierarchy:
    """Near and far sets of 1-D FMA for every query, one query at a time, from the definitions."""
    L = depth(n, r)
    j = np.arange(n)
    level = np.empty((n, n), dtype=np.int64)
    groups = [[] for _ in range(1, L)]
    windows = [np.zeros((n, n), dtype=bool) for _ in range(max(L, 1))]
    for i in range(n):
        near = np.abs(j // r - i // r) <= 1
        windows[0][i] = near
        masks, taken = [near], near.copy()
        for lev in range(1, L):
            win = np.abs(j // (r * 2**lev) - i // (r * 2**lev)) <= 1
            windows[lev][i] = win
            far = win & ~taken
            taken |= far
            masks.append(far)
            g = r * 2 ** (lev - 1)
            inside = [m for m in range(-(-n // g)) if np.all(far[m * g:min((m + 1) * g, n)])]
            groups[lev - 1].append(inside)
        level[i] = _cover(np.array(masks), n)
    members = tuple(tuple(np.arange(m * (r * 2 ** (lev - 1)), min((m + 1) * r * 2 ** (lev - 1), n))
                          for m in range(-(-n // (r * 2 ** (lev - 1))))) for lev in range(1, L))
    local = tuple(tuple(np.arange(len(m)) for m in lev) for lev in members)
    return Hierarchy(n, r, L, level, tuple(groups), members, local, tuple(windows))


def python_sets_1d(n: int, r: int, i: int) -> list[set]:
    """``[N(i), F_1(i), ..., F_{L-1}(i)]`` as Python sets, with explicit loops over the keys."""
    L = depth(n, r)
    near = {j for j in range(n) if abs(j // r - i // r) <= 1}
    out, taken = [near], set(near)
    for lev in range(1, L):
        block = r * 2**lev
        far = {j for j in range(n) if abs(j // block - i // block) <= 1 and j not in taken}
        taken |= far
        out.append(far)
    return out


def hierarchy_2d(width: int, r: int) -> Hierarchy:
    """Near and far sets of the 2-D quadtree (pixel ``(x, y)`` is token ``x W + y``), per pixel."""
    n = width * width
    L = depth(width, r)
    x, y = np.divmod(np.arange(n), width)
    level = np.empty((n, n), dtype=np.int64)
    groups = [[] for _ in range(1, L)]
    windows = [np.zeros((n, n), dtype=bool) for _ in range(max(L, 1))]
    for i in range(n):
        near = (np.abs(x // r - x[i] // r) <= 1) & (np.abs(y // r - y[i] // r) <= 1)
        windows[0][i] = near
        masks, taken = [near], near.copy()
        for lev in range(1, L):
            b = r * 2**lev
            win = (np.abs(x // b - x[i] // b) <= 1) & (np.abs(y // b - y[i] // b) <= 1)
            windows[lev][i] = win
            far = win & ~taken
            taken |= far
            masks.append(far)
            g = r * 2 ** (lev - 1)
            m = -(-width // g)
            grid = far.reshape(width, width)
            inside = [u * m + v for u in range(m) for v in range(m)
                      if np.all(grid[u * g:(u + 1) * g, v * g:(v + 1) * g])]
            groups[lev - 1].append(inside)
        level[i] = _cover(np.array(masks), n)
    members, local = [], []
    for lev in range(1, L):
        g = r * 2 ** (lev - 1)
        m = -(-width // g)
        cells = [[(a, b) for a in range(u * g, min((u + 1) * g, width)) for b in range(v * g, min((v + 1) * g, width))]
                 for u in range(m) for v in range(m)]
        members.append(tuple(np.array([a * width + b for a, b in c]) for c in cells))
        local.append(tuple(np.array([(a % g) * g + b % g for a, b in c]) for c in cells))
    return Hierarchy(n, r, L, level, tuple(groups), tuple(members), tuple(local), tuple(windows))


def softmax_attention(q, k, v, *, causal: bool = False):
    """Dense softmax attention ``softmax(q k^T / sqrt(d)) v`` (eq. 2), optionally causal."""
    s = q @ k.T / np.sqrt(q.shape[1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    s = s - s.max(axis=1, keepdims=True)
    e = np.exp(s)
    return (e / e.sum(axis=1, keepdims=True)) @ v


def eq4_reference(q, k, v, hier: Hierarchy, *, normalisation: str = "per-level", causal: bool = False,
                  pik=None, piv=None, downsample_queries: bool = False):
    """Eq. (4) (or the joint softmax) query by query from the definition-based sets.

    ``pik[l-1]``, ``piv[l-1]``: arrays of shape (p, size of the uncut group) (2-D kernels flattened
    row-major); default the group mean (p = 1).
    Joint logits of a representative get ``+ log(|G| / p)``. ``downsample_queries``: at level ``l`` the
    query is the mean query of the level-``l`` group that holds ``i`` (FMA-linear).
    """
    n, d = q.shape
    home = [{int(t): m for m, members in enumerate(level) for t in members} for level in hier.group_members]
    out = np.zeros((n, v.shape[1]))
    for i in range(n):
        near = np.flatnonzero(hier.level[i] == 0)
        if causal:
            near = near[near <= i]
        logits = [k[near] @ q[i] / np.sqrt(d)]
        values = [v[near]]
        parts = [len(near)]
        for lev in range(1, hier.depth):
            lg, vals = [], []
            qi = q[i]
            if downsample_queries:
                qi = q[hier.group_members[lev - 1][home[lev - 1][i]]].mean(axis=0)
            for m in hier.groups[lev - 1][i]:
                members = hier.group_members[lev - 1][m]
                if causal and members.max() > i:
                    continue
                if pik is None:
                    wk = wv = np.full((1, len(members)), 1.0 / len(members))
                else:
                    pos = hier.group_local[lev - 1][m]
                    wk, wv = pik[lev - 1][:, pos], piv[lev - 1][:, pos]
                p = wk.shape[0]
                for s in range(p):
                    kbar = wk[s] @ k[members]
                    corr = np.log(len(members) / p) if normalisation == "joint" else 0.0
                    lg.append(qi @ kbar / np.sqrt(d) + corr)
                    vals.append(wv[s] @ v[members])
            logits.append(np.array(lg))
            values.append(np.array(vals).reshape(-1, v.shape[1]))
        if normalisation == "joint":
            allg = np.concatenate(logits)
            e = np.exp(allg - allg.max())
            out[i] = e @ np.concatenate(values, axis=0) / e.sum()
        else:
            for lg, vals in zip(logits, values):
                if len(lg):
                    e = np.exp(lg - lg.max())
                    out[i] += e @ vals / e.sum()
    return out
