"""The PDE step and FMA stay on the device of their inputs: no host transfer, no per-step host synchronisation.

There is no GPU here, so two stand-ins check this by construction:

* ``array_api_strict`` arrays on its second device (``Device("device1")``): combining them with an array on
  the default device raises, and so does converting them to NumPy, so an array created without the inputs'
  device or a trip through the host fails the call;
* the same arrays dressed as bare CuPy 14 (``sys.modules["cupy"]``, the ``cupy_standin`` fixture of
  tests/spectral/conftest.py): like ``cupy.zeros`` the creation functions refuse a ``device=`` keyword and
  create on the current device, and the array-API names bare CuPy lacks (``linalg.vector_norm``, ``vecdot``)
  are missing, so code that needs them fails. ``spectral.floor.backend`` then takes the CuPy branches
  (``is_cupy_array`` is true).

Host synchronisations (``bool``, ``float``, ``int`` or ``index`` of an array) and host-to-device copies
(``asarray`` of a host value) are counted: they must not grow with the number of PDE steps or FMA chunks.
"""

import sys

import numpy as np
import pytest

xps = pytest.importorskip("array_api_strict")

from manifolds.references.fma import eq4_reference, hierarchy_1d  # noqa: E402
from manifolds.references.pde import brute_evolve, softmax_attention  # noqa: E402
from spectral import FactoredAttention, evolve_attention, fma_attention, fma_attention_2d  # noqa: E402

DEVICE = xps.Device("device1")
CPU = xps.Device("CPU_DEVICE")
_ARRAY = type(xps.asarray(0.0))


class Counter:
    """Host synchronisations and host-to-device copies seen while it is installed."""

    def __init__(self):
        self.syncs = 0
        self.uploads = 0


@pytest.fixture(params=["array_api_strict:device1", "cupy-like"])
def device_xp(request, monkeypatch):
    """``put(numpy array) -> device array`` for one stand-in; ``put.counts`` sees its synchronisations and copies.

    ``cupy-like``: the shared CuPy stand-in of tests/spectral/conftest.py (``cupy_standin``: bare CuPy 14's
    namespace on array_api_strict's second device, its synchronisations counted), the input uploaded through
    its ``cupy.asarray`` (one counted copy).
    """
    if request.param == "cupy-like":
        standin = request.getfixturevalue("cupy_standin")

        def put(a):
            return standin.module.asarray(np.asarray(a))

        put.counts = standin.counts
        return put
    counts = Counter()
    for name in ("__bool__", "__float__", "__int__", "__index__"):
        original = getattr(_ARRAY, name)

        def counted(self, *args, _original=original):
            counts.syncs += 1
            return _original(self, *args)

        monkeypatch.setattr(_ARRAY, name, counted)
    original = xps.asarray

    def asarray(obj, *args, **kwargs):
        if not isinstance(obj, _ARRAY):
            counts.uploads += 1
        return original(obj, *args, **kwargs)

    monkeypatch.setattr(xps, "asarray", asarray)

    def put(a):
        return xps.asarray(np.asarray(a), device=DEVICE)

    put.counts = counts
    return put


@pytest.fixture
def counter(device_xp):
    return device_xp.counts


def host(x):
    """Back to NumPy through the default device (the test's own, explicit transfer)."""
    assert x.device == DEVICE
    return np.from_dlpack(x.to_device(CPU))


# ------------------------------------------------------------------------------------------------- PDE
PDES = ("diffusion", "wave", "reaction-diffusion", "advection-diffusion")


@pytest.mark.parametrize("pde", PDES)
@pytest.mark.parametrize("boundary", ["neumann", "fixed"])
def test_pde_step_on_the_device(device_xp, counter, pde, boundary):
    a0 = softmax_attention(np.random.default_rng(1), 12)
    kw = dict(pde=pde, dt=1.0, alpha=0.1, c=0.3, beta=0.2, axis="both", boundary=boundary)
    counts = []
    for steps in (1, 7):
        before = (counter.syncs, counter.uploads)
        res = evolve_attention(device_xp(a0), steps=steps, **kw)
        counts.append((counter.syncs - before[0], counter.uploads - before[1] - 1))  # less the input's upload
        ref = evolve_attention(a0, steps=steps, **kw)
        np.testing.assert_allclose(host(res.attention), ref.attention, rtol=0, atol=1e-13)
        if pde == "wave":
            np.testing.assert_allclose(host(res.velocity), ref.velocity, rtol=0, atol=1e-13)
    assert counts[0] == counts[1], counts  # nothing per step
    assert counts[0][0] <= 1 and counts[0][1] == 0, counts  # one finiteness check, no copy to the device


