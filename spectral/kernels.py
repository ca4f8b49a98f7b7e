"""Transitional module path: the score builders now live in modules by topic.

:mod:`spectral.fna`, :mod:`spectral.heat`, :mod:`spectral.dot_product`, :mod:`spectral.metric`,
:mod:`spectral.neural` and :mod:`spectral.operators`; import them from the top level
(``from spectral import fna_kernel``). This file only keeps ``from spectral.kernels import ...``
working for the modules that still use it, and goes when they have switched.
"""

from spectral.dot_product import dot_product_scores
from spectral.fna import fna_kernel, fna_profile, fna_time, matched_half_width_kappa, paper_kappa
from spectral.heat import heat_kernel, heat_kernel_sparse, heat_time
from spectral.metric import ResidualMLP, metric_kernel
from spectral.neural import ScoreMLP, neural_scores
from spectral.operators import KernelOperator, SparseScores, pairwise

__all__ = [
    "KernelOperator",
    "ResidualMLP",
    "ScoreMLP",
    "SparseScores",
    "dot_product_scores",
    "fna_kernel",
    "fna_profile",
    "fna_time",
    "heat_kernel",
    "heat_kernel_sparse",
    "heat_time",
    "matched_half_width_kappa",
    "metric_kernel",
    "neural_scores",
    "pairwise",
    "paper_kappa",
]
