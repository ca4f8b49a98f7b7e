"""Tests for spectral.generator: ``-log(eta) / t``, the FNA-7 positivity split, backends, bad input."""


import numpy as np
import pytest

from manifolds import Circle
from spectral import generator_eigenvalues, markov_spectrum
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError

EPS = np.finfo(np.float64).eps
CIRCLE = Circle()



def test_generator_eigenvalues_and_fna7_positivity(fna_on):
    # FNA-7: the geodesic power law is positive definite; the geodesic Gaussian (alpha = 2,
    # kappa = 2) on 400 circle points has negative eigenvalues (ledger: min eig of C ~ -0.99;
    # of A = D^-1 C measured -4.7e-3, far beyond round-off ~1e-13)
    x = CIRCLE.sample(400, rng=5)
    C_pl, _ = fna_on(x, alpha=1.2, scale=2.0)
    C_g, _ = fna_on(x, alpha=2.0, scale=2.0)
    eta_pl = markov_spectrum(C_pl).eigenvalues
    eta_g = markov_spectrum(C_g).eigenvalues
    indep = np.linalg.eigvalsh(C_g / np.sqrt(np.outer(C_g.sum(1), C_g.sum(1))))
    assert indep.min() < -1e-3
    indep_pl = np.linalg.eigvalsh(C_pl / np.sqrt(np.outer(C_pl.sum(1), C_pl.sum(1))))
    assert indep_pl.min() > 1e3 * 400 * EPS  # strictly positive definite (Schoenberg), well above round-off
    g = generator_eigenvalues(eta_pl, 2.0**1.2)
    assert g.n_nonpositive == 0 and bool(np.all(g.valid))
    with pytest.raises(InputError, match="non-positive"):
        generator_eigenvalues(eta_g, 2.0**2)
    gg = generator_eigenvalues(eta_g, 4.0, allow_nonpositive=True)
    # many eigenvalues are ~1e-17 (nearly rank-deficient kernel): their sign is round-off, so the
    # count lies between the clearly negative and the not clearly positive ones (+-1e-10)
    assert int(np.sum(indep < -1e-10)) <= gg.n_nonpositive <= int(np.sum(indep <= 1e-10))
    assert int(np.sum(indep < -1e-10)) > 0
    assert np.array_equal(np.isnan(gg.values), ~gg.valid)
    assert gg.min_eta == pytest.approx(indep.min(), abs=1e-12)


def test_generator_roundtrip(xp):
    lam = np.array([0.0, 0.5, 1.0, 7.0])
    t = 0.3
    g = generator_eigenvalues(xp.asarray(np.exp(-lam * t)), t)
    # -log(exp(-x)) = x up to 1 ulp of exp plus 1 ulp of log: 4 eps relative
    assert np.max(np.abs(to_numpy(g.values) - lam)) <= 4 * EPS * lam.max() / t * t + 4 * EPS


@pytest.mark.parametrize(
    "eta, t, match",
    [
        (np.array([0.5]), 0.0, "t must be"),
        (np.array([0.5]), np.inf, "t must be"),
        (np.array([0.5]), "1", "t must be"),
        (np.array([[0.5]]), 1.0, "1-D"),
        (np.array([0.5, np.nan]), 1.0, "finite"),
        (np.array([0.5 + 1j]), 1.0, "real"),
        (np.array([0.5, 0.0]), 1.0, "non-positive"),
    ],
)
def test_generator_bad_input(eta, t, match):
    with pytest.raises(InputError, match=match):
        generator_eigenvalues(eta, t)


def test_repr_is_short():
    g = generator_eigenvalues(np.exp(-np.arange(500.0) / 100), 0.5)
    text = repr(g)
    assert len(text) < 200 and text.startswith("GeneratorEigenvalues(k=500, t=0.5, values=[0, 0.02, 0.04, 0.06, ...]"), text
