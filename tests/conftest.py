"""Shared fixtures: array backends and the GPU marker.

``xp`` runs a test on plain NumPy and on ``array_api_strict`` (a strict array-API
implementation that refuses NumPy-only calls), made as strict as bare CuPy about creation
functions (:func:`cupy_strict`); this is how backend neutrality is proved without a GPU.
Tests marked ``gpu`` are skipped, never failed, when CuPy or a CUDA device is missing.
"""

import functools
import os

import numpy as np
import pytest

from spectral.floor.backend import available_devices

# the checks' heartbeat remembers run durations in the user's cache (verify.core.progress): not from the tests
os.environ.setdefault("ATTENTION_LIMITS_DURATIONS", "off")

#: Keywords of the array-API creation functions (and ``astype``) that bare CuPy's functions lack, so a call
#: with them is a TypeError on a CUDA device (CuPy 13.6 and 14.2 signatures, read from CuPy's source:
#: ``cupy/_creation/basic.py``, ``from_data.py``, ``ranges.py``). ``asarray(copy=)`` exists from CuPy 14
#: and ``astype`` from CuPy 14 (with ``copy=``); the gpu extra's floor is CuPy 13, so ``copy=`` is refused
#: in ``asarray`` too. ``device=`` is what crashed ``manifolds.points.row_blocks`` on an H100.
CUPY_LACKS = {
    "asarray": ("device", "copy"),
    "arange": ("device",),
    "empty": ("device",),
    "empty_like": ("device",),
    "eye": ("device",),
    "from_dlpack": ("device", "copy"),
    "full": ("device",),
    "full_like": ("device",),
    "linspace": ("device",),
    "ones": ("device",),
    "ones_like": ("device",),
    "zeros": ("device",),
    "zeros_like": ("device",),
    "astype": ("device",),
}


def _refusing(name, fn, refused):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        bad = sorted(set(kwargs) & set(refused))
        if bad:
            raise TypeError(f"{name}() got an unexpected keyword argument {bad[0]!r} (bare CuPy's {name} has no "
                            f"{bad[0]}=; the stand-in namespace refuses it as CuPy does)")
        return fn(*args, **kwargs)

    call.refuses = tuple(refused)
    return call


def cupy_strict(monkeypatch, module):
    """Make ``module`` (array_api_strict) refuse the creation keywords bare CuPy lacks (:data:`CUPY_LACKS`).

    The functions are replaced on the module object, which is the namespace ``array_namespace`` returns for
    its arrays (``x.__array_namespace__()``), so code under test sees them; ``monkeypatch`` restores them.
    """
    for name, refused in CUPY_LACKS.items():
        fn = getattr(module, name, None)
        if fn is not None and not hasattr(fn, "refuses"):
            monkeypatch.setattr(module, name, _refusing(name, fn, refused))
    return module


def _backends():
    yield pytest.param(np, id="numpy")
    try:
        import array_api_strict
    except ImportError:  # pragma: no cover
        return
    yield pytest.param(array_api_strict, id="array_api_strict")


@pytest.fixture(params=list(_backends()))
def xp(request, monkeypatch):
    """Array namespace to build inputs with: numpy, or array_api_strict refusing what bare CuPy refuses."""
    if request.param is np:
        return np
    return cupy_strict(monkeypatch, request.param)


@pytest.fixture
def strict_xp(monkeypatch):
    """array_api_strict, as strict as bare CuPy about creation keywords (skipped without array_api_strict)."""
    return cupy_strict(monkeypatch, pytest.importorskip("array_api_strict"))


@pytest.fixture(scope="session", autouse=True)
def _single_thread_blas():
    """One BLAS thread for the test session.

    The suite runs hundreds of small dense solves; with threaded OpenBLAS on a 2-core machine that
    is also doing other work, a 128 x 128 eigensolve was measured 10x slower (and a clusters check
    75 s instead of 1.6 s). Results do not depend on the thread count.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)


def pytest_collection_modifyitems(config, items):
    if "gpu" in available_devices():
        return
    skip = pytest.mark.skip(reason="needs CuPy and a CUDA device (none here)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def estimate_and_peak(monkeypatch):
    """``estimate_and_peak(call)``: (the pairwise memory guard's estimate in bytes, the traced peak of ``call()``).

    The guard (:func:`spectral.floor.pairwise_memory.check_pairwise_memory`) records its estimate and lets the
    call through whatever the limit, so a test can hold the estimate against what was really allocated.
    """
    import tracemalloc

    import spectral.floor.pairwise_memory as pm

    def measure(call):
        seen = []
        monkeypatch.setattr(pm, "check_memory", lambda needed, **kw: seen.append(needed) or needed)
        tracemalloc.start()
        try:
            call()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        return seen[0], peak

    return measure


@pytest.fixture
def refused_peak():
    """``refused_peak(call, match)``: the traced peak of ``call()``, which must raise DenseMemoryError matching ``match``."""
    import tracemalloc

    from spectral.floor.memory import DenseMemoryError

    def measure(call, match):
        tracemalloc.start()
        try:
            with pytest.raises(DenseMemoryError, match=match):
                call()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    return measure


# ------------------------------------------------------------------ numeric inputs (tests/*/test_numeric_inputs.py)
def _case_ids(cases, *fields):
    return [f"{i}-" + "-".join(str(case[f]) for f in fields) for i, case in enumerate(cases)]


def bool_refusal_test(cases):
    """A test: every ``call(value)`` of ``cases`` (``(call, name)`` pairs) refuses ``value`` True and False with an
    InputError starting ``"{name} must be"`` (``True`` is not 1)."""
    from spectral.floor.validation import InputError

    @pytest.mark.parametrize("call, name", cases, ids=_case_ids(cases, 1))
    @pytest.mark.parametrize("value", [True, False])
    def test(call, name, value):
        with pytest.raises(InputError, match=rf"^{name} must be"):
            call(value)

    return test


def non_finite_refusal_test(refused, says_why):
    """A test: every ``call(value)`` of ``refused`` (``(exported name, call, input name)``) refuses ``value`` NaN
    and inf with an InputError that names the input and matches ``says_why`` (a regular expression: why)."""
    import re

    from spectral.floor.validation import InputError

    @pytest.mark.parametrize("value", [float("nan"), float("inf")])
    @pytest.mark.parametrize("fn, call, name", refused, ids=_case_ids(refused, 0, 2))
    def test(fn, call, name, value):
        with pytest.raises(InputError) as info:
            call(value)
        text = str(info.value)
        assert re.search(rf"(^|\W){re.escape(name)}\W", text), text  # names the input
        assert re.search(says_why, text), text  # and says why

    return test


def non_finite_propagation_test(propagated, *, numpy_warns=False):
    """A test: every ``call(value)`` of ``propagated`` (``(exported name, call)``) carries ``value`` NaN and inf
    into its result (not all of it finite). With ``numpy_warns`` NumPy's floating-point warnings about the NaN
    are silenced (not the point); without it they are errors, as everywhere in the suite."""
    import contextlib

    @pytest.mark.parametrize("value", [float("nan"), float("inf")])
    @pytest.mark.parametrize("fn, call", propagated, ids=_case_ids(propagated, 0))
    def test(fn, call, value):
        quiet = np.errstate(invalid="ignore", over="ignore", divide="ignore") if numpy_warns else contextlib.nullcontext()
        with quiet:
            out = np.asarray(call(value))
        assert not np.all(np.isfinite(out))

    return test
