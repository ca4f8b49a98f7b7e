"""Every numeric parameter of the graph analyses refuses a bool, and NaN and inf, with an InputError naming it.

NaN and inf are refused unless documented otherwise: inf as no edge or no limit, or values the
function does not check and carries into its result.
"""

import re

import numpy as np
import pytest

import graphs
from spectral.floor.validation import InputError

from ..conftest import bool_refusal_test, non_finite_refusal_test

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


test_bool_refused = bool_refusal_test(CASES)


# ------------------------------------------------------------------------------------- NaN and inf
# A non-finite number never passes: every numeric input of an exported name is refused with an
# InputError naming it, or (where documented) carried into the result; where inf has a documented
# meaning (no edge, no limit) NaN is refused and inf gives that meaning.

def _with(a, value, at=(1, 0)):
    out = np.array(a, dtype=float, copy=True)
    out[at] = value
    return out


def _sparse(value):
    import scipy.sparse as sparse

    m = sparse.csr_array(A)
    m.data[1] = value
    return m


PATHS = graphs.shortest_paths(A)

#: (exported name, call taking the value, the parameter the InputError names)
REFUSED = [
    ("spectral_gap", lambda v: graphs.spectral_gap(_with(A, v)), "A"),
    ("spectral_gap", lambda v: graphs.spectral_gap(_sparse(v)), "A"),
    ("spectral_gap", lambda v: graphs.spectral_gap(A, epsilon=v), "epsilon"),
    ("stationary_distribution", lambda v: graphs.stationary_distribution(_with(A, v)), "A"),
    ("is_reversible", lambda v: graphs.is_reversible(_with(A, v)), "A"),
    ("is_reversible", lambda v: graphs.is_reversible(A, pi=_with(np.ones(3) / 3, v, 1)), "pi"),
    ("shortest_paths", lambda v: graphs.shortest_paths(_with(A, v)), "A"),
    ("shortest_paths", lambda v: graphs.shortest_paths(_sparse(v)), "A"),
    ("shortest_paths", lambda v: graphs.shortest_paths(A, indices=[v]), "indices"),
    ("path", lambda v: graphs.path(PATHS, v, 1), "source"),
    ("path", lambda v: graphs.path(PATHS, 0, v), "target"),
    ("edge_weights", lambda v: graphs.edge_weights(_with(A, v)), "A"),
    ("to_networkx", lambda v: graphs.to_networkx(_with(A, v)), "A"),
    ("hops_from_predecessors", lambda v: graphs.hops_from_predecessors(_with(PATHS.predecessors, v, (0, 1))),
     "predecessors"),
    ("hops_from_predecessors", lambda v: graphs.hops_from_predecessors(PATHS.predecessors, sources=[v, 1, 2]),
     "sources"),
    ("random_walk", lambda v: graphs.random_walk(_with(A, v), start=0, steps=3, rng=0), "A"),
    ("random_walk", lambda v: graphs.random_walk(A, start=v, steps=3, rng=0), "start"),
    ("random_walk", lambda v: graphs.random_walk(A, start=0, steps=v, rng=0), "steps"),
    ("sample_next", lambda v: graphs.sample_next(_with(A, v), np.array([0, 1]), rng=0), "A"),
    ("sample_next", lambda v: graphs.sample_next(A, np.array([0.0, v]), rng=0), "rows"),
    ("jump_lengths", lambda v: graphs.jump_lengths(_with(A, v), P, size=3, rng=0), "A"),
    ("jump_lengths", lambda v: graphs.jump_lengths(A, P, size=v, rng=0), "size"),
    ("jump_lengths", lambda v: graphs.jump_lengths(A, P, size=3, rng=0, sources=np.array([0.0, v, 1.0])), "sources"),
    ("tail_exponent", lambda v: graphs.tail_exponent(_with(R, v, 3), r_min=1.0, r_max=10.0), "samples"),
    ("tail_exponent", lambda v: graphs.tail_exponent(R, r_min=v, r_max=10.0), "r_min"),
    ("tail_exponent", lambda v: graphs.tail_exponent(R, r_min=1.0, r_max=v), "r_max"),
    ("tail_exponent", lambda v: graphs.tail_exponent(R, r_min=1.0, r_max=10.0, shift=v), "shift"),
    ("tail_exponent", lambda v: graphs.tail_exponent(R, r_min=1.0, r_max=10.0, n_grid=v), "n_grid"),
    ("tail_exponent", lambda v: graphs.tail_exponent(R, r_min=1.0, r_max=10.0, min_count=v), "min_count"),
    ("TailFit", lambda v: graphs.tail_exponent(R, r_min=1.0, r_max=10.0).interval(v), "z"),
    ("near_one_count", lambda v: graphs.near_one_count(np.array([1.0, v, 0.5])), "eigenvalues"),
    ("near_one_count", lambda v: graphs.near_one_count(np.array([1.0, 0.5]), delta=v), "delta"),
    ("eigengap_ratios", lambda v: graphs.eigengap_ratios(np.array([1.0, 0.9, v, 0.1])), "eigenvalues"),
    ("eigengap_ratios", lambda v: graphs.eigengap_ratios(np.array([1.0, 0.9, 0.5, 0.1]), k_max=v), "k_max"),
    ("estimated_clusters", lambda v: graphs.estimated_clusters(np.array([1.0, 0.9, v, 0.1])), "eigenvalues"),
    ("iterate_attention", lambda v: graphs.iterate_attention(_with(A, v), P, steps=3), "A"),
    ("iterate_attention", lambda v: graphs.iterate_attention(A, P, steps=v), "steps"),
    ("ablate_edges", lambda v: graphs.ablate_edges(_with(A, v), fraction=0.2, rng=0), "A"),
    ("ablate_edges", lambda v: graphs.ablate_edges(A, fraction=v, rng=0), "fraction"),
    ("ablate_nodes", lambda v: graphs.ablate_nodes(_with(A, v), fraction=0.2, rng=0), "A"),
    ("ablate_nodes", lambda v: graphs.ablate_nodes(A, fraction=v, rng=0), "fraction"),
    ("ablation_curve", lambda v: graphs.ablation_curve(_with(A, v), [0.1], rng=0), "A"),
    ("ablation_curve", lambda v: graphs.ablation_curve(A, [v], rng=0), "fractions"),
]

