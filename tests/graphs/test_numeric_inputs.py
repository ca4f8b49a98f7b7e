"""Every numeric parameter of the graph analyses refuses a bool with an InputError naming it."""

import numpy as np
import pytest

import graphs
from spectral.validation import InputError

A = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.2, 0.5]])
P = np.arange(6.0).reshape(3, 2)
R = np.random.default_rng(0).pareto(1.5, 2000) + 1.0

CASES = [
    (lambda v: graphs.spectral_gap(A, epsilon=v), "epsilon"),
    (lambda v: graphs.path(graphs.shortest_paths(A), v, 1), "source"),
    (lambda v: graphs.path(graphs.shortest_paths(A), 0, v), "target"),
    (lambda v: graphs.random_walk(A, start=0, steps=v, rng=0), "steps"),
    (lambda v: graphs.random_walk(A, start=v, steps=2, rng=0), "start"),
    (lambda v: graphs.jump_lengths(A, P, size=v, rng=0), "size"),
    (lambda v: graphs.tail_exponent(R, r_min=v, r_max=10.0), "r_min"),
    (lambda v: graphs.tail_exponent(R, r_min=1.0, r_max=v), "r_max"),
    (lambda v: graphs.tail_exponent(R, r_min=1.0, r_max=10.0, shift=v), "shift"),
    (lambda v: graphs.tail_exponent(R, r_min=1.0, r_max=10.0, n_grid=v), "n_grid"),
    (lambda v: graphs.tail_exponent(R, r_min=1.0, r_max=10.0, min_count=v), "min_count"),
    (lambda v: graphs.tail_exponent(R, r_min=1.0, r_max=10.0).interval(v), "z"),
    (lambda v: graphs.near_one_count(np.array([1.0, 0.5]), delta=v), "delta"),
    (lambda v: graphs.eigengap_ratios(np.array([1.0, 0.9, 0.5, 0.1]), k_max=v), "k_max"),
    (lambda v: graphs.iterate_attention(A, P, steps=v), "steps"),
    (lambda v: graphs.ablate_edges(A, fraction=v, rng=0), "fraction"),
    (lambda v: graphs.ablate_nodes(A, fraction=v, rng=0), "fraction"),
    (lambda v: graphs.ablation_curve(A, [v], rng=0), "fractions"),
    (lambda v: graphs.ablation_curve(A, [0.1], repeats=v, rng=0), "repeats"),
]


@pytest.mark.parametrize("call, name", CASES, ids=[f"{i}-{name}" for i, (_, name) in enumerate(CASES)])
@pytest.mark.parametrize("value", [True, False])
def test_bool_refused(call, name, value):
    with pytest.raises(InputError, match=rf"^{name} must be"):
        call(value)
