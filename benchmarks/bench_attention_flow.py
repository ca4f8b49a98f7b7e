"""Benchmark: self-attention dynamics (SA paper) -- one velocity evaluation and a fixed-step flow.

Run from the repository root::

    python benchmarks/bench_attention_flow.py --quick                 # n = 256, 1024; d = 3, 64
    python benchmarks/bench_attention_flow.py                         # n = 256, 1024, 4096; d = 3, 16, 64
    python benchmarks/bench_attention_flow.py --device gpu            # the same on a CUDA device (CuPy)

Sections (every ratio is taken within this run; toolkit and baseline calls alternate):

* ``velocity``: one evaluation of the (SA) vector field on ``n`` tokens of ``S^(d-1)``. Toolkit:
  :func:`spectral.attention_velocity` (input checks and the memory guard included). Baseline: the field
  written out below in bare NumPy (or CuPy): ``S = beta X X^T``, row softmax, ``W X``, tangent
  projection. Target: toolkit within 1.3x of the baseline.
* ``flow``: 20 projected RK4 steps (``dt = 0.05``) of the same field. Toolkit: :func:`spectral.attention_flow`
  with ``method="rk4"``. Baseline: the RK4 loop written out below with the bare field. Target: within 1.3x.

The sizes beyond the published experiments (the paper's n = 32 tokens; here up to 4096 in d = 3..64)
are the reason for the GPU path: ``--device gpu`` times both on CuPy and prints the speed-up over
the host run of the same size (run the script twice, --device cpu and gpu). Timings are noisy on a shared machine;
the load average is printed first. Plain script, never run by pytest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from _common import write_json  # noqa: E402 - benchmarks/ is on sys.path when run as a script


def _bare_field(xp, X, beta):
    """(SA) written out: softmax(beta X X^T) X, projected on the tangent spaces."""
    S = beta * (X @ X.T)
    S -= S.max(axis=1, keepdims=True)
    E = xp.exp(S)
    A = (E / E.sum(axis=1, keepdims=True)) @ X
    return A - (A * X).sum(axis=1, keepdims=True) * X


def _bare_flow(xp, X, beta, dt, steps):
    for _ in range(steps):
        k1 = _bare_field(xp, X, beta)
        k2 = _bare_field(xp, X + 0.5 * dt * k1, beta)
        k3 = _bare_field(xp, X + 0.5 * dt * k2, beta)
        k4 = _bare_field(xp, X + dt * k3, beta)
        X = X + (dt / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
        X = X / xp.sqrt((X * X).sum(axis=1, keepdims=True))
    return X


def _sync(xp):
    if xp.__name__ == "cupy":
        xp.cuda.Stream.null.synchronize()


def _time(fn, xp, repeats):
    out = []
    for _ in range(repeats):
        _sync(xp)
        t0 = time.perf_counter()
        fn()
        _sync(xp)
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main(argv=None) -> int:
    from spectral import attention_flow, attention_velocity

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 256, 1024 and d = 3, 64 only")
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--beta", type=float, default=4.0)
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args(argv)
    if args.device == "gpu":
        import cupy as xp
    else:
        xp = np
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; device {args.device}")
    sizes = (256, 1024) if args.quick else (256, 1024, 4096)
    dims = (3, 64) if args.quick else (3, 16, 64)
    rng = np.random.default_rng(0)
    rows = []
    print(f"{'section':9} {'n':>5} {'d':>3} {'toolkit s':>11} {'baseline s':>11} {'ratio':>6}  max |difference|")
    for n in sizes:
        for d in dims:
            X0 = rng.standard_normal((n, d))
            X0 /= np.linalg.norm(X0, axis=1, keepdims=True)
            X = xp.asarray(X0)
            for section in ("velocity", "flow"):
                if section == "velocity":
                    tool = lambda: attention_velocity(X, beta=args.beta)  # noqa: E731
                    base = lambda: _bare_field(xp, X, args.beta)  # noqa: E731
                else:
                    tool = lambda: attention_flow(X, beta=args.beta, times=[1.0], method="rk4",  # noqa: E731
                                                  dt=0.05).final
                    base = lambda: _bare_flow(xp, X, args.beta, 0.05, 20)  # noqa: E731
                diff = float(xp.max(xp.abs(tool() - base())))
                reps = max(1, args.repeats if n <= 1024 else args.repeats // 2)
                t_tool, t_base = [], []
                for _ in range(reps):  # alternate, so that the machine's load affects both alike
                    t_tool.append(_time(tool, xp, 1))
                    t_base.append(_time(base, xp, 1))
                row = {"section": section, "n": n, "d": d, "toolkit_s": statistics.median(t_tool),
                       "baseline_s": statistics.median(t_base), "max_difference": diff, "device": args.device}
                row["ratio"] = row["toolkit_s"] / row["baseline_s"]
                rows.append(row)
                print(f"{section:9} {n:5d} {d:3d} {row['toolkit_s']:11.4g} {row['baseline_s']:11.4g} "
                      f"{row['ratio']:6.2f}  {diff:.2g}")
    write_json(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