#: (exported name, call taking the value, the parameter): NaN is refused naming it; inf has a documented meaning,
#: checked against the same call with that meaning spelled out
INF_MEANS = [
    # weight="given": inf is no edge (as a zero is)
    ("shortest_paths", lambda v: graphs.shortest_paths(_with(A, v), weight="given").lengths, "A",
     lambda: graphs.shortest_paths(_with(A, 0.0), weight="given").lengths),
    ("edge_weights", lambda v: graphs.edge_weights(_with(A, v), weight="given"), "A",
     lambda: graphs.edge_weights(_with(A, 0.0), weight="given")),
    # limit=inf: no limit
    ("shortest_paths", lambda v: graphs.shortest_paths(A, limit=v).lengths, "limit",
     lambda: graphs.shortest_paths(A).lengths),
    # an inf length is no edge: the path from 1 to 0 goes through 2
    ("min_plus_floyd_warshall", lambda v: graphs.min_plus_floyd_warshall(_with(A, v))[0], "W",
     lambda: np.array([[0.5, 0.3, 0.2], [0.6, 0.5, 0.3], [0.3, 0.2, 0.5]])),
]

#: (exported name, call taking the value): documented as not checked, the NaN or inf comes back in the result
CARRIED = [
    ("jump_lengths", lambda v: graphs.jump_lengths(A, _with(P, v), size=20, rng=0)),
    ("empirical_ccdf", lambda v: graphs.empirical_ccdf(_with(R, v, 3))[0]),
    ("iterate_attention", lambda v: graphs.iterate_attention(A, _with(P, v), steps=3).residuals),
    ("iterate_attention", lambda v: [graphs.iterate_attention(A, _with(P, v), steps=3).rate]),
]

#: exported names with no numeric input of their own (results the library builds, option lists)
WITHOUT_NUMERIC_INPUT = {"ABLATION_KINDS", "TAIL_METHODS", "WEIGHTS", "AblationCurve", "IterationResult", "ShortestPaths",
                         "SpectralGap"}


#: what a refusal of NaN or inf says: why the value is refused
SAYS_WHY = r"finite|NaN|\bnan\b|\binf\b"


test_non_finite_input_refused = non_finite_refusal_test(REFUSED, says_why=SAYS_WHY)


@pytest.mark.parametrize("fn, call, name, meaning", INF_MEANS, ids=[f"{i}-{fn}-{name}" for i, (fn, _, name, _) in
                                                                     enumerate(INF_MEANS)])
def test_nan_refused_where_inf_has_a_meaning(fn, call, name, meaning):
    with pytest.raises(InputError) as info:
        call(float("nan"))
    text = str(info.value)
    assert re.search(rf"(^|\W){re.escape(name)}\W", text) and re.search(SAYS_WHY, text), text
    np.testing.assert_array_equal(np.asarray(call(float("inf"))), np.asarray(meaning()))


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
@pytest.mark.parametrize("fn, call", CARRIED, ids=[f"{i}-{fn}" for i, (fn, _) in enumerate(CARRIED)])
def test_non_finite_input_carried(fn, call, value):
    with np.errstate(invalid="ignore"):  # inf - inf on the way: NumPy's RuntimeWarning says so to a user
        out = np.asarray(call(value))
    assert not np.all(np.isfinite(out))


def test_every_exported_name_is_held_to_nan_and_inf():
    held = {fn for fn, *_ in REFUSED} | {fn for fn, *_ in INF_MEANS} | {fn for fn, _ in CARRIED}
    assert held <= set(graphs.__all__), sorted(held - set(graphs.__all__))
    missing = set(graphs.__all__) - held - WITHOUT_NUMERIC_INPUT
    assert not missing, sorted(missing)
