"""The block plan of a :class:`spectral.KernelOperator`'s products: parts, and how their results combine.

A product ``C @ X`` in parts (:meth:`spectral.KernelOperator.layout`): each :class:`Part` is evaluated alone (in
this process, or as a task on a Dask cluster: :mod:`spectral.distributed`), and the parts' results combine in
a fixed order (:meth:`ProductLayout.combine`: row parts stacked, tile parts' partial sums added in the fixed
binary tree of :func:`tree_sum`), so that the bits do not depend on where or in which order the parts ran.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Part", "ProductLayout", "tree_sum"]


@dataclasses.dataclass(frozen=True)
class Part:
    """One part of a :class:`ProductLayout`: the rows ``[start, stop)`` it computes, or the first rows of the
    tile rows whose tiles it evaluates (:meth:`KernelOperator.layout`)."""

    index: int
    rows: tuple[int, int] | None = None
    tile_rows: tuple[int, ...] | None = None


@dataclasses.dataclass(frozen=True)
class ProductLayout:
    """The block plan of a :class:`KernelOperator`'s products: its parts and how their results combine.

    ``how``: ``"stack"`` (row parts: their rows, stacked in part order) or ``"sum"`` (tile parts: ``(n, k)``
    partial sums added in the fixed binary tree of :func:`tree_sum`); ``device``: the parts run on a CUDA device.
    """

    how: str
    parts: tuple[Part, ...]
    device: bool = False

    def __len__(self) -> int:
        return len(self.parts)

    def combine(self, results, xp):
        """The product from the parts' results (in part order)."""
        results = list(results)
        if self.how == "sum":
            return tree_sum(results, lambda a, b: a + b)
        return results[0] if len(results) == 1 else xp.concat(results, axis=0)

    def combine_row_sums(self, results, xp):
        """``(row sums, smallest score)`` from the parts' :meth:`KernelOperator.part_row_sums`."""
        results = list(results)
        lows = [low for _, low in results if low is not None]
        return self.combine([sums for sums, _ in results], xp), (min(lows) if lows else None)


def tree_sum(items, add):
    """``items`` added in a fixed binary tree: neighbours pairwise, level by level (an odd last one moves up).

    ``add(a, b)`` adds two items (or, on a cluster, submits the addition): the same tree, hence the same
    rounding, whoever adds. ``[a, b, c, d, e]`` -> ``((a + b) + (c + d)) + e``.
    """
    level = list(items)
    if not level:
        raise ValueError("tree_sum of nothing")
    while len(level) > 1:
        level = [add(level[i], level[i + 1]) if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
    return level[0]
