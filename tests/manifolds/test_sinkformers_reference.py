"""Tests of manifolds.references.sinkformers against quadrature, closed forms and the heat-kernel spectra.

Independent references: ``scipy.integrate.quad`` for the moments and the kernel symbols; the uniform density,
for which both continuum operators are the heat-kernel multipliers ``I_k(1/eps)/I_0(1/eps)`` (S^1) and
``I_(l+1/2)/I_(1/2)`` (S^2) of :func:`manifolds.heat_kernel_eigenvalue` (a separate closed form); a direct 2-D
quadrature of the softmax operator at a point of S^2; and the eps -> 0 limits of
:func:`manifolds.drift_diffusion` (``a = 0`` softmax, ``a = 1/2`` Sinkhorn), reached at O(eps).
"""

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import eval_legendre

from manifolds import FourierMode, Polynomial, Sphere, VonMises, VonMisesFisher, drift_diffusion, heat_kernel_eigenvalue
from manifolds.references.sinkformers import (circle_continuum, circle_heat_moment, circle_kernel_symbol,
                                              sphere_continuum, sphere_heat_moment, sphere_kernel_symbol,
                                              vmf_fibonacci_points)
from spectral.floor.validation import InputError


def test_heat_moments_at_time_zero_by_quadrature():
    kappa, mu = 1.3, 0.4
    pdf = lambda t: math.exp(kappa * math.cos(t - mu)) / (2 * math.pi * np.i0(kappa))  # noqa: E731
    for k in (1, 2, 3):
        ref = quad(lambda t: pdf(t) * math.cos(k * (t - mu)), -math.pi, math.pi, epsabs=1e-14)[0]
        assert abs(float(circle_heat_moment(k, 0.0, kappa=kappa, diffusivity=0.5)) - ref) < 1e-12
    kappa = 2.0
    pdf_z = lambda z: kappa * math.exp(kappa * z) / (2 * math.sinh(kappa))  # noqa: E731 - density of z = <mu, x>
    for l in (1, 2, 3):
        ref = quad(lambda z: pdf_z(z) * eval_legendre(l, z), -1, 1, epsabs=1e-14)[0]
        assert abs(float(sphere_heat_moment(l, 0.0, kappa=kappa, diffusivity=0.5)) - ref) < 1e-12
    # the heat semigroup: e^(-k^2 D t) on S^1, e^(-l(l+1) D t) on S^2
    assert math.isclose(float(circle_heat_moment(2, 0.3, kappa=1.0, diffusivity=0.5) /
                              circle_heat_moment(2, 0.0, kappa=1.0, diffusivity=0.5)), math.exp(-0.6), rel_tol=1e-14)
    assert math.isclose(float(sphere_heat_moment(2, 0.3, kappa=1.0, diffusivity=1.0) /
                              sphere_heat_moment(2, 0.0, kappa=1.0, diffusivity=1.0)), math.exp(-1.8), rel_tol=1e-14)


@pytest.mark.parametrize("eps", [0.3, 0.02])
def test_kernel_symbols_by_quadrature(eps):
    for k in (0, 1, 4):
        ref = quad(lambda t: math.exp(-(1 - math.cos(t)) / eps) * math.cos(k * t), -math.pi, math.pi,
                   epsabs=1e-14, points=(0.0,))[0]
        assert math.isclose(float(circle_kernel_symbol(eps, k)), ref, rel_tol=1e-10)
    for l in (0, 1, 3):
        ref = 2 * math.pi * quad(lambda t: math.exp(-(1 - t) / eps) * eval_legendre(l, t), -1, 1, epsabs=1e-15,
                                 points=(1 - 10 * eps,) if eps < 0.1 else None)[0]
        assert math.isclose(float(sphere_kernel_symbol(eps, l)), ref, rel_tol=1e-9, abs_tol=1e-15)


def test_uniform_density_gives_the_heat_kernel_multipliers():
    eps = 0.02
    theta = np.linspace(0, 2 * np.pi, 37)
    c = circle_continuum(lambda t: np.full_like(t, 1 / (2 * np.pi)), [lambda t: np.cos(3 * t)], eps, theta)
    ref = (heat_kernel_eigenvalue(1, 3, eps) - 1) / eps * np.cos(3 * theta)
    np.testing.assert_allclose(c.softmax[:, 0], ref, atol=1e-11)
    np.testing.assert_allclose(c.sinkhorn[:, 0], ref, atol=1e-11)
    np.testing.assert_allclose(c.scaling, 1 / math.sqrt(circle_kernel_symbol(eps, 0) / (2 * np.pi)), rtol=1e-12)
    z = np.linspace(-1, 1, 21)
    s = sphere_continuum(lambda t: np.full_like(t, 1 / (4 * np.pi)), [lambda t: eval_legendre(2, t)], eps, z,
                         degree=128)
    ref = (heat_kernel_eigenvalue(2, 2, eps) - 1) / eps * eval_legendre(2, z)
    np.testing.assert_allclose(s.softmax[:, 0], ref, atol=1e-10)
    np.testing.assert_allclose(s.sinkhorn[:, 0], ref, atol=1e-10)
    assert s.scaling_residual <= 1e-12 and c.scaling_residual <= 1e-12


