"""Every numeric parameter of spectral's public functions refuses a bool (``True`` is not 1) with an
InputError naming the parameter (issue: ``alpha=True`` used to be taken as 1.0)."""

import functools

import numpy as np
import pytest

import spectral
from spectral.validation import InputError

C = np.exp(-np.subtract.outer(np.arange(6.0), np.arange(6.0)) ** 2)
A = C / C.sum(axis=1, keepdims=True)
X = np.linspace(0.0, 1.0, 12).reshape(6, 2)
D = np.abs(np.subtract.outer(np.arange(6.0), np.arange(6.0)))


def _op():
    return spectral.KernelOperator(X, kernel=functools.partial(spectral.heat_kernel, eps=1.0),
                                   distance=lambda a, b: np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1)))


CASES = [
    # (call taking the value, parameter name)
    (lambda v: spectral.fna_kernel(D, alpha=v, scale=1.0, dim=1), "alpha"),
    (lambda v: spectral.fna_kernel(D, alpha=1.2, scale=v, dim=1), "scale"),
    (lambda v: spectral.fna_kernel(D, alpha=1.2, scale=1.0, dim=v), "dim"),
    (lambda v: spectral.fna_profile(D, alpha=v, dim=1), "alpha"),
    (lambda v: spectral.fna_time(v, 1.2), "scale"),
    (lambda v: spectral.paper_kappa(v, 1.2), "d"),
    (lambda v: spectral.matched_half_width_kappa(v, 2, 1.2), "kappa1"),
    (lambda v: spectral.matched_half_width_kappa(1.0, 2, v), "alpha1"),
    (lambda v: spectral.heat_kernel(D, eps=v), "eps"),
    (lambda v: spectral.heat_time(v), "eps"),
    (lambda v: spectral.heat_kernel_sparse(X, eps=v), "eps"),
    (lambda v: spectral.heat_kernel_sparse(X, eps=1.0, cutoff=v), "cutoff"),
    (lambda v: spectral.dot_product_scores(X, temperature=v), "temperature"),
    (lambda v: spectral.ResidualMLP(v, 3), "dim"),
    (lambda v: spectral.ResidualMLP(2, v), "width"),
    (lambda v: spectral.ResidualMLP(2, 3, gain=v), "gain"),
    (lambda v: spectral.metric_kernel(X, lambda z: z, eps=v), "eps"),
    (lambda v: spectral.ScoreMLP(v, 2, 3), "d_q"),
    (lambda v: spectral.ScoreMLP(2, 2, v), "hidden"),
    (lambda v: spectral.neural_scores(X, X, spectral.ScoreMLP(2, 2, 3, rng=0), max_bytes=v), "max_bytes"),
    (lambda v: spectral.KernelOperator(X, kernel=abs, distance=lambda a, b: a @ b.T, block_rows=v), "block_rows"),
    (lambda v: _op().to_dense(max_bytes=v), "max_bytes"),
    (lambda v: spectral.pairwise(X, kernel=abs, distance=lambda a, b: a @ b.T, max_bytes=v), "max_bytes"),
    (lambda v: spectral.anisotropic_normalize(C, v), "a"),
    (lambda v: spectral.sinkhorn(C, tol=v), "tol"),
    (lambda v: spectral.sinkhorn(C, max_iter=v), "max_iter"),
    (lambda v: spectral.sinkhorn(C, check_every=v), "check_every"),
    (lambda v: spectral.markov_spectrum(C, v), "k"),
    (lambda v: spectral.markov_spectrum(C, 2, tol=v), "tol"),
    (lambda v: spectral.markov_spectrum(C, 2, max_memory=v), "max_memory"),
    (lambda v: spectral.circulant_spectrum(np.array([2.0, 1.0, 1.0]), v), "k"),
    (lambda v: spectral.generator_eigenvalues(np.array([0.5]), v), "t"),
    (lambda v: spectral.diffusion_map(C, n_components=v), "n_components"),
    (lambda v: spectral.diffusion_map(C, n_components=2, a=v), "a"),
    (lambda v: spectral.diffusion_map(C, n_components=2, tau=v), "tau"),
    (lambda v: spectral.diffusion_map(C, n_components=2).transition_matrix(v), "tau"),
    (lambda v: spectral.diffusion_distance(A, v), "tau"),
    (lambda v: spectral.heat_markov(X, eps=v), "eps"),
    (lambda v: spectral.heat_markov(X, eps=1.0, a=v), "a"),
    (lambda v: spectral.heat_markov(X, eps=1.0, cutoff=v), "cutoff"),
    (lambda v: spectral.heat_markov(X, eps=1.0, method="streamed", block_rows=v), "block_rows"),
    (lambda v: spectral.heat_markov(X, eps=1.0, method="dense", max_bytes=v), "max_bytes"),
    (lambda v: spectral.truncation_bound(np.ones(6), np.ones(6), v, cutoff=6.0), "n_cols"),
    (lambda v: spectral.truncation_bound(np.ones(6), np.ones(6), 6, cutoff=v), "cutoff"),
    (lambda v: spectral.suggest_scale(D, per_decade=v), "per_decade"),
    (lambda v: spectral.suggest_scale(D, window_decades=v), "window_decades"),
    (lambda v: spectral.dense_bytes(v), "n"),
    (lambda v: spectral.check_dense_memory(10, copies=v), "copies"),
    (lambda v: spectral.check_dense_memory(10, max_bytes=v), "max_bytes"),
    (lambda v: spectral.check_memory(v, what="x"), "needed"),
    (lambda v: spectral.check_memory(10, what="x", max_bytes=v), "max_bytes"),
    (lambda v: spectral.format_bytes(v), "nbytes"),
    (lambda v: spectral.check_pairwise_memory(v, 10, bytes_per_pair=8, what="x"), "n"),
    (lambda v: spectral.check_pairwise_memory(10, v, bytes_per_pair=8, what="x"), "m"),
    (lambda v: spectral.check_pairwise_memory(10, 10, bytes_per_pair=v, what="x"), "bytes_per_pair"),
    (lambda v: spectral.check_pairwise_memory(10, 10, bytes_per_pair=8, extra_bytes=v, what="x"), "extra_bytes"),
    (lambda v: spectral.check_pairwise_memory(10, 10, bytes_per_pair=8, max_bytes=v, what="x"), "max_bytes"),
    (lambda v: spectral.KernelOperator(X, kernel=abs, distance=lambda a, b: a @ b.T, tile=v), "tile"),
    (lambda v: spectral.KernelOperator(X, kernel=abs, distance=lambda a, b: a @ b.T, zero_diagonal=int(v)),
     "zero_diagonal"),
    (lambda v: spectral.block_eigsh(lambda Z: C @ Z, v, 2, like=C), "n"),
    (lambda v: spectral.block_eigsh(lambda Z: C @ Z, 6, v, like=C), "k"),
    (lambda v: spectral.block_eigsh(lambda Z: C @ Z, 6, 2, like=C, tol=v), "tol"),
    (lambda v: spectral.block_eigsh(lambda Z: C @ Z, 6, 2, like=C, block=v), "block"),
    (lambda v: spectral.block_eigsh(lambda Z: C @ Z, 6, 2, like=C, max_basis=v), "max_basis"),
    (lambda v: spectral.block_eigsh(lambda Z: C @ Z, 6, 2, like=C, max_products=v), "max_products"),
    (lambda v: spectral.block_workspace_bytes(v, 2), "n"),
    (lambda v: spectral.block_workspace_bytes(10, v), "k"),
    (lambda v: spectral.block_workspace_bytes(10, 2, block=v), "block"),
    (lambda v: spectral.block_workspace_bytes(10, 2, max_basis=v), "max_basis"),
    (lambda v: spectral.block_workspace_bytes(10, 2, itemsize=v), "itemsize"),
]


