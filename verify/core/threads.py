"""One BLAS thread for a block of many small dense solves (shared by the checks that need it).

On a shared 2-core machine threaded OpenBLAS oversubscribes the cores when a check does many small
dense eigensolves: measured 75 s instead of 1.6 s for the clusters check (600 x 600 and smaller
``eigvalsh``), and 5-8 s instead of 0.3 s for one 512 x 512 ``eig`` under load. Results do not
depend on the thread count.
"""

from __future__ import annotations

import contextlib

__all__ = ["single_blas_thread"]


def single_blas_thread():
    """Context manager limiting BLAS to one thread (``threadpoolctl``; a no-op without it).

    ``threadpoolctl`` comes with scikit-learn, a dependency of the toolkit.

    Examples
    --------
    >>> import numpy as np
    >>> with single_blas_thread():
    ...     float(np.linalg.eigvalsh(np.eye(2))[0])
    1.0
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
