"""Fixtures shared by the spectral tests."""

import functools

import pytest

from manifolds import Circle
from spectral import fna_kernel, pairwise


@pytest.fixture(scope="session")
def random_circle():
    """300 random points on S^1, their FNA scores (alpha = 1.2, scale = 0.05) and the kernel."""
    circle = Circle()
    x = circle.sample(300, rng=7)
    kern = functools.partial(fna_kernel, alpha=1.2, scale=0.05, dim=1)
    return x, pairwise(x, kernel=kern, distance=circle.distance), kern


@pytest.fixture(scope="session")
def fna_on():
    """``fna_on(points, alpha=1.2, scale=0.05) -> (C, kernel)``: dense FNA scores on S^1 (geodesic)."""
    circle = Circle()

    def build(points, *, alpha=1.2, scale=0.05):
        kern = functools.partial(fna_kernel, alpha=alpha, scale=scale, dim=1)
        return pairwise(points, kernel=kern, distance=circle.distance), kern

    return build


# ------------------------------------------------------------------------------------------ CuPy stand-in
#: Array-API names bare CuPy 14 lacks: ``cupy.linalg.vector_norm`` and ``matrix_norm`` (cupy/cupy#9887 and #9952,
#: still open in 2026), ``vecdot`` and ``__array_namespace_info__`` (spectral.floor.backend's docstring). The stand-in
#: refuses them as bare CuPy does (AttributeError): code needing ``array_api_compat.cupy`` for them fails here.
BARE_CUPY_LACKS = ("vecdot", "__array_namespace_info__")
BARE_CUPY_LINALG_LACKS = ("vector_norm", "matrix_norm", "vecdot")
#: Keywords bare CuPy's creation functions refuse (tests/conftest.py CUPY_LACKS, for the functions made here).
_REFUSED = {"asarray": ("device", "copy"), "from_dlpack": ("device", "copy")}
_CREATION = ("arange", "asarray", "empty", "eye", "full", "linspace", "ones", "zeros", "from_dlpack")
_LIKE = ("empty_like", "full_like", "ones_like", "zeros_like")


class DeviceCounts:
    """What the code under test asked of the stand-in device.

    ``syncs``: host synchronisations (``bool``/``float``/``int``/``index`` of a device array, ``.get()``);
    ``uploads``: host-to-device copies (``cupy.asarray`` of a host value); ``memory_queries``:
    ``cuda.runtime.memGetInfo`` calls; ``attribute_reads``: ``cuda.Device(i).attributes`` reads;
    ``compiles``: ``cupy.RawKernel`` objects made; ``launches``: kernel launches.
    """

    FIELDS = ("syncs", "uploads", "memory_queries", "attribute_reads", "compiles", "launches")

    def __init__(self):
        for name in self.FIELDS:
            setattr(self, name, 0)
        self.paused = 0

    def snapshot(self) -> dict:
        return {name: getattr(self, name) for name in self.FIELDS}

    def since(self, before: dict) -> dict:
        return {name: getattr(self, name) - before[name] for name in self.FIELDS}


class _Namespace:
    """Forwards to ``target`` except the names in ``lacks`` (AttributeError, as bare CuPy); own attributes first."""

    def __init__(self, target, lacks, name):
        self._target, self._lacks, self.__name__ = target, tuple(lacks), name

    def __getattr__(self, attr):
        if attr in self._lacks:
            raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r} (bare CuPy 14 lacks it)")
        return getattr(self._target, attr)


