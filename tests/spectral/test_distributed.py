"""KernelOperator products in parts, in one process and on a Dask cluster (spectral.operators, spectral.distributed).

The parts of a product (:meth:`KernelOperator.layout`) are checked in one process against dense references;
a product on a cluster must give the bits of the same parts in one process. Default tier: one in-process
LocalCluster of two workers (eigenvalues, a non-symmetric product, the row sums, and GPU workers through a
stand-in device). Slow tier: two worker processes (the operator pickled to other interpreters).

No GPU here: the GPU workers' path runs :meth:`TilePlan.device_product` (the launch code, the column chunks,
the rotation of the columns for ``zero_diagonal``) with NumPy standing in for CuPy and a NumPy emulation of
the CUDA kernel standing in for its compilation (the kernel's own source is run on the host in
``test_tiles.py``).
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

from manifolds import Circle, Sphere
from spectral import KernelOperator, fna_kernel, heat_kernel, markov_spectrum, pairwise
from spectral.parts import tree_sum
from spectral.profiles import TileProfile
from spectral.tiles import TilePlan
from spectral.floor.validation import InputError

SPHERE = Sphere(2)
KERN = functools.partial(fna_kernel, alpha=1.3, scale=0.2, dim=2)


def _dense(x, y=None, *, kernel=KERN, zero_diagonal=False):
    c = pairwise(x, y, kernel=kernel, distance=SPHERE.distance)
    if zero_diagonal:
        np.fill_diagonal(c, 0.0)
    return c


# ------------------------------------------------------------------------------------ a stand-in CUDA device

_SOURCE = re.compile(r"cuda_source\('(\w+)', '(\w+)', (\d+), '(\w+)', (\d+)\)")


def emulated_cuda(source: str):
    """A "compiler" of :func:`spectral.tiles.cuda_source` and :func:`spectral.tiles.cuda_sum_source` returning a
    NumPy launcher with the kernels' contracts, on NumPy arrays written in place. The product:
    ``target[chunk, i, ocol:ocol+k] = sum_{j in chunk} s_ij X[j, xcol:xcol+k]`` (``s_ii`` left out with
    ``zero_diagonal``; one chunk: the result's columns) and the row minima of the scores per chunk, for the
    geometry, profile and tile dtype named in the source; the chunk sum: the chunks added in chunk order.
    (tests/spectral/conftest.py's stand-in checks the launch against the CUDA source's arithmetic; this one
    only has to give the parts' products.)"""
    if "kernel_operator_chunk_sum" in source:
        def add_chunks(grid, block, args):
            part, out = args[0], args[1]
            n, k, chunks, ldo, ocol = (int(v) for v in args[2:7])
            flat = part.reshape(-1)[: chunks * n * k].reshape(chunks, n, k)
            total = flat[0].copy()
            for b in range(1, chunks):  # chunk order
                total = total + flat[b]
            out.reshape(n, ldo)[:, ocol:ocol + k] = total
        return add_chunks
    geometry, kind, _, tile_dtype, _ = _SOURCE.search(source).groups()

    def launch(grid, block, args):
        pa, pb, X, target, mins = args[:5]
        n, m, k, ldx, xcol, ldo, ocol, chunk, zd, rm = (int(v) for v in args[5:15])
        scale, constant = float(args[15]), float(args[16])
        profile = {"power": lambda: TileProfile.power(-constant, scale),
                   "local": lambda: TileProfile.local(constant, scale),
                   "heat": lambda: TileProfile.heat(-1.0 / (2.0 * constant))}[kind]()
        plan = TilePlan(geometry, profile, "numpy")
        flat = target.reshape(-1)
        for c in range(grid[1]):
            j0, j1 = c * chunk, min(m, (c + 1) * chunk)
            s = np.asarray(plan.tile(pa, pb[j0:j1], tile_dtype), dtype=np.float64)
            if rm:
                mins[c, :] = s.min(axis=1)
            if zd:
                i = np.arange(n)
                hit = (i >= j0) & (i < j1)
                s[i[hit], i[hit] - j0] = 0.0
            sums = s @ X.reshape(m, ldx)[j0:j1, xcol:xcol + k]
            flat[(c * n + np.arange(n))[:, None] * ldo + ocol + np.arange(k)[None, :]] = sums

    return launch


STAND_IN = (np, emulated_cuda)


# --------------------------------------------------------------------------------------------- one process


def test_tree_sum_is_one_fixed_tree():
    assert tree_sum(list("abcde"), lambda a, b: f"({a}+{b})") == "(((a+b)+(c+d))+e)"
    assert tree_sum([7], None) == 7
    with pytest.raises(ValueError):
        tree_sum([], None)


def test_layouts_cover_each_tile_and_row_once(rng):
    x = SPHERE.sample(1000, rng=rng)
    op = KernelOperator(x, kernel=KERN, distance=SPHERE.distance, tile=100, block_rows=64)
    plan = op.layout(3)
    assert plan.how == "sum" and len(plan) == 3
    rows = [r for part in plan.parts for r in part.tile_rows]
    assert sorted(rows) == list(range(0, 1000, 100))  # every tile row in exactly one part
    tiles = [sum(10 - r // 100 for r in part.tile_rows) for part in plan.parts]
    assert sum(tiles) == 55 and max(tiles) - min(tiles) <= 10  # dealt back and forth: near-equal shares
    assert len(op.layout(50)) == 10  # at most one part per tile row
    for stacked in (KernelOperator(x, y=x[:300], kernel=KERN, distance=SPHERE.distance, block_rows=64).layout(4),
                    op.layout(4, device=True)):
        bounds = [part.rows for part in stacked.parts]
        assert stacked.how == "stack" and bounds[0][0] == 0 and bounds[-1][1] == 1000
        assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    assert all(part.rows[0] % 64 == 0 for part in
               KernelOperator(x, y=x[:300], kernel=KERN, distance=SPHERE.distance, block_rows=64).layout(4).parts)
    with pytest.raises(InputError, match="parts"):
        KernelOperator(x, kernel=KERN, distance=SPHERE.distance, parts=0)


@pytest.mark.parametrize("zero_diagonal", [False, True])
def test_parts_give_the_product_in_one_process(zero_diagonal, rng):
    x = SPHERE.sample(700, rng=rng)
    X = rng.standard_normal((700, 3))
    C = _dense(x, zero_diagonal=zero_diagonal)
    one = KernelOperator(x, kernel=KERN, distance=SPHERE.distance, zero_diagonal=zero_diagonal, tile=128)
    ref, sums = one.matmat(X), one.row_sums()
    for parts in (2, 3, 6):
        op = KernelOperator(x, kernel=KERN, distance=SPHERE.distance, zero_diagonal=zero_diagonal, tile=128,
                            parts=parts)
        out = op.matmat(X)
        # the partial sums of the tile parts add in another order than one pass: round-off (measured 2e-16
        # relative to the largest entry), never more
        assert np.max(np.abs(out - C @ X)) <= 1e-13 * np.max(np.abs(C @ X))
        assert np.max(np.abs(out - ref)) <= 1e-14 * np.max(np.abs(ref))
        assert np.max(np.abs(op.row_sums() - sums)) <= 1e-14 * np.max(sums)
        assert op.min_score == one.min_score
        assert np.array_equal(op.matmat(X), out)  # a part plan repeats its bits
    # row parts of a non-symmetric operator are its row blocks: the bits of one pass
    y = SPHERE.sample(300, rng=rng)
    whole = KernelOperator(x, y=y, kernel=KERN, distance=SPHERE.distance, block_rows=50)
    parted = KernelOperator(x, y=y, kernel=KERN, distance=SPHERE.distance, block_rows=50, parts=5)
    Y = rng.standard_normal((300, 2))
    assert np.array_equal(parted.matmat(Y), whole.matmat(Y)) and np.array_equal(parted.row_sums(), whole.row_sums())
    np.testing.assert_allclose(parted.matmat(Y), _dense(x, y) @ Y, rtol=1e-12)


@pytest.mark.parametrize("kernel", [KERN, functools.partial(heat_kernel, eps=0.3)])
def test_row_parts_on_a_stand_in_device(kernel, rng):
    # device row parts from row r0 > 0 rotate the columns so that the kernel's i == j is the diagonal
    x = SPHERE.sample(500, rng=rng)
    X = rng.standard_normal((500, 5))
    C = _dense(x, kernel=kernel, zero_diagonal=True)
    host = KernelOperator(x, kernel=kernel, distance=SPHERE.distance, zero_diagonal=True, engine="numpy")
    host.row_sums()
    for parts in (1, 3):
        dev = KernelOperator(x, kernel=kernel, distance=SPHERE.distance, zero_diagonal=True, engine="numpy",
                             parts=parts).on(np, stand_in=STAND_IN)
        assert dev.layout().device and len(dev.layout()) == parts and "stand-in" in dev.tiles
        out = dev.matmat(X)
        assert np.max(np.abs(out - C @ X)) <= 1e-13 * np.max(np.abs(C @ X))
        np.testing.assert_allclose(dev.row_sums(), C.sum(axis=1), rtol=1e-13)
        assert dev.min_score == pytest.approx(host.min_score, rel=1e-12)
    # the rotation is what puts the zeros on the diagonal: the second part's rows launched as they are zero
    # other entries than C_ii
    r0, r1 = dev.layout().parts[1].rows
    pa = dev.plan.prepare(x)
    unrotated = dev.plan.device_product(pa[r0:r1], pa, X, tile_dtype="float64", zero_diagonal=True, _module=np,
                                        _compile=emulated_cuda)
    assert np.max(np.abs(unrotated - (C @ X)[r0:r1])) > 1e-3 * np.max(np.abs(C @ X))
    assert np.max(np.abs(dev.part_matmat(dev.layout().parts[1], X) - (C @ X)[r0:r1])) <= 1e-13 * np.max(np.abs(C @ X))


# ------------------------------------------------------------------------------------------------ cluster


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cl, \
            distributed.Client(cl) as c:
        yield c


def test_products_on_two_workers_give_the_single_process_bits(client, rng):
    """Bitwise: eigenvalues of the matrix-free spectrum, a non-symmetric product, row sums, and GPU workers
    (stand-in device) against the same parts in this process."""
    from spectral.distributed import stand_in_device, use_client

    x = SPHERE.sample(1200, rng=rng)
    here = KernelOperator(x, kernel=KERN, distance=SPHERE.distance, zero_diagonal=True, parts=4)
    local = markov_spectrum(here, 6, rng=0)
    with use_client(client, min_rows=0):
        op = KernelOperator(x, kernel=KERN, distance=SPHERE.distance, zero_diagonal=True, parts=4)
        spread = markov_spectrum(op, 6, rng=0)
        small = KernelOperator(x[:100], kernel=KERN, distance=SPHERE.distance)
    with use_client(client):  # the default keeps operators of fewer than MIN_ROWS rows here
        small.matmat(np.ones(100))
        assert small.distribution is None
    assert np.array_equal(np.asarray(spread.eigenvalues), np.asarray(local.eigenvalues))
    assert op.distribution is not None and op.distribution.products > 5 and len(op.distribution.layout) == 4
    assert "4 tile parts on a Dask cluster of 2 workers (cpu)" == op.distribution.describe()
    # the eigenvalues are right, not only repeated: the dense spectrum
    dense = markov_spectrum(_dense(x, zero_diagonal=True), 6, method="dense")
    np.testing.assert_allclose(np.asarray(spread.eigenvalues), np.asarray(dense.eigenvalues), atol=1e-9)

    # keys other than the queries: row parts, stacked (the bits of one pass, any number of parts)
    y = SPHERE.sample(400, rng=rng)
    Y = rng.standard_normal((400, 3))
    ref = KernelOperator(x, y=y, kernel=KERN, distance=SPHERE.distance, block_rows=100)
    far = KernelOperator(x, y=y, kernel=KERN, distance=SPHERE.distance, block_rows=100, client=client)
    assert np.array_equal(far.matmat(Y), ref.matmat(Y)) and np.array_equal(far.row_sums(), ref.row_sums())
    assert far.min_score == ref.min_score and len(far.distribution.layout) == 2  # one part per worker thread

    # GPU workers: each worker's device operator from the scattered host copy, row parts through device_product
    X = rng.standard_normal((1200, 4))
    on_device = KernelOperator(x, kernel=KERN, distance=SPHERE.distance, zero_diagonal=True, engine="numpy",
                               parts=3).on(np, stand_in=STAND_IN)
    with use_client(client, device=stand_in_device(*STAND_IN), min_rows=0):
        gpu = KernelOperator(x, kernel=KERN, distance=SPHERE.distance, zero_diagonal=True, engine="numpy", parts=3)
        out, sums = gpu.matmat(X), gpu.row_sums()
    assert gpu.distribution.layout.device and len(gpu.distribution.layout) == 3
    assert np.array_equal(out, on_device.matmat(X)) and np.array_equal(sums, on_device.row_sums())
    C = _dense(x, zero_diagonal=True)
    assert np.max(np.abs(out - C @ X)) <= 1e-13 * np.max(np.abs(C @ X))


class _LooksLikeAClient:
    def scatter(self): ...
    def submit(self): ...
    def gather(self): ...
    def nthreads(self): ...


def test_bad_clients_are_refused():
    from spectral.distributed import Workers, use_client

    with pytest.raises(InputError, match="dask.distributed.Client"):
        Workers(object())
    with pytest.raises(InputError, match="client must be"):
        KernelOperator(Circle().sample(10, rng=0), kernel=KERN, distance=Circle().distance,
                       client="tcp://nowhere:1").matmat(np.ones(10))
    with pytest.raises(InputError, match="device must be one of auto, cpu, gpu"):
        with use_client(_LooksLikeAClient(), device="tpu"):
            pass
    with pytest.raises(InputError, match="parts"):
        Workers(_LooksLikeAClient(), parts=0)


@pytest.mark.slow
def test_products_on_two_worker_processes_give_the_single_process_bits(rng):
    """The operator pickled to two worker processes (Numba tiles compiled there): the same eigenvalues."""
    distributed = pytest.importorskip("dask.distributed")
    from spectral.distributed import use_client

    x = SPHERE.sample(3000, rng=rng)
    local = markov_spectrum(KernelOperator(x, kernel=KERN, distance=SPHERE.distance, zero_diagonal=True, parts=6),
                            10, rng=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cl, \
            distributed.Client(cl) as c, use_client(c, parts=6, min_rows=0):
        op = KernelOperator(x, kernel=KERN, distance=SPHERE.distance, zero_diagonal=True)
        spread = markov_spectrum(op, 10, rng=1)
    assert np.array_equal(np.asarray(spread.eigenvalues), np.asarray(local.eigenvalues))
    assert len(op.distribution.layout) == 6