def test_softmax_on_the_sphere_against_a_direct_quadrature():
    """At one point: int k(x, y) p(y) f(y) dA / int k p dA by Gauss-Legendre in z times the trapezoid in phi."""
    kappa, eps = 2.0, 0.05
    pdf_z = lambda t: kappa * np.exp(kappa * t) / (4 * np.pi * np.sinh(kappa))  # noqa: E731
    f_z = lambda t: 1.5 * t**2 - 0.5  # noqa: E731
    z0 = 0.3
    x = np.array([math.sqrt(1 - z0**2), 0.0, z0])
    zs, wz = np.polynomial.legendre.leggauss(400)
    phi = 2 * np.pi * np.arange(800) / 800
    Z, PHI = np.meshgrid(zs, phi, indexing="ij")
    R = np.sqrt(1 - Z**2)
    dot = x[0] * R * np.cos(PHI) + x[2] * Z
    k = np.exp(-(1 - dot) / eps)
    w = wz[:, None] * (2 * np.pi / 800)
    ref = (np.sum(w * k * pdf_z(Z) * f_z(Z)) / np.sum(w * k * pdf_z(Z)) - f_z(z0)) / eps
    got = sphere_continuum(pdf_z, [f_z], eps, [z0], degree=128).softmax[0, 0]
    assert abs(got - ref) < 1e-9 * max(1.0, abs(ref))


def test_limits_reached_at_order_eps():
    dens = VonMises(mu=0.3, kappa=1.0)
    f = FourierMode(2, phase=-math.pi / 2)
    theta = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    x = np.stack([np.cos(theta), np.sin(theta)], axis=1)
    lim = {a: np.asarray(drift_diffusion(f, dens, x, a=a)) for a in (0.0, 0.5)}
    errs = []
    for eps in (0.02, 0.01, 0.005):
        c = circle_continuum(dens.angle_pdf, [lambda t: np.sin(2 * t)], eps, theta)
        errs.append((np.max(np.abs(c.softmax[:, 0] - lim[0.0])), np.max(np.abs(c.sinkhorn[:, 0] - lim[0.5]))))
    errs = np.asarray(errs)
    np.testing.assert_allclose(errs[:-1] / errs[1:], 2.0, rtol=0.02)  # O(eps): halves with eps
    # on S^2 with a zonal vMF density and f = <mu, x>
    mu = np.array([0.0, 0.6, 0.8])
    vmf = VonMisesFisher(mu, kappa=2.0)
    g = Polynomial.quadratic(np.zeros((3, 3)), mu, manifold=Sphere(2))
    pts = vmf_fibonacci_points(50, kappa=2.0, mu=mu)
    pdf_z = lambda t: 2.0 * np.exp(2.0 * t) / (4 * np.pi * np.sinh(2.0))  # noqa: E731
    lim = {a: np.asarray(drift_diffusion(g, vmf, pts, a=a)) for a in (0.0, 0.5)}
    errs = []
    for eps in (0.02, 0.01, 0.005):
        s = sphere_continuum(pdf_z, [lambda t: t], eps, pts @ mu, degree=160)
        errs.append((np.max(np.abs(s.softmax[:, 0] - lim[0.0])), np.max(np.abs(s.sinkhorn[:, 0] - lim[0.5]))))
    errs = np.asarray(errs)
    np.testing.assert_allclose(errs[:-1] / errs[1:], 2.0, rtol=0.05)


def test_vmf_fibonacci_points():
    kappa = 2.0
    for mu in (np.array([0.0, 0.6, 0.8]), np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, -1.0])):
        pts = vmf_fibonacci_points(2000, kappa=kappa, mu=mu)
        np.testing.assert_allclose(np.linalg.norm(pts, axis=1), 1.0, atol=1e-14)
        z = pts @ mu
        for l in (1, 2, 3):
            assert abs(np.mean(eval_legendre(l, z)) - float(sphere_heat_moment(l, 0.0, kappa=kappa,
                                                                               diffusivity=0))) < 1e-5
        m = pts.mean(axis=0)
        np.testing.assert_allclose(m / np.linalg.norm(m), mu, atol=1e-3)
    with pytest.raises(InputError, match="unit vector"):
        vmf_fibonacci_points(10, kappa=1.0, mu=[1.0, 1.0, 0.0])


def test_bad_input():
    with pytest.raises(InputError, match="degree"):
        sphere_continuum(lambda t: t, [lambda t: t], 1e-3, [0.0], degree=64)
    with pytest.raises(InputError, match="eps"):
        circle_continuum(lambda t: t, [lambda t: t], 1e-8, [0.0])
    with pytest.raises(InputError, match="eps"):
        circle_kernel_symbol(0.0, 1)