class CupyStandIn:
    """``array_api_strict`` on its second device, dressed as bare CuPy 14 on one CUDA device.

    What the toolkit's device path calls is there and counted (:class:`DeviceCounts`): the creation functions
    (refusing ``device=`` and ``copy=`` as bare CuPy does, creating on the current device), ``ascontiguousarray``,
    ``cuda.runtime`` (``getDeviceCount``, ``getDevice``, ``memGetInfo``), ``cuda.Device`` (a context manager with
    ``attributes``), ``get_default_memory_pool``, ``RawKernel`` (the two generated kernels of
    :mod:`spectral.tiles`, emulated with NumPy on host copies: the launch's grid and arguments are checked, the
    results written back on the device) and ``cupyx.scipy.sparse.linalg`` (``eigsh``, modelled on CuPy 14's: a
    start vector ``v0`` must be a device vector of the matrix's dtype and is overwritten; without one it starts
    from an unseeded random vector; ``LinearOperator``). Arrays on the default device, trips through NumPy
    (``np.asarray``) and the array-API names bare CuPy lacks (:data:`BARE_CUPY_LACKS`) raise.
    """

    def __init__(self, monkeypatch, xps, *, free_bytes=64 << 30):
        import sys

        self.xps = xps
        self.device = xps.Device("device1")
        self.cpu = xps.Device("CPU_DEVICE")
        self.array_type = type(xps.asarray(0.0))
        self.counts = DeviceCounts()
        self.free_bytes = free_bytes  # what memGetInfo reports (tests set it)
        self.eigsh_starts = []  # host copy of each start vector cupyx eigsh got (None: it drew its own)
        counts = self.counts
        for name in ("__bool__", "__float__", "__int__", "__index__"):
            original = getattr(self.array_type, name)

            def counted(a, *args, _original=original):
                if not counts.paused:
                    counts.syncs += 1
                return _original(a, *args)

            monkeypatch.setattr(self.array_type, name, counted)

        def get(a):  # cupy.ndarray.get(): a copy to the host, which synchronises
            counts.syncs += 1
            return self.host(a)

        monkeypatch.setattr(self.array_type, "get", get, raising=False)
        # a CuPy array's device is a context manager (cupy.cuda.Device): ``with a.device:`` makes it current
        monkeypatch.setattr(type(self.device), "__enter__", lambda d: d, raising=False)
        monkeypatch.setattr(type(self.device), "__exit__", lambda d, *exc: False, raising=False)
        self.module = self._cupy()
        monkeypatch.setitem(sys.modules, "cupy", self.module)
        # bare CuPy: `import array_api_compat.cupy` fails as without the gpu extra (spectral.floor.backend.cupy_namespace)
        monkeypatch.setitem(sys.modules, "array_api_compat.cupy", None)
        for name, mod in self._cupyx().items():
            monkeypatch.setitem(sys.modules, name, mod)
        import spectral.tiles as tiles

        self._caches = [f for f in (getattr(tiles, "_cuda_kernel", None), getattr(tiles, "_cuda_sum_kernel", None))
                        if hasattr(f, "cache_clear")]
        self.clear_caches()

    def clear_caches(self):
        """Forget the compiled kernels (functools caches of spectral.tiles hold the stand-in's)."""
        for f in self._caches:
            f.cache_clear()

    # ---------------------------------------------------------------------------------- transfers
    def put(self, a):
        """A host array on the stand-in device (the test's own upload: not counted)."""
        import numpy as np

        return self.xps.asarray(np.asarray(a), device=self.device)

    def host(self, a):
        """A stand-in device array as NumPy (the test's own transfer: not counted)."""
        import numpy as np

        assert a.device == self.device, f"an array on {a.device}, not on the stand-in device"
        self.counts.paused += 1
        try:
            return np.array(np.from_dlpack(a.to_device(self.cpu)))
        finally:
            self.counts.paused -= 1

    def _write(self, target, value, index=...):
        """Write a host array into a device array in place (what a kernel does)."""
        self.counts.paused += 1
        try:
            target[index] = self.xps.asarray(value, device=self.device)
        finally:
            self.counts.paused -= 1

    # ------------------------------------------------------------------------------------- cupy
    def _cupy(self):
        import types

        xps, counts, device = self.xps, self.counts, self.device
        fake = types.ModuleType("cupy")
        fake.__version__ = "14.2.0 (stand-in)"
        fake.ndarray = self.array_type

        def creation(name):
            refused = _REFUSED.get(name, ("device",))

            def make(*args, **kwargs):
                bad = sorted(set(kwargs) & set(refused))
                if bad:
                    raise TypeError(f"cupy.{name}() got an unexpected keyword argument {bad[0]!r}")
                if name == "asarray" and not isinstance(args[0], self.array_type):
                    counts.uploads += 1
                if name == "asarray" and isinstance(args[0], self.array_type):
                    a = args[0]
                    dtype = kwargs.get("dtype")
                    return a if dtype is None or a.dtype == dtype else xps.astype(a, dtype)
                return getattr(xps, name)(*args, device=device, **kwargs)

            return make

        def like(name):
            def make(*args, **kwargs):
                if "device" in kwargs:
                    raise TypeError(f"cupy.{name}() got an unexpected keyword argument 'device'")
                return getattr(xps, name)(*args, **kwargs)

            return make

        for name in _CREATION:
            setattr(fake, name, creation(name))
        for name in _LIKE:
            setattr(fake, name, like(name))

        def ascontiguousarray(a, dtype=None):
            assert a.device == device, "ascontiguousarray of an array not on the device"
            return a if dtype is None or a.dtype == dtype else xps.astype(a, dtype)

        fake.ascontiguousarray = ascontiguousarray
        fake.linalg = _Namespace(xps.linalg, BARE_CUPY_LINALG_LACKS, "cupy.linalg")
        standin = self

        class Pool:
            def total_bytes(self):
                return 0

            def used_bytes(self):
                return 0

        pool = Pool()
        fake.get_default_memory_pool = lambda: pool

        def mem_get_info():
            counts.memory_queries += 1
            return standin.free_bytes, 80 << 30

        class Device:
            def __init__(self, index=0):
                self.id = int(index)

            @property
            def attributes(self):
                counts.attribute_reads += 1
                return {"MultiProcessorCount": 132}

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        runtime = types.SimpleNamespace(getDeviceCount=lambda: 1, getDevice=lambda: 0, memGetInfo=mem_get_info,
                                        runtimeGetVersion=lambda: 13000, driverGetVersion=lambda: 13000)
        fake.cuda = types.SimpleNamespace(runtime=runtime, Device=Device)
        fake.RawKernel = lambda source, name: _EmulatedKernel(standin, source, name)
        namespace = _Namespace(xps, BARE_CUPY_LACKS, "cupy")
        fake.__getattr__ = namespace.__getattr__  # module-level __getattr__ (PEP 562): the rest of the namespace
        return fake

    # ------------------------------------------------------------------------------------ cupyx
    def _cupyx(self):
        import types

        import numpy as np
        import scipy.sparse.linalg as sla

        standin = self

        class LinearOperator:
            __module__ = "cupyx.scipy.sparse.linalg._interface"  # what spectral.floor.backend recognises

            def __init__(self, shape, matvec, matmat=None, dtype=None):
                self.shape, self.dtype, self._matvec, self._matmat = tuple(shape), np.dtype(dtype), matvec, matmat

            def matvec(self, v):
                return self._matvec(v)

        def eigsh(a, k=6, *, which="LM", v0=None, ncv=None, maxiter=None, tol=0, return_eigenvectors=True):
            n = int(a.shape[0])
            dtype = np.dtype(str(a.dtype).rsplit(".", 1)[-1])
            if v0 is None:  # CuPy 14: cupy.random.random((n,)), never seeded by the toolkit
                start = np.random.default_rng().random(n).astype(dtype)
                standin.eigsh_starts.append(None)
            else:
                assert isinstance(v0, standin.array_type), f"v0 must be a device array, got {type(v0).__name__}"
                assert str(v0.dtype).rsplit(".", 1)[-1] == dtype.name, (v0.dtype, dtype)  # cuBLAS reads it as such
                assert tuple(v0.shape) == (n,), v0.shape
                start = standin.host(v0)
                standin.eigsh_starts.append(start.copy())
                standin._write(v0, np.full(n, np.nan, dtype=dtype))  # CuPy's workspace: the caller's v0 is overwritten
            if isinstance(a, LinearOperator):
                host_op = sla.LinearOperator((n, n), dtype=dtype,
                                             matvec=lambda v: standin.host(a.matvec(standin.put(v.astype(dtype)))))
            else:
                host_op = standin.host(a)
            w, x = sla.eigsh(host_op, k=k, which=which, v0=start, tol=tol, maxiter=maxiter)
            order = np.argsort(w)
            return standin.put(w[order]), standin.put(x[:, order])

        linalg = types.ModuleType("cupyx.scipy.sparse.linalg")
        linalg.eigsh, linalg.LinearOperator = eigsh, LinearOperator
        sparse = types.ModuleType("cupyx.scipy.sparse")
        sparse.linalg = linalg
        scipy_ = types.ModuleType("cupyx.scipy")
        scipy_.sparse = sparse
        cupyx = types.ModuleType("cupyx")
        cupyx.scipy = scipy_
        return {"cupyx": cupyx, "cupyx.scipy": scipy_, "cupyx.scipy.sparse": sparse,
                "cupyx.scipy.sparse.linalg": linalg}


