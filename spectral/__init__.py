"""Discrete attention matrices and what is computed from them.

The public API is what this package exports: ``from spectral import fna_kernel`` (``spectral.__all__``,
listed with one line each in ``docs/api.md``). Each module's ``__all__`` says which of its names are
supported when imported from the module (those exported here, and what the other packages of the
toolkit use); everything else is internal. The modules, one job each:

* the floor, :mod:`spectral.floor` (imported by every layer; imports no other module of ``spectral``):
  the array backend, the error types and validators, array inputs, the memory guard, the one
  squared-distance routine (which ``manifolds`` shares) and short reprs; :mod:`spectral.testing`
  (``assert_close`` for tests);
* score builders: :mod:`spectral.fna` (fractional neural attention), :mod:`spectral.heat` (heat
  kernel, dense and sparse), :mod:`spectral.dot_product`, :mod:`spectral.metric` (metric attention),
  :mod:`spectral.neural` (MLP scores) with :mod:`spectral.activations`, :mod:`spectral.knn`
  (k-nearest-neighbour kernels, host sparse); :mod:`spectral.operators` (matrix-free and sparse score
  matrices, the guarded dense builder);
* checks and normalisations: :mod:`spectral.scores` (score and attention matrices),
  :mod:`spectral.normalize` (row, anisotropic, Sinkhorn, symmetric conjugate),
  :mod:`spectral.bistochastic` (the one Sinkhorn scaling: symmetric ``D C D`` of Sinkformers, or alternating
  rows and columns, batched; ``spectral.sinkhorn`` is its alternating method under its first name);
* spectra: :mod:`spectral.eigen` (the solver dispatcher :func:`markov_spectrum`), :mod:`spectral.block`
  (the block Krylov-Schur solver of its matrix-free path),
  :mod:`spectral.spectrum` (the result and eigenpair hygiene), :mod:`spectral.components`
  (connectivity, structural and numerical), :mod:`spectral.circulant` (FFT path),
  :mod:`spectral.generator` (``-log(eta) / t``);
* built on them: :mod:`spectral.diffmaps` (diffusion maps and distances; the result class ``DiffusionMap``),
  :mod:`spectral.diffmaps_estimator` (``DiffusionMaps``, the scikit-learn estimator over it),
  :mod:`spectral.heat_sparse` (heat-kernel attention at scale), :mod:`spectral.scale` (bandwidth selection),
  :mod:`spectral.graph_laplacians` (eps-graph, k-NN and Gaussian graph Laplacians scaled to ``-Delta``),
  :mod:`spectral.pde` (PDE-guided evolution of attention), :mod:`spectral.fma` (fast multipole
  attention), :mod:`spectral.attention_flow` (tokens moved by self-attention on the sphere),
  :mod:`spectral.sinkformer` (tokens moved by Sinkformer or Transformer layers);
  :mod:`spectral.circle_modes` (Fourier modes of tokens on the circle).

The errors users meet are exported here: ``from spectral import InputError`` (bad input: a parameter
outside its allowed range), ``UnavailableError`` (a GPU or an optional package missing), ``ConvergenceError``
and ``DenseMemoryError`` (a request refused before allocating).

Importing ``spectral`` (or its floor) loads nothing else: each public name is imported from its
module on first use.
"""

