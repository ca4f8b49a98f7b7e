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
    """Definition-based sets of every query.

    ``level[i, j]``: the level whose set holds key ``j`` (0 = near field), -1 if no set holds it, -2
    if several do. ``groups[l-1][i]``: sorted indices ``m`` of the groups ``G_{l,m} ⊆ F_l(i)``.
    ``tiled[i, l-1]``: whether those groups cover ``F_l(i)`` exactly. ``nested[i, l-1]``: whether the
    level-``l`` window contains the level-``(l-1)`` window (level 0: the near field).
    ``group_members[l-1][m]``: the tokens of ``G_{l,m}``; ``group_local[l-1][m]``: their positions in
    the group's full (uncut) aggregation kernel, flattened row-major.
    """

    n: int
    r: int
    depth: int
    level: np.ndarray
    groups: tuple
    tiled: np.ndarray
    nested: np.ndarray
    group_members: tuple
    group_local: tuple


def _cover(masks):
    """Level row from the boolean rows of each level (-1 uncovered, -2 covered more than once)."""
    masks = np.array(masks)
    counts = masks.sum(axis=0)
    level = np.argmax(masks, axis=0).astype(np.int8)
    level[counts == 0] = -1
    level[counts > 1] = -2
    return level


def _groups_inside(far_grid, g, dim):
    """Indices of the groups (intervals / squares of side g) lying inside the boolean set, and their union."""
    side = far_grid.shape[0]
    m = -(-side // g)
    pad = m * g - side
    grid = np.pad(far_grid, [(0, pad)] * dim, constant_values=True)  # cut groups: only real tokens count
    if dim == 1:
        inside = grid.reshape(m, g).all(axis=1)
        union = np.repeat(inside, g)[:side]
    else:
        inside = grid.reshape(m, g, m, g).all(axis=(1, 3))
        union = np.repeat(np.repeat(inside, g, axis=0), g, axis=1)[:side, :side]
    return np.flatnonzero(inside.reshape(-1)).tolist(), union


def _hierarchy(side, r, dim, shift):
    """Shared construction; ``shift = 1`` uses window blocks of length r 2^(l-1) (a mis-reading)."""
    n = side**dim
    L = depth(side, r)
    coords = np.divmod(np.arange(n), side) if dim == 2 else (np.arange(n),)
    level = np.empty((n, n), dtype=np.int8)
    groups = [[] for _ in range(1, L)]
    tiled = np.ones((n, max(L - 1, 0)), dtype=bool)
    nested = np.ones((n, max(L - 1, 0)), dtype=bool)
    for i in range(n):
        def window(block):
            inside = np.ones(n, dtype=bool)
            for c in coords:
                inside &= np.abs(c // block - c[i] // block) <= 1
            return inside
        near = window(r)
        masks, taken, previous = [near], near.copy(), near
        for lev in range(1, L):
            win = window(r * 2 ** (lev - shift))
            nested[i, lev - 1] = not np.any(previous & ~win)
            previous = win
            far = win & ~taken
            taken |= far
            masks.append(far)
            shape = (side,) * dim
            inside, union = _groups_inside(far.reshape(shape), r * 2 ** (lev - 1), dim)
            groups[lev - 1].append(inside)
            tiled[i, lev - 1] = np.array_equal(union.reshape(-1), far)
        level[i] = _cover(masks)
    members, local = [], []
    for lev in range(1, L):
        g = r * 2 ** (lev - 1)
        m = -(-side // g)
        if dim == 1:
            members.append(tuple(np.arange(a * g, min((a + 1) * g, side)) for a in range(m)))
            local.append(tuple(np.arange(len(t)) for t in members[-1]))
            continue
        cells = [[(a, b) for a in range(u * g, min((u + 1) * g, side)) for b in range(v * g, min((v + 1) * g, side))]
                 for u in range(m) for v in range(m)]
        members.append(tuple(np.array([a * side + b for a, b in c]) for c in cells))
        local.append(tuple(np.array([(a % g) * g + b % g for a, b in c]) for c in cells))
    return Hierarchy(n, r, L, level, tuple(groups), tiled, nested, tuple(members), tuple(local))


def hierarchy_1d(n: int, r: int, *, shift: int = 0) -> Hierarchy:
    """Near and far sets of 1-D FMA for every query, one query at a time, from the definitions.

    ``shift = 1`` builds the level-``l`` windows from blocks of length ``r 2^(l-1)`` (the group
    length) instead of ``r 2^l``: the mis-reading the FMA-2 notation invites (a negative control).
    """
    return _hierarchy(n, r, 1, shift)


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


def hierarchy_2d(width: int, r: int, *, shift: int = 0) -> Hierarchy:
    """Near and far sets of the 2-D quadtree (pixel ``(x, y)`` is token ``x W + y``), per pixel."""
    return _hierarchy(width, r, 2, shift)


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
