"""manifolds.drift_pde: the drift-diffusion PDE on S^1 against closed forms and a Fourier-Galerkin solver."""

import numpy as np
import pytest
from scipy.linalg import expm

from manifolds import drift_collocation_matrix, drift_pde_initial, drift_pde_solution
from spectral.floor.validation import InputError


def _galerkin_solution(theta, t, *, amplitude, drift, initial, modes=64):
    """Independent reference: Fourier-Galerkin in coefficient space, ``exp`` by ``scipy.linalg.expm``.

    Multiplying ``H_t = H'' + c (log p)' H'`` by ``p = 1 + a cos theta`` gives ``p H_t = p H'' + c p' H'``;
    with ``H = sum_k h_k e^{ik theta}``, multiplication by ``cos`` and ``sin`` shifts the coefficients
    (``cos: (h_{k-1} + h_{k+1}) / 2``, ``sin: (h_{k-1} - h_{k+1}) / (2i)``), so ``P h' = A h`` with
    tridiagonal ``P`` on ``|k| <= modes``. No FFT, no collocation, no eigen-decomposition.
    """
    k = np.arange(-modes, modes + 1)
    n = k.size
    shift_down = np.eye(n, k=-1)  # (S h)_k = h_{k-1}
    shift_up = np.eye(n, k=1)  # (S h)_k = h_{k+1}
    p = np.eye(n) + amplitude / 2 * (shift_down + shift_up)
    p_prime = -amplitude / 2j * (shift_down - shift_up)  # p' = -a sin theta
    d1, d2 = np.diag(1j * k), np.diag(-(k.astype(float) ** 2))
    gen = np.linalg.solve(p, p @ d2 + drift * p_prime @ d1)
    if initial == "smooth":  # cos t + 0.5 sin 2t + 0.3 cos 3t
        h0 = np.zeros(n, dtype=complex)
        for kk, c in ((1, 0.5), (-1, 0.5), (2, 0.25 / 1j), (-2, -0.25 / 1j), (3, 0.15), (-3, 0.15)):
            h0[kk + modes] = c
    else:  # the step 1_{|t| < pi/2}: h_0 = 1/2, h_k = sin(k pi/2) / (k pi)
        safe = np.where(k == 0, 1, k)
        h0 = np.where(k == 0, 0.5, np.sin(k * np.pi / 2) / (safe * np.pi)).astype(complex)
    ht = expm(t * gen) @ h0
    return np.real(np.exp(1j * np.outer(theta, k)) @ ht)


def test_collocation_matrix_on_a_trigonometric_polynomial():
    # exact for degree < m/2: H = cos 3t + 0.5 sin 5t, (log p)' = -a sin t / (1 + a cos t)
    a, c = 0.6, 2.0
    theta, op = drift_collocation_matrix(32, a, c)
    h = np.cos(3 * theta) + 0.5 * np.sin(5 * theta)
    dh = -3 * np.sin(3 * theta) + 2.5 * np.cos(5 * theta)
    d2h = -9 * np.cos(3 * theta) - 12.5 * np.sin(5 * theta)
    want = d2h + c * (-a * np.sin(theta) / (1 + a * np.cos(theta))) * dh
    # FFT of the identity: round-off of k^2-scaled entries summed over 32 columns; measured 1.9e-13
    assert np.max(np.abs(op @ h - want)) < 1e-12
    assert np.allclose(op @ np.ones(32), 0.0, atol=1e-12)  # constants are stationary


def test_heat_equation_for_uniform_density():
    # p uniform => heat equation: cos(k theta) decays like exp(-k^2 t)
    th = np.linspace(-3, 3, 7)
    got = drift_pde_solution(th, 0.3, amplitude=0.0, drift=2.0)
    want = np.exp(-0.3) * np.cos(th) + 0.5 * np.exp(-4 * 0.3) * np.sin(2 * th) + 0.3 * np.exp(-9 * 0.3) * np.cos(3 * th)
    # exp of the stiff collocation matrix (k^2 up to 6.5e4): round-off measured 3e-12; bound 1e-10
    assert np.max(np.abs(got - want)) < 1e-10


