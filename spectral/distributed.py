"""Kernel-operator products on a Dask cluster: the parts of a block product run as tasks on the workers.

A :class:`spectral.KernelOperator` splits its products into parts (:meth:`~spectral.KernelOperator.layout`:
tile rows of the symmetric products, or row ranges); given a ``dask.distributed`` client (its ``client=``,
or an enclosing :func:`use_client`), each product runs one task per part on the workers::

    from dask.distributed import Client
    from spectral.distributed import use_client

    with Client("tcp://scheduler:8786") as client, use_client(client):
        spec = markov_spectrum(KernelOperator(x, kernel=kern, distance=Sphere(2).distance), 10)

* the operator's points are scattered to every worker once (a host copy, :meth:`~spectral.KernelOperator.on`);
  each product scatters its block ``X`` (``(n, k)``) once, the workers fetch it from each other;
* each task evaluates its part's fused tiles against the whole point set (the same
  :meth:`~spectral.KernelOperator.part_matmat` a single process runs);
* the results are combined in a fixed order: row parts stacked on the client, the partial sums of tile
  parts added on the workers in the fixed binary tree of :func:`spectral.operators.tree_sum`. So a product,
  and every eigenvalue computed from products, has the same bits as ``KernelOperator(..., parts=P)`` in one
  process, whatever the number of workers and whichever worker runs which part (workers of the same CPU
  class and library versions: the compiled tiles and BLAS round differently on other CPUs);
* a worker that dies is replaced by Dask's scheduler, which reruns its tasks (the same bits);
* GPU workers (``device="gpu"``, e.g. a ``dask_cuda.LocalCUDACluster``: one worker per GPU) copy the points
  to their device once and run their row parts as the operator's CUDA kernel
  (:meth:`spectral.tiles.TilePlan.device_product`), the path a CuPy operator takes in one process.

Dask is optional (``pip install "attention-limits[dask]"``) and imported only when a cluster is used.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from spectral.floor.backend import from_numpy, is_cupy_array, require_device, to_numpy
from spectral.parts import ProductLayout, tree_sum
from spectral.floor.validation import InputError, UnavailableError, check_int

__all__ = ["DEVICES", "MIN_ROWS", "RemoteProducts", "Workers", "current", "remote_products", "stand_in_device", "use_client",
           "worker_operator"]

#: Where the workers evaluate their parts: ``auto`` (``gpu`` for an operator whose points are on a GPU, else
#: ``cpu``), the host tiles, or each worker's CUDA device through CuPy.
DEVICES = ("auto", "cpu", "gpu")

#: Rows below which an operator inside :func:`use_client` keeps its products in this process: measured with
#: ``benchmarks/bench_distributed.py``, a product on a cluster costs a fixed 30-45 ms (the scatter of X, one task
#: per part, the sums, the gather), the time of a whole product at n = 2000 here
MIN_ROWS = 4096

_STACK: list[Workers] = []
_TOKENS = itertools.count()


@dataclasses.dataclass(frozen=True)
class Workers:
    """A Dask client and how kernel-operator products use its workers.

    Attributes
    ----------
    client : dask.distributed.Client
        The cluster's client (made and closed by the caller).
    device : {"auto", "cpu", "gpu"} or callable
        Where each worker evaluates its parts (:data:`DEVICES`); a callable ``f(host_operator) -> operator``
        makes a worker's operator from the scattered host copy (a stand-in device in the tests).
    parts : int, optional
        Parts of each product for operators without their own ``parts``; default one per worker thread
        (read at an operator's first product and kept for its lifetime).
    min_rows : int
        Operators with fewer rows compute in this process (:data:`MIN_ROWS`: a product of milliseconds costs
        more on a cluster, whose every product pays a fixed few tens of milliseconds); an operator given the
        cluster as its own ``client`` always uses it.
    """

    client: Any
    device: Any = "auto"
    parts: int | None = None
    min_rows: int = 0

    def __post_init__(self):
        for name in ("scatter", "submit", "gather", "nthreads"):
            if not callable(getattr(self.client, name, None)):
                raise InputError(f"client must be a dask.distributed.Client, got {type(self.client).__name__}")
        if not callable(self.device) and self.device not in DEVICES:
            raise InputError(f"device must be one of {', '.join(DEVICES)} (or a callable), got {self.device!r}")
        if self.parts is not None:
            object.__setattr__(self, "parts", check_int("parts", self.parts, low=1))
        object.__setattr__(self, "min_rows", check_int("min_rows", self.min_rows, low=0))

    def threads(self) -> int:
        """Worker threads of the cluster now."""
        return int(sum(self.client.nthreads().values()))


def as_workers(client) -> Workers:
    """``client`` as :class:`Workers` (a Dask client gets the defaults)."""
    return client if isinstance(client, Workers) else Workers(client)


@contextlib.contextmanager
def use_client(client, *, device="auto", parts=None, min_rows=None):
    """Within the block, every :class:`~spectral.KernelOperator` of at least ``min_rows`` rows without a
    ``client`` of its own runs its products on ``client`` (a ``dask.distributed.Client`` or :class:`Workers`);
    yields the :class:`Workers`.

    ``device``, ``parts``, ``min_rows`` (default :data:`MIN_ROWS`): see :class:`Workers` (ignored when ``client``
    already is one). Tasks running on the workers see no enclosing cluster: an operator built inside a task
    computes in its worker.
    """
    workers = client if isinstance(client, Workers) else Workers(
        client, device=device, parts=parts, min_rows=MIN_ROWS if min_rows is None else min_rows)
    _STACK.append(workers)
    try:
        yield workers
    finally:
        _STACK.remove(workers)


def current() -> Workers | None:
    """The :class:`Workers` of the innermost enclosing :func:`use_client`, or None."""
    return _STACK[-1] if _STACK else None


# ------------------------------------------------------------------------------------------- client side


class RemoteProducts:
    """An operator's products on a cluster: its host copy scattered once, its layout, and the traffic.

    Attributes
    ----------
    workers : Workers
    device : str or callable
        Where the parts run (``auto`` resolved).
    layout : spectral.operators.ProductLayout
        The parts (fixed for the operator's lifetime).
    products : int
        Block products and row-sum passes run so far.
    scattered_bytes : int
        Bytes of the host copy of the points (sent to every worker once).
    product_bytes : int
        Bytes moved by the last product: ``X`` once to the cluster and to each worker running a part that
        did not hold it, the partial sums between workers (tile parts) and the result to the client (an
        estimate from the array sizes; the scheduler's messages are not counted).
    """

    def __init__(self, op, workers: Workers):
        self.workers = workers
        device = workers.device
        if device == "auto":
            device = "gpu" if (is_cupy_array(op.x) or op._on_device()) else "cpu"
        self.device = device
        #: workers of the cluster at the first product
        self.worker_count = len(workers.client.nthreads())
        parts = op.parts or workers.parts or workers.threads()
        self.layout: ProductLayout = op.layout(parts, device=device != "cpu")
        host = op.on(np)
        self.scattered_bytes = int(host.x.nbytes + (0 if host.symmetric else host.y.nbytes))
        self._like = op.x
        self._shape = op.shape
        self._token = f"kernel-operator-{next(_TOKENS)}"
        self._host = workers.client.scatter(host, broadcast=True, hash=False)
        self.products = 0
        self.product_bytes = 0

    def describe(self) -> str:
        """One line: the parts and the workers."""
        where = self.device if isinstance(self.device, str) else getattr(self.device, "__name__", "a stand-in")
        return (f"{len(self.layout)} {'tile' if self.layout.how == 'sum' else 'row'} parts on a Dask cluster of "
                f"{self.worker_count} workers ({where})")

    def _submit(self, fn, *args):
        client = self.workers.client
        return [client.submit(fn, self._host, part, *args, self.device, pure=False,
                              key=f"{self._token}-{fn.__name__.strip('_')}-{self.products}-{part.index}")
                for part in self.layout.parts]

    def _reduce(self, futures, add):
        client = self.workers.client
        counter = itertools.count()

        def submit_add(a, b):
            return client.submit(add, a, b, pure=False,
                                 key=f"{self._token}-sum-{self.products}-{next(counter)}")

        return tree_sum(futures, submit_add).result()

    def matmat(self, X, tile_dtype: str):
        """``C @ X`` (``X`` of shape (m, k)) from the parts on the workers, in the namespace of the points."""
        client = self.workers.client
        Xh = np.ascontiguousarray(to_numpy(X))
        n, k = self._shape[0], Xh.shape[1]
        Xf = client.scatter(Xh, hash=False)
        futures = self._submit(_part_matmat, Xf, tile_dtype)
        try:
            if self.layout.how == "sum":
                out = self._reduce(futures, _add)
                moved = Xh.nbytes * (1 + min(len(futures), len(client.nthreads()))) + 8 * n * k * len(futures)
            else:
                out = np.concatenate(client.gather(futures), axis=0) if len(futures) > 1 else futures[0].result()
                moved = Xh.nbytes * (1 + min(len(futures), len(client.nthreads()))) + 8 * n * k
        finally:
            del futures, Xf
        self.products += 1
        self.product_bytes = int(moved)
        return _like(out.astype(Xh.dtype, copy=False), self._like)

    def row_sums(self):
        """``(row sums, smallest score)`` from the parts on the workers."""
        futures = self._submit(_part_row_sums)
        try:
            if self.layout.how == "sum":
                lows = self.workers.client.gather([self.workers.client.submit(_second, f, pure=False)
                                                   for f in futures])
                sums = self._reduce([self.workers.client.submit(_first, f, pure=False) for f in futures], _add)
            else:
                results = self.workers.client.gather(futures)
                lows = [low for _, low in results]
                sums = np.concatenate([s for s, _ in results]) if len(results) > 1 else results[0][0]
        finally:
            del futures
        self.products += 1
        lows = [low for low in lows if low is not None]
        return _like(sums, self._like), (min(lows) if lows else None)


def _like(a: np.ndarray, like):
    return a if isinstance(like, np.ndarray) else from_numpy(a, like=like)


def remote_products(op) -> RemoteProducts:
    """The :class:`RemoteProducts` of ``op`` on its client (else the enclosing :func:`use_client`'s), made at
    the first product and kept on the operator (:attr:`spectral.KernelOperator.distribution`)."""
    try:
        import dask.distributed  # noqa: F401 - the optional extra, checked before anything is scattered
    except ImportError:
        raise UnavailableError("products on a Dask cluster need dask.distributed: pip install "
                               "'attention-limits[dask]'") from None
    workers = as_workers(op.client) if op.client is not None else current()
    remote = op.distribution
    if remote is None or remote.workers != workers:  # a new cluster (Workers compare their client by identity)
        remote = RemoteProducts(op, workers)
        op.distribution = remote
    return remote


# ------------------------------------------------------------------------------------------- worker side


def worker_operator(host, device):
    """The operator a worker computes with: the scattered host copy (``cpu``), its copy on the worker's
    current CUDA device (``gpu``, made once per worker), or ``device(host)`` (a callable, made once)."""
    if device == "cpu":
        return host
    cache = host.__dict__.setdefault("_worker_operators", {})
    if device == "gpu":
        try:
            cp = require_device("gpu")
        except RuntimeError as exc:
            raise UnavailableError(f"a GPU worker has no usable CUDA device: {exc}") from None
        key = ("gpu", int(cp.cuda.Device().id))
        if key not in cache:
            cache[key] = host.on(cp)
        return cache[key]
    key = ("callable", id(device))
    if key not in cache:
        cache[key] = device(host)
    return cache[key]


def _part_matmat(host, part, X, tile_dtype, device):
    op = worker_operator(host, device)
    return to_numpy(op.part_matmat(part, X, tile_dtype=tile_dtype))


def _part_row_sums(host, part, device):
    sums, low = worker_operator(host, device).part_row_sums(part)
    return to_numpy(sums), low


def _add(a, b):
    return a + b


def _first(pair):
    return pair[0]


def _second(pair):
    return pair[1]


def stand_in_device(module, compiler) -> Callable:
    """A worker device that runs the CUDA kernel's source through ``compiler`` on ``module`` (NumPy): the
    GPU workers' code path where no GPU is (tests). See :meth:`spectral.KernelOperator.on`."""
    def device(host):
        return host.on(np, stand_in=(module, compiler))

    device.__name__ = "stand-in device"
    return device