@pytest.mark.parametrize("call, name", CASES, ids=[f"{i}-{name}" for i, (_, name) in enumerate(CASES)])
@pytest.mark.parametrize("value", [True, False])
def test_bool_refused(call, name, value):
    with pytest.raises(InputError, match=rf"^{name} must be"):
        call(value)


def test_every_exported_function_with_numeric_options_is_covered():
    # a name listed here by hand would drift; the exported callables with a numeric option are covered
    covered = {"fna_kernel", "fna_profile", "fna_time", "paper_kappa", "matched_half_width_kappa", "heat_kernel",
               "heat_time", "heat_kernel_sparse", "dot_product_scores", "ResidualMLP", "metric_kernel", "ScoreMLP",
               "neural_scores", "KernelOperator", "pairwise", "anisotropic_normalize", "sinkhorn", "markov_spectrum",
               "circulant_spectrum", "generator_eigenvalues", "diffusion_map", "diffusion_distance", "heat_markov",
               "truncation_bound", "suggest_scale", "dense_bytes", "check_dense_memory", "check_memory",
               "format_bytes", "block_eigsh", "block_workspace_bytes", "check_pairwise_memory"}
    without_numeric = {"row_normalize", "symmetric_conjugate", "count_components", "available_memory_bytes",
                       "SparseScores", "BlockEigenResult", "device_memory_bytes", "memory_label",
                       "memory_device"}
    # the PDE, FMA and graph-Laplacian modules have their own tests
    mine = [n for n in spectral.__all__ if getattr(getattr(spectral, n), "__module__", "")
            not in ("spectral.pde", "spectral.fma", "spectral.graph_laplacians")]
    callables = {n for n in mine if callable(getattr(spectral, n)) and not isinstance(getattr(spectral, n), type)
                 or n in ("ResidualMLP", "ScoreMLP", "KernelOperator", "SparseScores")}
    assert callables <= covered | without_numeric, sorted(callables - covered - without_numeric)