#: public name -> the module that defines it (loaded on first access)
_EXPORTS = {
    "anisotropic_normalize": "spectral.normalize",
    "ball_volume": "spectral.graph_laplacians",
    "available_memory_bytes": "spectral.floor.memory",
    "block_eigsh": "spectral.block",
    "block_workspace_bytes": "spectral.block",
    "BlockEigenResult": "spectral.block",
    "check_dense_memory": "spectral.floor.memory",
    "check_memory": "spectral.floor.memory",
    "circulant_spectrum": "spectral.circulant",
    "ConvergenceError": "spectral.floor.validation",
    "count_components": "spectral.components",
    "dense_bytes": "spectral.floor.memory",
    "DenseMemoryError": "spectral.floor.memory",
    "device_memory_bytes": "spectral.floor.memory",
    "memory_label": "spectral.floor.memory",
    "memory_device": "spectral.floor.memory",
    "check_pairwise_memory": "spectral.floor.pairwise_memory",
    "diffusion_distance": "spectral.diffmaps",
    "diffusion_map": "spectral.diffmaps",
    "DiffusionMap": "spectral.diffmaps",
    "DiffusionMaps": "spectral.diffmaps_estimator",
    "DisconnectedGraphError": "spectral.components",
    "DisconnectedGraphWarning": "spectral.components",
    "dot_product_scores": "spectral.dot_product",
    "fma_attention": "spectral.fma",
    "fma_attention_2d": "spectral.fma",
    "fma_depth": "spectral.fma",
    "fma_groups": "spectral.fma",
    "fma_groups_2d": "spectral.fma",
    "fma_levels": "spectral.fma",
    "fma_levels_2d": "spectral.fma",
    "fma_matrix": "spectral.fma",
    "fma_matrix_2d": "spectral.fma",
    "FMAGroups": "spectral.fma",
    "fna_kernel": "spectral.fna",
    "fna_tile_profile": "spectral.fna",
    "fna_profile": "spectral.fna",
    "fna_time": "spectral.fna",
    "format_bytes": "spectral.floor.memory",
    "gaussian_moments": "spectral.graph_laplacians",
    "generator_eigenvalues": "spectral.generator",
    "GeneratorEigenvalues": "spectral.generator",
    "graph_laplacian": "spectral.graph_laplacians",
    "GraphLaplacian": "spectral.graph_laplacians",
    "heat_kernel": "spectral.heat",
    "heat_tile_profile": "spectral.heat",
    "heat_kernel_sparse": "spectral.heat",
    "heat_markov": "spectral.heat_sparse",
    "heat_time": "spectral.heat",
    "HeatMarkov": "spectral.heat_sparse",
    "indicator_moment": "spectral.graph_laplacians",
    "KernelOperator": "spectral.operators",
    "InputError": "spectral.floor.validation",
    "kernel_profile": "spectral.profiles",
    "ProfileKernel": "spectral.profiles",
    "TileProfile": "spectral.profiles",
    "knn_distances": "spectral.knn",
    "knn_kernel": "spectral.knn",
    "knn_radius": "spectral.graph_laplacians",
    "markov_spectrum": "spectral.eigen",
    "matched_half_width_kappa": "spectral.fna",
    "max_slope_bandwidth": "spectral.scale",
    "metric_kernel": "spectral.metric",
    "neural_scores": "spectral.neural",
    "pairwise": "spectral.operators",
    "PatternMatrix": "spectral.graph_laplacians",
    "paper_kappa": "spectral.fna",
    "ResidualMLP": "spectral.metric",
    "row_normalize": "spectral.normalize",
    "ScaleSuggestion": "spectral.scale",
    "ScoreMLP": "spectral.neural",
    "sinkhorn": "spectral.normalize",
    "SinkhornResult": "spectral.bistochastic",
    "SinkhornScaling": "spectral.bistochastic",
    "sinkhorn_normalize": "spectral.bistochastic",
    "SinkformerFlow": "spectral.sinkformer",
    "sinkformer_flow": "spectral.sinkformer",
    "SparseScores": "spectral.operators",
    "Spectrum": "spectral.spectrum",
    "suggest_scale": "spectral.scale",
    "symmetric_conjugate": "spectral.normalize",
    "truncation_bound": "spectral.heat_sparse",
    "UnavailableError": "spectral.floor.validation",
    "available_devices": "spectral.floor.backend",
    "memory_limit": "spectral.floor.memory",
    # self-attention as interacting particles on the sphere (SA paper)
    "attention_energy": "spectral.attention_flow",
    "attention_flow": "spectral.attention_flow",
    "attention_velocity": "spectral.attention_flow",
    "AttentionFlow": "spectral.attention_flow",
    "cluster_tokens": "spectral.attention_flow",
    "TokenClusters": "spectral.attention_flow",
    # Fourier modes of tokens on the circle (metastable clusters, MS papers)
    "circle_modes": "spectral.circle_modes",
    "CircleModes": "spectral.circle_modes",
    # PDE-guided evolution of attention matrices (PDE paper)
    "evolve_attention": "spectral.pde",
    "FactoredAttention": "spectral.pde",
    "laplacian_matrix": "spectral.pde",
    "PDEEvolution": "spectral.pde",
    "stability_limit": "spectral.pde",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'spectral' has no attribute {name!r}")
    from importlib import import_module  # here, not at the top: dir(spectral) lists only the exports

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return list(__all__)


class _Package(__import__("types").ModuleType):
    """The package object, so that ``spectral.attention_flow`` is the function in every import order.

    The module :mod:`spectral.attention_flow` has the name of its function; importing the module binds
    the package attribute of that name to the module (after the module ran). A data descriptor on the
    package's class keeps the function there: that binding is ignored (any other assignment is kept), and
    ``from spectral.attention_flow import ...`` still reads the module from ``sys.modules``.
    """

    @property
    def attention_flow(self):
        bound = self.__dict__.get("_attention_flow")
        if bound is not None:
            return bound
        from spectral.attention_flow import attention_flow

        return attention_flow

    @attention_flow.setter
    def attention_flow(self, value):
        # the import system binds the submodule here: the function stays; any other value (a test's stand-in)
        # is kept, as a plain attribute would be
        if not isinstance(value, __import__("types").ModuleType):
            self.__dict__["_attention_flow"] = value


__import__("sys").modules[__name__].__class__ = _Package
