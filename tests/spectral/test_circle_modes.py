"""spectral.circle_modes: empirical Fourier coefficients of tokens on the circle."""

import numpy as np
import pytest

from spectral import circle_modes
from spectral.floor.validation import InputError


def _tokens(theta):
    return np.stack([np.cos(theta), np.sin(theta)], axis=-1)


def test_matches_the_complex_exponential():
    theta = np.random.default_rng(0).uniform(0, 2 * np.pi, (3, 4, 50))
    modes = [0, 1, 2, 7, 31]
    m = circle_modes(_tokens(theta), modes)
    ref = np.exp(1j * theta[..., None] * np.array(modes)).mean(axis=-2)
    assert m.real.shape == (3, 4, 5) and m.modes == tuple(modes)
    assert np.max(np.abs(m.real + 1j * m.imag - ref)) < 1e-14
    assert np.allclose(m.amplitude, np.abs(ref)) and np.allclose(m.phase, np.angle(ref))


def test_equally_spaced_tokens_are_pure_modes():
    theta = 0.3 + 2 * np.pi * np.arange(5) / 5
    amp = circle_modes(_tokens(theta), range(1, 11)).amplitude
    assert np.allclose(amp, [0, 0, 0, 0, 1, 0, 0, 0, 0, 1], atol=1e-14)


def test_keeps_the_namespace():
    xp = pytest.importorskip("array_api_strict")
    theta = np.linspace(0, 1, 6)
    m = circle_modes(xp.asarray(_tokens(theta)), [1, 2])
    assert type(m.real).__module__.startswith("array_api_strict")
    assert np.allclose(np.asarray(m.amplitude), np.abs(np.exp(1j * np.outer(theta, [1, 2])).mean(0)))


@pytest.mark.parametrize("X, modes, match", [
    (np.ones((4, 3)), [1], "shape"),
    (np.ones((4, 2)), [1], "unit vectors"),
    (_tokens(np.zeros(3)), [-1], "modes"),
    (_tokens(np.zeros(3)), [1.5], "modes"),
    (_tokens(np.zeros(3)), [], "modes"),
])
def test_bad_input_names_the_parameter(X, modes, match):
    with pytest.raises(InputError, match=match):
        circle_modes(X, modes)
