"""Graph analyses of an attention matrix ``A`` (row-stochastic): gap, paths, walks, clusters.

``A[i, j]`` is the attention of query i to key j, read as the transition matrix of a random walk
and as a directed graph with edge weights ``1 / A_ij`` (FNA, "Mechanistic explanation").
``spectral_gap`` and ``shortest_paths`` also take scipy.sparse matrices, and ``shortest_paths`` a
general weight matrix as ``scipy.sparse.csgraph`` reads it (``weight="given"``).
"""

from graphs.clusters import (
    ABLATION_KINDS,
    AblationCurve,
    IterationResult,
    ablate_edges,
    ablate_nodes,
    ablation_curve,
    eigengap_ratios,
    estimated_clusters,
    iterate_attention,
    near_one_count,
)
from graphs.gap import SpectralGap, is_reversible, spectral_gap, stationary_distribution
from graphs.paths import (
    WEIGHTS,
    ShortestPaths,
    edge_weights,
    hops_from_predecessors,
    min_plus_floyd_warshall,
    path,
    shortest_paths,
    to_networkx,
)
from graphs.walks import TAIL_METHODS, TailFit, empirical_ccdf, jump_lengths, random_walk, sample_next, tail_exponent

__all__ = [
    "ABLATION_KINDS",
    "AblationCurve",
    "IterationResult",
    "ShortestPaths",
    "SpectralGap",
    "TAIL_METHODS",
    "TailFit",
    "WEIGHTS",
    "ablate_edges",
    "ablate_nodes",
    "ablation_curve",
    "edge_weights",
    "eigengap_ratios",
    "empirical_ccdf",
    "estimated_clusters",
    "hops_from_predecessors",
    "is_reversible",
    "iterate_attention",
    "jump_lengths",
    "min_plus_floyd_warshall",
    "near_one_count",
    "path",
    "random_walk",
    "sample_next",
    "shortest_paths",
    "spectral_gap",
    "stationary_distribution",
    "tail_exponent",
    "to_networkx",
]


def __dir__():
    return list(__all__)
