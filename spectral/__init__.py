"""Discrete attention matrices and what is computed from them.

Score builders (:mod:`spectral.kernels`), normalisations (:mod:`spectral.normalize`), Markov spectra
(:mod:`spectral.eigen`), diffusion maps (:mod:`spectral.diffmaps`), bandwidth suggestion
(:mod:`spectral.scale`), the sparse/streamed heat kernel (:mod:`spectral.heat_sparse`) and the memory
guard (:mod:`spectral.memory`). The array backend is chosen in :mod:`spectral.backend` only.

Importing ``spectral`` (or its floor, :mod:`spectral.backend` and :mod:`spectral.validation`) loads
nothing else: each public name is imported from its module on first use.
"""

from __future__ import annotations

import importlib

#: public name -> the module that defines it (loaded on first access)
_EXPORTS = {
    "DenseMemoryError": "spectral.memory",
    "DiffusionMap": "spectral.diffmaps",
    "DisconnectedGraphError": "spectral.eigen",
    "DisconnectedGraphWarning": "spectral.eigen",
    "GeneratorEigenvalues": "spectral.eigen",
    "HeatMarkov": "spectral.heat_sparse",
    "KernelOperator": "spectral.kernels",
    "ResidualMLP": "spectral.kernels",
    "ScaleSuggestion": "spectral.scale",
    "ScoreMLP": "spectral.kernels",
    "SinkhornResult": "spectral.normalize",
    "SparseScores": "spectral.kernels",
    "Spectrum": "spectral.eigen",
    "anisotropic_normalize": "spectral.normalize",
    "available_memory_bytes": "spectral.memory",
    "check_dense_memory": "spectral.memory",
    "circulant_spectrum": "spectral.eigen",
    "count_components": "spectral.eigen",
    "dense_bytes": "spectral.memory",
    "diffusion_distance": "spectral.diffmaps",
    "diffusion_map": "spectral.diffmaps",
    "FMAGroups": "spectral.fma",
    "fma_attention": "spectral.fma",
    "fma_attention_2d": "spectral.fma",
    "fma_depth": "spectral.fma",
    "fma_groups": "spectral.fma",
    "fma_groups_2d": "spectral.fma",
    "fma_levels": "spectral.fma",
    "fma_levels_2d": "spectral.fma",
    "fma_matrix": "spectral.fma",
    "fma_matrix_2d": "spectral.fma",
    "dot_product_scores": "spectral.kernels",
    "fna_kernel": "spectral.kernels",
    "fna_profile": "spectral.kernels",
    "fna_time": "spectral.kernels",
    "generator_eigenvalues": "spectral.eigen",
    "heat_kernel": "spectral.kernels",
    "heat_kernel_sparse": "spectral.kernels",
    "heat_markov": "spectral.heat_sparse",
    "heat_time": "spectral.kernels",
    "markov_spectrum": "spectral.eigen",
    "matched_half_width_kappa": "spectral.kernels",
    "metric_kernel": "spectral.kernels",
    "neural_scores": "spectral.kernels",
    "pairwise": "spectral.kernels",
    "paper_kappa": "spectral.kernels",
    "row_normalize": "spectral.normalize",
    "sinkhorn": "spectral.normalize",
    "suggest_scale": "spectral.scale",
    "symmetric_conjugate": "spectral.normalize",
    "truncation_bound": "spectral.heat_sparse",
    # PDE-guided evolution of attention matrices (PDE paper)
    "FactoredAttention": "spectral.pde",
    "PDEEvolution": "spectral.pde",
    "evolve_attention": "spectral.pde",
    "laplacian_matrix": "spectral.pde",
    "stability_limit": "spectral.pde",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'spectral' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
