"""What several benchmarks share: the peak resident memory of this process, the seeded point sets, and the
``--json`` output.

The benchmarks are scripts run from the repository root (``python benchmarks/bench_x.py``); Python puts
``benchmarks/`` first on ``sys.path``, so they import this module as ``_common``.
"""

from __future__ import annotations

import json

import numpy as np


def vmhwm_mb() -> float:
    """Peak resident set of this process in MiB (``VmHWM`` of ``/proc/self/status``; NaN where there is none)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def sphere_points(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` uniform random points of the unit sphere S^2 in R^3 (normalised Gaussian draws of ``rng``)."""
    x = rng.standard_normal((n, 3))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def swiss_roll(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` points of the Swiss roll in R^3: angle ``t`` uniform on [1.5 pi, 4.5 pi], height uniform on [0, 21]."""
    t = 1.5 * np.pi * (1.0 + 2.0 * rng.random(n))
    h = 21.0 * rng.random(n)
    return np.column_stack([t * np.cos(t), h, t * np.sin(t)])


def write_json(path, data, *, indent: int = 2) -> None:
    """Write ``data`` as JSON to ``path`` (a benchmark's ``--json`` file); nothing when ``path`` is empty."""
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=indent)