def test_pde_remask_renormalise_and_factored_on_the_device(device_xp, counter):
    a0 = np.tril(softmax_attention(np.random.default_rng(2), 10))
    res = evolve_attention(device_xp(a0), steps=5, causal_remask=True, renormalize=True, boundary="fixed")
    want, _ = brute_evolve(a0, pde="diffusion", steps=1, dt=1.0, alpha=0.1, boundary="neumann")  # sanity: moved
    got = host(res.attention)
    assert np.all(np.triu(got, 1) == 0) and np.allclose(got.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    np.testing.assert_allclose(got, evolve_attention(a0, steps=5, causal_remask=True, renormalize=True,
                                                     boundary="fixed").attention, rtol=0, atol=1e-14)
    assert np.abs(want - a0).max() > 1e-3
    rng = np.random.default_rng(3)
    q, k = rng.random((2, 10, 3))
    for pde in ("diffusion", "wave"):
        before = counter.syncs
        fa = evolve_attention(FactoredAttention(device_xp(q), device_xp(k)), pde=pde, steps=6, boundary="fixed",
                              renormalize=True)
        assert counter.syncs - before <= 2  # the finiteness of the two factors, once
        ref = evolve_attention(FactoredAttention(q, k), pde=pde, steps=6, boundary="fixed", renormalize=True)
        np.testing.assert_allclose(host(fa.attention.key), ref.attention.key, rtol=0, atol=1e-14)
        np.testing.assert_allclose(host(fa.attention.query), ref.attention.query, rtol=0, atol=1e-14)


# ------------------------------------------------------------------------------------------------- FMA
@pytest.mark.parametrize("normalisation,causal,downsample,p,weighted", [
    ("per-level", False, False, 1, False), ("joint", True, False, 2, False), ("joint", False, True, 1, False),
    ("per-level", True, False, 2, True)])
def test_fma_on_the_device_with_many_chunks(device_xp, counter, monkeypatch, normalisation, causal, downsample, p,
                                            weighted):
    import spectral.fma as mod

    n, r = 100, 5
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((3, n, 6))
    h = hierarchy_1d(n, r)
    kw = dict(r=r, p=p, normalisation=normalisation, causal=causal, downsample_queries=downsample)
    pik = [rng.standard_normal((p, r << (lev - 1))) for lev in range(1, h.depth)]
    piv = [rng.standard_normal((p, r << (lev - 1))) for lev in range(1, h.depth)]
    if weighted:
        kw["weights"] = [(device_xp(a), device_xp(b)) for a, b in zip(pik, piv)]
    counts = []
    for scores in (1 << 17, 3 * r * r):  # one chunk; chunks of r queries (20 of them)
        monkeypatch.setattr(mod, "_CHUNK_SCORES", scores)
        before = (counter.syncs, counter.uploads)
        out = fma_attention(device_xp(q), device_xp(k), device_xp(v), **kw)
        counts.append((counter.syncs - before[0], counter.uploads - before[1]))
        if p == 1 or weighted:
            ref = eq4_reference(q, k, v, h, normalisation=normalisation, causal=causal, downsample_queries=downsample,
                                **(dict(pik=pik, piv=piv) if weighted else {}))
        else:
            ref = fma_attention(q, k, v, **kw)
        np.testing.assert_allclose(host(out), ref, rtol=0, atol=1e-12)
    assert counts[0] == counts[1], counts  # the index structure goes to the device once, not per chunk


def test_fma_2d_on_the_device(device_xp):
    rng = np.random.default_rng(5)
    q, k, v = rng.standard_normal((3, 13 * 13, 4))
    out = fma_attention_2d(device_xp(q), device_xp(k), device_xp(v), r=3, normalisation="joint")
    np.testing.assert_allclose(host(out), fma_attention_2d(q, k, v, r=3, normalisation="joint"), rtol=0, atol=1e-12)


def test_the_stand_ins_catch_what_they_are_for(device_xp):
    # an array made on the default device, or a trip through NumPy, fails on the stand-in device
    x = device_xp(np.ones(3))
    if "cupy" in sys.modules and getattr(sys.modules["cupy"], "ndarray", None) is _ARRAY:
        with pytest.raises(TypeError, match="device"):
            sys.modules["cupy"].zeros(3, device=DEVICE)
        with pytest.raises(AttributeError, match="vector_norm"):  # bare CuPy 14 has no linalg.vector_norm
            sys.modules["cupy"].linalg.vector_norm(x)
    with pytest.raises(ValueError, match="different devices"):
        x + xps.zeros(3)
    with pytest.raises(RuntimeError, match="NumPy"):
        np.asarray(x)
