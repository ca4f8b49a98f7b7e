"""Graph analyses of an attention matrix ``A`` (row-stochastic): gap, paths, walks, clusters.

``A[i, j]`` is the attention of query i to key j, read as the transition matrix of a random walk
and as a directed graph with edge weights ``1 / A_ij`` (FNA, "Mechanistic explanation").
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
from graphs.paths import WEIGHTS, ShortestPaths, edge_weights, hops_from_predecessors, path, shortest_paths, to_networkx
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