@pytest.mark.parametrize("amplitude, drift, initial, t", [(0.5, 2.0, "smooth", 0.05), (0.5, 2.0, "smooth", 0.3),
                                                          (-0.8, 1.0, "smooth", 0.2), (0.5, 2.0, "step", 0.05)])
def test_against_fourier_galerkin(amplitude, drift, initial, t):
    # the coefficients of H decay like exp(-1.3 k) (log p is analytic up to |Im theta| = acosh 2 at a = 0.5):
    # 64 Galerkin modes resolve them to round-off; measured differences 5e-13 .. 1.7e-12
    th = np.linspace(-np.pi, np.pi, 41)
    got = drift_pde_solution(th, t, amplitude=amplitude, drift=drift, initial=initial)
    want = _galerkin_solution(th, t, amplitude=amplitude, drift=drift, initial=initial)
    assert np.max(np.abs(got - want)) < 1e-10
    # negative control: the other drift coefficient (2 <-> 1) is far off (measured 0.035 at a = 0.5, t = 0.05)
    other = _galerkin_solution(th, t, amplitude=amplitude, drift=3.0 - drift, initial=initial)
    assert np.max(np.abs(got - other)) > 1e-3


def test_drift_two_conserves_the_p_squared_mass():
    # At = p^-2 (p^2 H')' for c = 2: int H p^2 is conserved and H -> int H0 p^2 / int p^2; for c = 1 the
    # conserved weight is p instead (negative control: the p^2 mass then moves by O(1e-2))
    a = 0.5
    th = 2 * np.pi * np.arange(1024) / 1024  # trapezoid exact for the trigonometric polynomials here
    p = 1 + a * np.cos(th)
    h0 = drift_pde_initial(th, "smooth")
    mass0 = np.mean(h0 * p**2)
    h = drift_pde_solution(th, 0.3, amplitude=a, drift=2.0)
    assert abs(np.mean(h * p**2) - mass0) < 1e-12
    late = drift_pde_solution(th, 40.0, amplitude=a, drift=2.0)
    # slowest decaying mode: eigenvalue -1.045, gone after exp(-41.8); measured residue 2.8e-12 (round-off
    # of the eigen-decomposition); at t = 20 that mode still leaves 1.5e-10
    assert np.max(np.abs(late - mass0 / np.mean(p**2))) < 1e-10
    printed = drift_pde_solution(th, 0.3, amplitude=a, drift=1.0)
    assert abs(np.mean(printed * p) - np.mean(h0 * p)) < 1e-12
    assert abs(np.mean(printed * p**2) - mass0) > 1e-3


def test_initial_conditions():
    th = np.array([-2.0, 0.0, 1.0, 3.0])
    assert np.array_equal(drift_pde_initial(th, "step"), [0.0, 1.0, 1.0, 0.0])
    series = drift_pde_initial(th, "step", modes=2000)  # Fourier series of the step: O(1/modes) off the jumps
    assert np.max(np.abs(series - [0.0, 1.0, 1.0, 0.0])) < 1e-3
    assert drift_pde_initial(0.0, "smooth") == pytest.approx(1.3, rel=1e-15)


@pytest.mark.parametrize("call, match", [(lambda: drift_collocation_matrix(1, 0.5, 2.0), "m must"),
                                         (lambda: drift_collocation_matrix(16, 1.0, 2.0), "amplitude"),
                                         (lambda: drift_pde_solution([0.0], -1.0), "t must"),
                                         (lambda: drift_pde_solution([0.0], 0.1, initial="box"), "initial"),
                                         (lambda: drift_pde_solution([0.0], 0.1, m=4), "m must"),
                                         (lambda: drift_pde_initial([0.0], "step", modes=0), "modes")])
def test_bad_input(call, match):
    with pytest.raises(InputError, match=match):
        call()
