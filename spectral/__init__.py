"""Discrete attention matrices and what is computed from them.

Score builders (:mod:`spectral.kernels`), normalisations (:mod:`spectral.normalize`), Markov spectra
(:mod:`spectral.eigen`), diffusion maps (:mod:`spectral.diffmaps`), bandwidth suggestion
(:mod:`spectral.scale`), the sparse/streamed heat kernel (:mod:`spectral.heat_sparse`) and the memory
guard (:mod:`spectral.memory`). The array backend is chosen in :mod:`spectral.backend` only.
"""

from spectral.diffmaps import DiffusionMap, diffusion_distance, diffusion_map
from spectral.eigen import (
    DisconnectedGraphError,
    DisconnectedGraphWarning,
    GeneratorEigenvalues,
    Spectrum,
    circulant_spectrum,
    count_components,
    generator_eigenvalues,
    markov_spectrum,
)
from spectral.heat_sparse import HeatMarkov, heat_markov, truncation_bound
from spectral.kernels import (
    KernelOperator,
    ResidualMLP,
    ScoreMLP,
    SparseScores,
    dot_product_scores,
    fna_kernel,
    fna_profile,
    fna_time,
    heat_kernel,
    heat_kernel_sparse,
    heat_time,
    matched_half_width_kappa,
    metric_kernel,
    neural_scores,
    pairwise,
    paper_kappa,
)
from spectral.memory import DenseMemoryError, available_memory_bytes, check_dense_memory, dense_bytes
from spectral.normalize import (
    SinkhornResult,
    anisotropic_normalize,
    row_normalize,
    sinkhorn,
    symmetric_conjugate,
)
from spectral.scale import ScaleSuggestion, suggest_scale

__all__ = sorted([
    "DenseMemoryError", "DiffusionMap", "DisconnectedGraphError", "DisconnectedGraphWarning",
    "GeneratorEigenvalues", "HeatMarkov", "KernelOperator", "ResidualMLP", "ScaleSuggestion", "ScoreMLP",
    "SinkhornResult", "SparseScores", "Spectrum", "anisotropic_normalize", "available_memory_bytes",
    "check_dense_memory", "circulant_spectrum", "count_components", "dense_bytes", "diffusion_distance",
    "diffusion_map", "dot_product_scores", "fna_kernel", "fna_profile", "fna_time", "generator_eigenvalues",
    "heat_kernel", "heat_kernel_sparse", "heat_markov", "heat_time", "markov_spectrum",
    "matched_half_width_kappa", "metric_kernel", "neural_scores", "pairwise", "paper_kappa",
    "row_normalize", "sinkhorn", "suggest_scale", "symmetric_conjugate", "truncation_bound",
])
