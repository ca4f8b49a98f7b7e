"""The matrix-free spectrum of a kernel operator on a Dask cluster: the eigenvalues of one process, bit for bit.

Each block product of the operator runs as 4 parts (tile rows of the symmetric product) on the workers; the
points go to every worker once, the parts' partial sums are added in a fixed tree. The same operator with
parts=4 in this process gives the same bits, whatever the number of workers.
Run this one: python docs/examples/spectrum_on_dask.py (needs pip install "attention-limits[dask]").
"""

import functools

import numpy as np
from dask.distributed import Client, LocalCluster

from manifolds import Sphere
from spectral import KernelOperator, fna_kernel, markov_spectrum
from spectral.distributed import use_client

if __name__ == "__main__":
    sphere = Sphere(2)
    x = sphere.sample(3000, rng=0)
    kernel = functools.partial(fna_kernel, alpha=1.3, scale=0.05, dim=2)
    here = markov_spectrum(KernelOperator(x, kernel=kernel, distance=sphere.distance, parts=4), 10, rng=0)
    # min_rows=0: this small operator too (by default operators of fewer than 4096 rows stay in this process)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cluster, \
            Client(cluster) as client, use_client(client, min_rows=0):
        op = KernelOperator(x, kernel=kernel, distance=sphere.distance, parts=4)
        spread = markov_spectrum(op, 10, rng=0)
    print(f"{op.distribution.describe()}: {op.distribution.products} products, "
          f"{op.distribution.product_bytes / 2**20:.1f} MiB moved by the last one")
    print("eigenvalues 2..4:", np.asarray(spread.eigenvalues)[1:4])
    assert np.array_equal(np.asarray(spread.eigenvalues), np.asarray(here.eigenvalues))
    print("the same bits as parts=4 in one process")
