"""Tests of spectral.pde (PDE paper App. E) against references independent of the code under test.

References: :mod:`manifolds.references.pde` builds the stencil matrices token by token from the ghost-value
definition of each boundary and evolves by matrix products (no slicing code of the mechanism); the
Laplacian spectra are the closed forms ``4 sin^2(...)``. Exact-algebra tolerances: ``1e-13`` absolute on
O(1) entries after a few steps (sums of three terms per step).
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from spectral import FactoredAttention, PDEEvolution, evolve_attention, laplacian_matrix, stability_limit
from spectral.floor.backend import to_numpy
from spectral.testing import assert_close
from spectral.floor.validation import InputError
from manifolds.references.pde import (brute_evolve, closed_form_limit, fixed_ends_reference, laplacian_eigenvalues,
                                     softmax_attention, stencil_matrix)

BOUNDARIES = ("periodic", "neumann", "reflect", "dirichlet", "fixed")
PDES = ("diffusion", "wave", "reaction-diffusion", "advection-diffusion")
AXES = ("key", "query", "both")
ATOL = 1e-13


@pytest.fixture(scope="module")
def a0():
    return softmax_attention(np.random.default_rng(3), 11)


class TestLaplacianMatrix:
    @pytest.mark.parametrize("boundary", BOUNDARIES)
    @pytest.mark.parametrize("T", [3, 4, 9, 16])
    def test_equals_token_by_token_definition(self, boundary, T):
        assert_close(laplacian_matrix(T, boundary=boundary), stencil_matrix(T, boundary), rtol=0, atol=0)
        assert_close(laplacian_matrix(T, boundary=boundary, sparse=True).toarray(), stencil_matrix(T, boundary),
                     rtol=0, atol=0)

    @pytest.mark.parametrize("boundary", BOUNDARIES)
    @pytest.mark.parametrize("T", [8, 15, 64])
    def test_spectrum_closed_form(self, boundary, T):
        ev = np.sort(-np.linalg.eigvals(laplacian_matrix(T, boundary=boundary)).real)
        np.testing.assert_allclose(ev, laplacian_eigenvalues(T, boundary), rtol=0, atol=1e-12)

    def test_end_rows_and_sums(self):
        neu = laplacian_matrix(6, boundary="neumann")
        ref = laplacian_matrix(6, boundary="reflect")
        assert neu[0, :2].tolist() == [-1.0, 1.0] and ref[0, :2].tolist() == [-2.0, 2.0]
        assert np.all(neu.sum(axis=0) == 0) and np.all(neu.sum(axis=1) == 0)
        assert ref.sum(axis=0).tolist() == [-1.0, 1.0, 0.0, 0.0, 1.0, -1.0]
        assert np.all(laplacian_matrix(6, boundary="fixed")[[0, -1]] == 0)

    def test_spacing(self):
        assert_close(laplacian_matrix(7, boundary="periodic", ds=0.5), 4 * stencil_matrix(7, "periodic"),
                     rtol=1e-15)

    @pytest.mark.parametrize("kwargs, match", [({"T": 2}, "T"), ({"T": 5.0}, "T"), ({"boundary": "open"}, "boundary"),
                                               ({"ds": 0.0}, "ds"), ({"ds": -1.0}, "ds"), ({"sparse": 1}, "sparse")])
    def test_bad_input(self, kwargs, match):
        args = {"T": 5, "boundary": "neumann", **kwargs}
        T = args.pop("T")
        with pytest.raises(InputError, match=match):
            laplacian_matrix(T, **args)


class TestStabilityLimit:
    @pytest.mark.parametrize("boundary", BOUNDARIES)
    @pytest.mark.parametrize("T", [5, 8, 63, 64, 1000])
    @pytest.mark.parametrize("axis", ["key", "both"])
    @pytest.mark.parametrize("pde", ["diffusion", "wave"])
    def test_closed_form(self, boundary, T, axis, pde):
        got = stability_limit(pde, T=T, boundary=boundary, axis=axis)
        assert got == pytest.approx(closed_form_limit(pde, T, boundary, axis), rel=1e-13)

    def test_known_values(self):
        assert stability_limit("diffusion", T=64, boundary="periodic") == pytest.approx(0.5, rel=1e-14)
        assert stability_limit("diffusion", T=64, boundary="periodic", axis="both") == pytest.approx(0.25, rel=1e-14)
        assert stability_limit("diffusion", T=8, boundary="neumann") == pytest.approx(
            1 / (2 * math.cos(math.pi / 16) ** 2), rel=1e-14)
        assert stability_limit("wave", T=64, boundary="periodic") == pytest.approx(1.0, rel=1e-14)

    def test_spectral_radius_at_the_limit(self):
        # the step matrix built token by token: radius 1 at the limit, above just beyond it
        T = 12
        lap = stencil_matrix(T, "neumann")
        lim = stability_limit("diffusion", T=T, boundary="neumann")
        rho = lambda r: np.abs(np.linalg.eigvals(np.eye(T) + r * lap)).max()  # noqa: E731
        assert rho(lim) <= 1 + 1e-12 and rho(1.001 * lim) > 1.001

    def test_spacing_invariant_in_r(self):
        a = stability_limit("diffusion", T=32, boundary="neumann", ds=1.0)
        b = stability_limit("diffusion", T=32, boundary="neumann", ds=1e-3)
        assert a == pytest.approx(b, rel=1e-12)

    def test_other_pdes_use_the_diffusion_limit(self):
        lim = stability_limit("diffusion", T=20, boundary="periodic")
        assert stability_limit("reaction-diffusion", T=20, boundary="periodic") == lim
        assert stability_limit("advection-diffusion", T=20, boundary="periodic") == lim

    @pytest.mark.parametrize("kwargs, match", [({"pde": "heat"}, "pde"), ({"T": 1}, "T"), ({"axis": "row"}, "axis"),
                                               ({"boundary": "x"}, "boundary"), ({"ds": -2.0}, "ds")])
    def test_bad_input(self, kwargs, match):
        args = {"pde": "diffusion", "T": 8, "boundary": "periodic", **kwargs}
        with pytest.raises(InputError, match=match):
            stability_limit(args.pop("pde"), **args)


def _reference(a0, **kw):
    """The reference of the scheme: :func:`manifolds.references.pde.brute_evolve` (matrix products with ghost
    values from the definitions; the token-by-token public-code layer for fixed ends)."""
    return brute_evolve(a0, **kw)


class TestEvolveDense:
    @pytest.mark.parametrize("pde", PDES)
    @pytest.mark.parametrize("axis", AXES)
    @pytest.mark.parametrize("boundary", BOUNDARIES)
    def test_matches_brute_force(self, a0, pde, axis, boundary):
        kw = dict(pde=pde, steps=3, dt=0.7, alpha=0.2, c=0.5, beta=0.3, axis=axis, boundary=boundary)
        res = evolve_attention(a0, **kw, allow_unstable=True)
        ref_a, ref_v = _reference(a0, **kw)
        assert_close(res.attention, ref_a, rtol=0, atol=ATOL)
        if pde == "wave":
            assert_close(res.velocity, ref_v, rtol=0, atol=ATOL)
        else:
            assert res.velocity is None

    def test_xp(self, xp, a0):
        a = xp.asarray(a0)
        for pde in PDES:
            res = evolve_attention(a, pde=pde, steps=4, beta=0.03, axis="both", boundary="reflect")
            ref, _ = brute_evolve(a0, pde=pde, steps=4, dt=1.0, alpha=0.1, c=0.15, beta=0.03, axis="both",
                                  boundary="reflect")
            assert_close(res.attention, xp.asarray(ref), rtol=0, atol=ATOL)
        masked = evolve_attention(a, steps=3, causal_remask=True, renormalize=True)
        m = to_numpy(masked.attention)
        assert np.all(np.triu(m, 1) == 0) and np.allclose(m.sum(axis=1), 1.0, rtol=0, atol=1e-15)

    def test_float32_kept(self, a0):
        res = evolve_attention(a0.astype(np.float32), steps=2)
        assert res.attention.dtype == np.float32

    def test_integer_input_converted(self):
        res = evolve_attention(np.eye(5, dtype=int), steps=1, alpha=0.25, boundary="periodic")
        assert res.attention.dtype == np.float64 and res.attention[0, 1] == 0.25

    def test_result_fields(self, a0):
        res = evolve_attention(a0, steps=2, dt=0.5, alpha=0.2, c=0.3)
        assert isinstance(res, PDEEvolution)
        assert res.r == pytest.approx(0.1) and res.courant == pytest.approx(0.15)
        assert res.stable and res.form == "dense" and res.limit == stability_limit("diffusion", T=11,
                                                                                    boundary="neumann")
        assert "r=0.1" in repr(res) and "stable=True" in repr(res)
        with pytest.raises(AttributeError):
            res.steps = 3

    def test_zero_steps_is_identity(self, a0):
        assert_close(evolve_attention(a0, steps=0).attention, a0, rtol=0, atol=0)

    def test_causal_remask_without_renormalisation_loses_mass(self):
        a = np.tril(np.ones((8, 8)))
        a /= a.sum(axis=1, keepdims=True)
        res = evolve_attention(a, steps=2, causal_remask=True)
        assert np.all(np.triu(res.attention, 1) == 0)
        assert res.attention.sum(axis=1).min() < 1 - 1e-3 and not res.renormalize

    def test_wave_continuation_equals_one_run(self, a0):
        full = evolve_attention(a0, pde="wave", steps=7, c=0.4)
        part = evolve_attention(a0, pde="wave", steps=3, c=0.4)
        rest = evolve_attention(part.attention, pde="wave", steps=4, c=0.4, velocity=part.velocity)
        assert_close(rest.attention, full.attention, rtol=0, atol=ATOL)
        assert_close(rest.velocity, full.velocity, rtol=0, atol=ATOL)


class TestEvolveSparseAndFactored:
    @pytest.mark.parametrize("pde", PDES)
    @pytest.mark.parametrize("axis", AXES)
    @pytest.mark.parametrize("boundary", BOUNDARIES)
    def test_sparse_equals_dense(self, a0, pde, axis, boundary):
        kw = dict(pde=pde, steps=3, dt=0.7, alpha=0.2, c=0.5, beta=0.3, axis=axis, boundary=boundary,
                  allow_unstable=True)
        res = evolve_attention(sp.csr_array(a0), **kw)
        assert res.form == "banded" and sp.issparse(res.attention)
        assert_close(res.attention.toarray(), evolve_attention(a0, **kw).attention, rtol=0, atol=ATOL)

    def test_band_widens_by_two_per_step(self):
        T, h = 40, 3
        i, j = np.indices((T, T))
        band = sp.csr_array(np.where(np.abs(i - j) <= h, 1.0, 0.0))
        for n in (1, 2, 5):
            res = evolve_attention(band, steps=n, alpha=0.25)
            row = res.attention[[20], :].nonzero()[1]
            assert row.max() - row.min() + 1 == 2 * h + 1 + 2 * n

    def test_sparse_causal_remask(self, a0):
        kw = dict(steps=3, causal_remask=True, renormalize=True, axis="both")
        got = evolve_attention(sp.csr_array(np.tril(a0)), **kw).attention.toarray()
        assert_close(got, evolve_attention(np.tril(a0), **kw).attention, rtol=0, atol=ATOL)

    @pytest.mark.parametrize("pde", ["diffusion", "wave", "advection-diffusion"])
    @pytest.mark.parametrize("axis", ["key", "query"])
    @pytest.mark.parametrize("boundary", BOUNDARIES)
    def test_factored_equals_dense(self, pde, axis, boundary):
        rng = np.random.default_rng(5)
        q, k = rng.random((13, 4)), rng.random((13, 4))
        kw = dict(pde=pde, steps=3, dt=0.7, alpha=0.2, c=0.5, beta=0.3, axis=axis, boundary=boundary,
                  allow_unstable=True)
        res = evolve_attention(FactoredAttention(q, k), **kw)
        assert res.form == "factored" and res.attention.key.shape == (13, 4)
        assert_close(res.attention.dense(), evolve_attention(q @ k.T, **kw).attention, rtol=0, atol=ATOL)
        fixed = res.attention.query if axis == "key" else res.attention.key
        assert fixed is (q if axis == "key" else k)  # only the moving factor is touched

    def test_factored_xp_and_renormalisation(self, xp):
        rng = np.random.default_rng(6)
        q, k = rng.random((12, 3)), rng.random((12, 3))
        fa = FactoredAttention(xp.asarray(q), xp.asarray(k))
        res = evolve_attention(fa, steps=3, boundary="reflect", renormalize=True)
        assert_close(res.attention.row_sums(), xp.ones(12, dtype=xp.float64), rtol=0, atol=1e-14)
        dense = evolve_attention(q @ k.T, steps=3, boundary="reflect", renormalize=True).attention
        assert_close(to_numpy(res.attention.dense()), dense, rtol=0, atol=ATOL)
        assert "T=12" in repr(res.attention)

    @pytest.mark.parametrize("kwargs, match", [({"pde": "reaction-diffusion"}, "pde"), ({"axis": "both"}, "axis"),
                                               ({"causal_remask": True}, "causal_remask")])
    def test_factored_refusals(self, kwargs, match):
        fa = FactoredAttention(np.ones((6, 2)), np.ones((6, 2)))
        with pytest.raises(InputError, match=match):
            evolve_attention(fa, steps=1, **kwargs)


class TestStabilityAndBadInput:
    def test_unstable_step_raises_with_numbers(self):
        with pytest.raises(ValueError, match=r"r = alpha dt / ds\^2 = 0.6.*limit 0.5"):
            evolve_attention(np.eye(8), steps=1, alpha=0.6, boundary="periodic")
        with pytest.raises(InputError, match=r"Courant number c dt / ds = 1.1.*limit 1"):
            evolve_attention(np.eye(8), pde="wave", steps=1, c=1.1, boundary="periodic")
        with pytest.raises(InputError, match=r"\(beta dt / ds\)\^2"):
            evolve_attention(np.eye(8), pde="advection-diffusion", steps=1, alpha=0.01, beta=0.5)

    def test_allow_unstable_grows_and_says_so(self):
        res = evolve_attention(np.eye(8), steps=50, alpha=0.6, boundary="periodic", allow_unstable=True)
        assert not res.stable and np.abs(res.attention).max() > 1e3
        assert not evolve_attention(np.eye(8), steps=0, alpha=0.6, boundary="periodic").stable

    def test_limit_itself_is_stable(self):
        assert evolve_attention(np.eye(8), steps=2, alpha=0.5, boundary="periodic").stable
        assert evolve_attention(np.eye(8), steps=2, pde="wave", c=1.0, boundary="periodic").stable

    @pytest.mark.parametrize("kwargs, match", [
        ({"A0": np.ones((3, 4))}, "A0"), ({"A0": np.ones(4)}, "A0"), ({"A0": np.full((4, 4), np.nan)}, "A0"),
        ({"A0": np.eye(2)}, "A0"), ({"A0": np.eye(4) * 1j}, "A0"), ({"A0": "abc"}, "A0"),
        ({"dt": -0.1}, "dt"), ({"alpha": -1.0}, "alpha"), ({"c": -0.1}, "c"), ({"steps": -1}, "steps"),
        ({"steps": 1.5}, "steps"), ({"pde": "heat"}, "pde"), ({"axis": "rows"}, "axis"),
        ({"boundary": "open"}, "boundary"), ({"ds": 0.0}, "ds"), ({"beta": float("inf")}, "beta"),
        ({"causal_remask": 1}, "causal_remask"), ({"velocity": np.zeros((4, 4))}, "velocity"),
        ({"A0": sp.csr_array(np.ones((3, 5)))}, "A0"), ({"A0": sp.csr_array(np.full((4, 4), np.inf))}, "A0"),
    ])
    def test_bad_input(self, kwargs, match):
        args = {"A0": np.eye(4), "steps": 1, **kwargs}
        with pytest.raises(InputError, match=match) as info:
            evolve_attention(args.pop("A0"), **args)
        assert isinstance(info.value, ValueError)

    def test_velocity_shape_and_form(self):
        with pytest.raises(InputError, match="velocity"):
            evolve_attention(np.eye(4), pde="wave", steps=1, velocity=np.zeros((5, 5)))
        with pytest.raises(InputError, match="velocity"):
            evolve_attention(sp.csr_array(np.eye(4)), pde="wave", steps=1, velocity=np.zeros((4, 4)))


def test_dense_laplacian_refused_before_allocating_the_sparse_one_is_not():
    from spectral import DenseMemoryError

    with pytest.raises(DenseMemoryError, match=r"dense Laplacian .* needs an estimated 298 GiB.*use sparse=True"):
        laplacian_matrix(200_000, boundary="periodic")
    assert laplacian_matrix(200_000, boundary="periodic", sparse=True).nnz == 3 * 200_000


class TestFixedEnds:
    """``boundary="fixed"``: the end tokens are copied unchanged by every term of every PDE (PDE-paper
    public code), on the dense (NumPy fast path and array-API path), banded and factored forms."""

    @staticmethod
    def _held(x, axis):
        x = to_numpy(x)
        rows = [x[:, 0], x[:, -1]] if axis in ("key", "both") else []
        return rows + ([x[0], x[-1]] if axis in ("query", "both") else [])

    @pytest.mark.parametrize("pde", PDES)
    @pytest.mark.parametrize("axis", AXES)
    def test_end_tokens_never_move(self, xp, a0, pde, axis):
        # beta = 0.5 for nine steps moved the ends by 0.09 under the reaction term before the fix
        kw = dict(pde=pde, steps=9, dt=1.0, alpha=0.2, c=0.4, beta=0.5, axis=axis, boundary="fixed",
                  allow_unstable=True)
        res = evolve_attention(xp.asarray(a0), **kw)
        for got, want in zip(self._held(res.attention, axis), self._held(a0, axis)):
            assert np.array_equal(got, want)
        moved = np.abs(to_numpy(res.attention) - a0).max()
        assert moved > 1e-3  # the interior did evolve
        other = evolve_attention(a0, **{**kw, "boundary": "dirichlet"}).attention
        assert max(np.abs(g - w).max() for g, w in zip(self._held(other, axis), self._held(a0, axis))) > 1e-3

    @pytest.mark.parametrize("pde", PDES)
    @pytest.mark.parametrize("axis", AXES)
    def test_banded_holds_them_too(self, a0, pde, axis):
        kw = dict(pde=pde, steps=5, dt=0.7, alpha=0.2, c=0.5, beta=0.3, axis=axis, boundary="fixed",
                  allow_unstable=True)
        got = evolve_attention(sp.csr_array(a0), **kw).attention.toarray()
        assert_close(got, fixed_ends_reference(a0, **{k: v for k, v in kw.items()
                                                      if k not in ("boundary", "allow_unstable")})[0],
                     rtol=0, atol=ATOL)

    @pytest.mark.parametrize("axis", ["key", "query"])
    def test_wave_velocity_at_the_ends_does_not_move_them(self, a0, axis):
        v0 = np.random.default_rng(9).standard_normal(a0.shape)
        for form in ("dense", "banded"):
            a_in, v_in = (a0, v0) if form == "dense" else (sp.csr_array(a0), sp.csr_array(v0))
            res = evolve_attention(a_in, pde="wave", steps=4, c=0.4, axis=axis, boundary="fixed", velocity=v_in)
            got = res.attention.toarray() if form == "banded" else res.attention
            ref, ref_v = fixed_ends_reference(a0, pde="wave", steps=4, dt=1.0, c=0.4, axis=axis, velocity=v0)
            assert_close(got, ref, rtol=0, atol=ATOL)
            vel = res.velocity.toarray() if form == "banded" else res.velocity
            assert_close(vel, ref_v, rtol=0, atol=ATOL)

    @pytest.mark.parametrize("axis", ["key", "query"])
    def test_factored_wave_with_a_velocity(self, axis):
        rng = np.random.default_rng(8)
        q, k, w = rng.random((3, 12, 3))
        a0 = q @ k.T
        vel = FactoredAttention(q, w) if axis == "key" else FactoredAttention(w, k)
        res = evolve_attention(FactoredAttention(q, k), pde="wave", steps=4, c=0.4, axis=axis, boundary="fixed",
                               velocity=vel)
        ref, _ = fixed_ends_reference(a0, pde="wave", steps=4, dt=1.0, c=0.4, axis=axis, velocity=vel.dense())
        assert_close(res.attention.dense(), ref, rtol=0, atol=ATOL)

    @pytest.mark.parametrize("pde", ["diffusion", "wave", "advection-diffusion"])
    @pytest.mark.parametrize("axis", ["key", "query"])
    def test_the_loop_reference_agrees_with_the_matrix_reference_on_linear_one_axis_steps(self, a0, pde, axis):
        # where the old and new readings of "fixed" coincide, the two independent references agree
        kw = dict(pde=pde, steps=3, dt=0.7, alpha=0.2, c=0.5, beta=0.3, axis=axis)
        T = a0.shape[0]
        op = stencil_matrix(T, "fixed", 0.5 * 0.5 if pde == "wave" else 0.2,
                            0.3 / 2.0 if pde == "advection-diffusion" else 0.0)
        apply = (lambda x: x @ op.T) if axis == "key" else (lambda x: op @ x)
        a, v = np.array(a0, dtype=float), np.zeros(a0.shape)
        for _ in range(3):  # the matrix products of the stencil with its fixed rows
            if pde == "wave":
                v = v + 0.7 * apply(a)
                a = a + 0.7 * v
            else:
                a = a + 0.7 * apply(a)
        assert_close(fixed_ends_reference(a0, **kw)[0], a, rtol=0, atol=ATOL)


class TestNumpyFastPath:
    """The NumPy path (row blocks, ``scipy.ndimage.correlate1d``, reused buffers) against the references and
    against the array-API path, with blocks of a few rows so that every block edge is crossed."""

    @pytest.mark.parametrize("pde", PDES)
    @pytest.mark.parametrize("axis", AXES)
    @pytest.mark.parametrize("boundary", BOUNDARIES)
    def test_small_blocks_match_the_reference(self, monkeypatch, a0, pde, axis, boundary):
        import spectral.pde as mod

        monkeypatch.setattr(mod, "_BLOCK_BYTES", 3 * 11 * 8)  # blocks of 3 rows of 11
        kw = dict(pde=pde, steps=4, dt=0.7, alpha=0.2, c=0.5, beta=-0.3, axis=axis, boundary=boundary)
        res = evolve_attention(a0, **kw, allow_unstable=True)
        ref_a, ref_v = _reference(a0, **kw)
        assert_close(res.attention, ref_a, rtol=0, atol=ATOL)
        if pde == "wave":
            assert_close(res.velocity, ref_v, rtol=0, atol=ATOL)

    @pytest.mark.parametrize("pde", PDES)
    @pytest.mark.parametrize("boundary", ["periodic", "fixed"])
    def test_remask_and_renormalise_equal_the_array_api_path(self, monkeypatch, pde, boundary):
        import array_api_strict as xps

        import spectral.pde as mod

        monkeypatch.setattr(mod, "_BLOCK_BYTES", 4 * 13 * 8)
        a0 = np.tril(softmax_attention(np.random.default_rng(4), 13))
        for remask, renorm in ((True, False), (True, True), (False, True)):
            kw = dict(pde=pde, steps=5, beta=0.1, c=0.3, axis="both", boundary=boundary, causal_remask=remask,
                      renormalize=renorm)
            fast = evolve_attention(a0, **kw)
            generic = evolve_attention(xps.asarray(a0), **kw)
            assert_close(fast.attention, to_numpy(generic.attention), rtol=0, atol=ATOL)
            if remask:
                assert np.all(np.triu(fast.attention, 1) == 0)

    def test_several_blocks_at_a_larger_T_and_float32(self):
        a0 = softmax_attention(np.random.default_rng(5), 300)  # 109 rows per block: three blocks
        for axis in AXES:
            res = evolve_attention(a0, pde="reaction-diffusion", steps=3, beta=0.2, axis=axis, boundary="reflect")
            ref, _ = brute_evolve(a0, pde="reaction-diffusion", steps=3, dt=1.0, alpha=0.1, beta=0.2, axis=axis,
                                  boundary="reflect")
            assert_close(res.attention, ref, rtol=0, atol=ATOL)
        got32 = evolve_attention(a0.astype(np.float32), steps=3, axis="both").attention
        ref, _ = brute_evolve(a0, pde="diffusion", steps=3, dt=1.0, alpha=0.1, axis="both", boundary="neumann")
        assert got32.dtype == np.float32 and np.abs(got32 - ref).max() < 1e-6  # float32 rounding

    def test_inputs_are_not_written_and_strided_input_works(self, a0):
        a_copy, v = a0.copy(), np.ones_like(a0)
        for steps in (1, 2, 3):
            evolve_attention(a0, pde="wave", steps=steps, velocity=v)
        assert np.array_equal(a0, a_copy) and np.all(v == 1.0)
        t = np.asfortranarray(a0).T  # a transposed, non-C-contiguous view
        ref, _ = brute_evolve(a0.T, pde="diffusion", steps=3, dt=1.0, alpha=0.1, axis="query", boundary="neumann")
        assert_close(evolve_attention(t, steps=3, axis="query").attention, ref, rtol=0, atol=ATOL)

    def test_huge_finite_input_accepted(self):
        # finite but overflowing values are input the check accepts (no InputError, no warning)
        a = np.full((40, 40), 1e308)
        a[3, 4] = -1e308
        res = evolve_attention(a, steps=1, alpha=0.25, boundary="periodic")  # no InputError, no warning
        assert res.attention.shape == (40, 40)
        a[7, 7] = np.nan
        with pytest.raises(InputError, match="A0 must be finite"):
            evolve_attention(a, steps=1)

    @pytest.mark.parametrize("where", [(0, 0), (150, 3), (299, 299)])
    @pytest.mark.parametrize("steps", [0, 1, 3])
    def test_non_finite_input_refused_in_any_block(self, where, steps):
        a = np.full((300, 300), 1 / 300)
        a[where] = np.nan if where[0] % 2 else np.inf
        with pytest.raises(InputError, match="A0 must be finite"):
            evolve_attention(a, steps=steps)