class _EmulatedKernel:
    """``cupy.RawKernel`` of the stand-in: the generated kernels of spectral.tiles, emulated with NumPy.

    ``kernel_operator_product``: the distance (float64) and the score (in the source's ``real``) of every entry,
    subnormal scores flushed, the diagonal zeroed when asked, partial sums per column chunk (``gridDim.y``),
    row minima; ``kernel_operator_chunk_sum``: the chunks added in chunk order. The same formulas as the CUDA
    source, in NumPy's order of summation (agreement to round-off, which the tests allow).
    """

    def __init__(self, standin, source, name):
        import ast

        assert name in source, (name, source[:80])
        self.standin, self.name = standin, name
        standin.counts.compiles += 1
        head = source.split("\n", 1)[0]
        self.spec = ast.literal_eval(head[head.index("("):]) if name == "kernel_operator_product" else ()
        if name == "kernel_operator_product":  # the header's arguments are the source's: regenerate and compare
            from spectral.tiles import cuda_source

            assert cuda_source(*self.spec) == source

    def __call__(self, grid, block, args):
        import numpy as np

        st = self.standin
        st.counts.launches += 1
        assert all(isinstance(a, st.array_type) and a.device == st.device for a in args if hasattr(a, "dtype")
                   and not isinstance(a, np.generic)), "a kernel argument is not on the device"
        if self.name == "kernel_operator_chunk_sum":
            part, out = st.host(args[0]), st.host(args[1])
            n, k, chunks, ldo, ocol = (int(v) for v in args[2:7])
            assert grid[0] * block[0] >= n * k and part.shape[0] >= chunks
            flat = part.reshape(-1)[: chunks * n * k].reshape(chunks, n * k)  # (chunks, n, k), compact
            total = flat[0].copy()
            for b in range(1, chunks):  # chunk order
                total = total + flat[b]
            out.reshape(n, ldo)[:, ocol:ocol + k] = total.reshape(n, k)
            st._write(args[1], out)
            return
        geometry, profile, width, tile_dtype, dims = self.spec
        pa, pb, X = (st.host(a) for a in args[:3])
        n, m, k, ldx, xcol, ldo, ocol, chunk, zd, rm = (int(v) for v in args[5:15])
        scale, constant = float(args[15]), float(args[16])
        assert k <= width and grid[0] * block[0] >= n and (grid[1] - 1) * chunk < m <= grid[1] * chunk
        real = np.float32 if tile_dtype == "float32" else np.float64
        if geometry == "circle":
            d = np.abs(pa.reshape(n)[:, None] - pb.reshape(m)[None, :])
            d = np.minimum(d, 2 * np.pi - d)
        else:
            a, b = pa.reshape(n, dims), pb.reshape(m, dims)
            sm = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
            if geometry == "chordal":
                d = np.sqrt(sm)
            else:
                sp = ((a[:, None, :] + b[None, :, :]) ** 2).sum(-1)
                d = 2.0 * np.arctan2(np.sqrt(sm), np.sqrt(sp))
        z, sc, cst = d.astype(real), real(scale), real(constant)
        with np.errstate(divide="ignore", over="ignore", under="ignore"):
            if profile == "power":
                s = np.exp(np.log(z / sc + real(1)) * cst)
            elif profile == "local":
                s = np.exp(-((z / sc) * (z / sc) if cst == 2 else (z / sc) ** cst))
            else:
                s = np.exp(z * z * cst)
        s = np.where(s < np.finfo(real).tiny, 0, s).astype(np.float64)
        low = [s[:, c * chunk:min(m, (c + 1) * chunk)].min(axis=1) for c in range(grid[1])]
        if zd:
            idx = np.arange(min(n, m))
            s[idx, idx] = 0.0
        Xk = X.reshape(m, ldx)[:, xcol:xcol + k]
        target = st.host(args[3])
        flat = target.reshape(-1)
        for c in range(grid[1]):
            sums = s[:, c * chunk:min(m, (c + 1) * chunk)] @ Xk[c * chunk:min(m, (c + 1) * chunk)]
            rows_at = (c * n + np.arange(n))[:, None] * ldo + ocol + np.arange(k)[None, :]
            flat[rows_at] = sums
        st._write(args[3], flat.reshape(target.shape))
        if rm:
            st._write(args[4], np.stack(low).reshape(st.host(args[4]).shape))


@pytest.fixture
def cupy_standin(monkeypatch):
    """A CuPy stand-in (:class:`CupyStandIn`) in ``sys.modules`` for one test (skipped without array_api_strict)."""
    standin = CupyStandIn(monkeypatch, pytest.importorskip("array_api_strict"))
    yield standin
    standin.clear_caches()
