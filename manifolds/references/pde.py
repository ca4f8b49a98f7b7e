"""Independent references for the PDE-guided attention checks (PDE paper, App. D and E).

Nothing here calls :mod:`spectral.pde`: the checks compare the mechanism with these.

* :func:`softmax_attention` -- ``softmax(Q K^T / sqrt(d))`` from seeded Gaussian ``Q, K`` (optionally
  causal, optionally with a linear distance bias ``-|i - j| / ell``);
* :func:`stencil_matrix` -- the ``T x T`` matrix of ``sym (a_(j-1) - 2 a_j + a_(j+1)) +
  anti (a_(j+1) - a_(j-1))`` built entry by entry from the ghost-value definition of each boundary
  (a loop over tokens, not the slicing code of the mechanism);
* :func:`brute_evolve` -- explicit steps with those matrices (matrix products, one axis at a time);
* :func:`laplacian_eigenvalues` -- closed-form eigenvalues ``mu_k >= 0`` of minus the second
  difference for each boundary;
* :func:`closed_form_limit` -- the stability limits that follow from those closed forms;
* :func:`heat_kernel_1d` -- the continuum heat kernel ``exp(-s^2 / (4 alpha t)) / sqrt(4 pi alpha t)``.

Host-only NumPy code.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["softmax_attention", "stencil_matrix", "brute_evolve", "fixed_ends_reference", "laplacian_eigenvalues",
           "closed_form_limit", "heat_kernel_1d"]


def softmax_attention(rng: np.random.Generator, T: int, d: int = 16, *, causal: bool = False,
                      bias_length: float | None = None) -> np.ndarray:
    """``softmax(Q K^T / sqrt(d))`` with ``Q, K`` i.i.d. standard normal ``(T, d)`` (PDE eq. 1).

    ``causal`` masks the future keys ``j > i``; ``bias_length`` adds ``-|i - j| / bias_length`` to
    the scores (a local attention pattern, ALiBi style).
    """
    q = rng.standard_normal((T, d))
    k = rng.standard_normal((T, d))
    s = q @ k.T / math.sqrt(d)
    if bias_length is not None:
        i, j = np.indices((T, T))
        s = s - np.abs(i - j) / bias_length
    if causal:
        s = np.where(np.tri(T, dtype=bool), s, -np.inf)
    s = s - s.max(axis=1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=1, keepdims=True)


def _ghost(boundary: str, T: int, jj: int, part: str) -> list[tuple[int, float]]:
    """Where the virtual token ``jj`` (outside 0..T-1) takes its value from, with weights."""
    if boundary == "periodic":
        return [(jj % T, 1.0)]
    end = 0 if jj < 0 else T - 1
    if boundary == "neumann":  # cell-centred zero flux: a_(-1) = a_0 (diffusive), -a_0 (advective)
        return [(end, 1.0 if part == "second" else -1.0)]
    if boundary == "reflect":  # a_(-1) = a_1, a_T = a_(T-2)
        return [(1 if jj < 0 else T - 2, 1.0)]
    return []  # dirichlet: zero outside


def stencil_matrix(T: int, boundary: str, sym: float = 1.0, anti: float = 0.0) -> np.ndarray:
    """Matrix of ``sym (a_(j-1) - 2 a_j + a_(j+1)) + anti (a_(j+1) - a_(j-1))`` (unit spacing).

    Built token by token from the definitions: ``"fixed"`` leaves the end tokens unchanged (zero
    rows); the others fill the missing neighbours from ghost values (:func:`_ghost`).
    """
    m = np.zeros((T, T))
    terms = (("second", -1, sym), ("second", 0, -2.0 * sym), ("second", 1, sym),
             ("first", 1, anti), ("first", -1, -anti))
    for j in range(T):
        if boundary == "fixed" and j in (0, T - 1):
            continue
        for part, off, coef in terms:
            if coef == 0.0:
                continue
            jj = j + off
            if 0 <= jj < T:
                m[j, jj] += coef
            else:
                for src, w in _ghost(boundary, T, jj, part):
                    m[j, src] += w * coef
    return m


def brute_evolve(a0: np.ndarray, *, pde: str, steps: int, dt: float, alpha: float = 0.0, c: float = 0.0,
                 beta: float = 0.0, axis: str = "key", boundary: str) -> tuple[np.ndarray, np.ndarray]:
    """The schemes of PDE App. E by matrix products with :func:`stencil_matrix` (returns ``A, V``).

    ``boundary="fixed"`` is the public code's layer token by token (:func:`fixed_ends_reference`): the
    end tokens are copied under every term, the reaction included.
    """
    if boundary == "fixed":
        return fixed_ends_reference(a0, pde=pde, steps=steps, dt=dt, alpha=alpha, c=c, beta=beta, axis=axis)
    T = a0.shape[0]
    if pde == "wave":
        op = stencil_matrix(T, boundary, c * c)
    else:
        op = stencil_matrix(T, boundary, alpha, beta / 2.0 if pde == "advection-diffusion" else 0.0)

    def apply(x):
        out = np.zeros_like(x)
        if axis in ("key", "both"):
            out += x @ op.T
        if axis in ("query", "both"):
            out += op @ x
        return out

    a = np.array(a0, dtype=float)
    v = np.zeros_like(a)
    for _ in range(steps):
        if pde == "wave":
            v = v + dt * apply(a)
            a = a + dt * v
        else:
            new = a + dt * apply(a)
            if pde == "reaction-diffusion":
                new = new + dt * beta * a * (1.0 - a)
            a = new
    return a, v


def fixed_ends_reference(a0, *, pde, steps, dt, alpha=0.0, c=0.0, beta=0.0, axis, velocity=None):
    """Fixed ends written token by token: the end tokens of every acted axis are copied unchanged,
    every other entry takes the plain three-point stencil(s) (its neighbours all exist) and the reaction.

    This is the public code's layer (``cat([x[:1], x[1:-1] + dx, x[-1:]])``) applied along the axis, and on
    both axes to the frame of the matrix; no ghost values are involved. Returns ``A, V``.
    """
    T = a0.shape[0]
    a = np.array(a0, dtype=float)
    v = np.zeros_like(a) if velocity is None else np.array(velocity, dtype=float)
    def held(i, j):
        return (axis in ("key", "both") and j in (0, T - 1)) or (axis in ("query", "both") and i in (0, T - 1))

    coef = c * c if pde == "wave" else alpha
    adv = beta / 2.0 if pde == "advection-diffusion" else 0.0
    for _ in range(steps):
        new, newv = a.copy(), v.copy()
        for i in range(T):
            for j in range(T):
                if held(i, j):
                    continue
                lap = grad = 0.0
                if axis in ("key", "both"):
                    lap += a[i, j - 1] - 2 * a[i, j] + a[i, j + 1]
                    grad += a[i, j + 1] - a[i, j - 1]
                if axis in ("query", "both"):
                    lap += a[i - 1, j] - 2 * a[i, j] + a[i + 1, j]
                    grad += a[i + 1, j] - a[i - 1, j]
                if pde == "wave":
                    newv[i, j] = v[i, j] + dt * coef * lap
                    new[i, j] = a[i, j] + dt * newv[i, j]
                else:
                    new[i, j] = a[i, j] + dt * (coef * lap + adv * grad)
                    if pde == "reaction-diffusion":
                        new[i, j] += dt * beta * a[i, j] * (1.0 - a[i, j])
        a, v = new, newv
    return a, v


def laplacian_eigenvalues(T: int, boundary: str) -> np.ndarray:
    """Closed-form eigenvalues ``mu_k`` of minus the unit-spacing second difference, ascending.

    periodic ``4 sin^2(pi k / T)``; cell-centred Neumann ``4 sin^2(pi k / (2T))``; ghost reflection
    ``4 sin^2(pi k / (2(T-1)))`` (k = 0..T-1); Dirichlet ``4 sin^2(pi k / (2(T+1)))`` (k = 1..T);
    fixed ends: two zeros and the Dirichlet values of the ``T - 2`` interior tokens.
    """
    k = np.arange(T)
    if boundary == "periodic":
        mu = 4 * np.sin(np.pi * k / T) ** 2
    elif boundary == "neumann":
        mu = 4 * np.sin(np.pi * k / (2 * T)) ** 2
    elif boundary == "reflect":
        mu = 4 * np.sin(np.pi * k / (2 * (T - 1))) ** 2
    elif boundary == "dirichlet":
        mu = 4 * np.sin(np.pi * (k + 1) / (2 * (T + 1))) ** 2
    elif boundary == "fixed":
        mu = np.concatenate([[0.0, 0.0], laplacian_eigenvalues(T - 2, "dirichlet")])
    else:
        raise ValueError(f"unknown boundary {boundary!r}")
    return np.sort(mu)


def closed_form_limit(pde: str, T: int, boundary: str, axis: str = "key") -> float:
    """Largest stable ``r`` (diffusion) or Courant number (wave) from :func:`laplacian_eigenvalues`."""
    mu = laplacian_eigenvalues(T, boundary).max() * (2.0 if axis == "both" else 1.0)
    return 2.0 / math.sqrt(mu) if pde == "wave" else 2.0 / mu


def heat_kernel_1d(s, alpha_t: float):
    """Continuum heat kernel ``exp(-s^2 / (4 alpha t)) / sqrt(4 pi alpha t)`` at ``alpha t``."""
    s = np.asarray(s, dtype=float)
    return np.exp(-s * s / (4.0 * alpha_t)) / math.sqrt(4.0 * math.pi * alpha_t)
