"""Benchmark: one PDE refinement step (PDE paper eq. 23) on dense, banded and factored attention.

Run from the repository root::

    python benchmarks/bench_pde.py --quick      # dense T = 2048, banded T up to 2^15
    python benchmarks/bench_pde.py              # dense T = 4096, banded T up to 2^17

Sections (every ratio is taken within this run; toolkit and baseline calls alternate):

* ``dense``: one key-axis diffusion step ``A + r A L^T`` (cell-centred Neumann) on a dense ``T x T``
  matrix. Toolkit: :func:`spectral.evolve_attention` (input checks included; on NumPy one
  ``scipy.ndimage.correlate1d`` pass per row block). Baselines: ``scipy.ndimage.correlate1d`` with the
  weights ``[r, 1 - 2r, r]`` and ``mode="nearest"`` (the cell-centred Neumann ghost; target: toolkit
  within 1.1x of it) and the stencil written out in bare NumPy below (slices, five passes). Then
  ``--steps`` steps against as many correlate1d calls ping-ponging two preallocated buffers, and one
  step on both axes with the reaction term (no baseline; for the record). For scale, the literal dense
  product ``A + r * (A @ L.T)`` (``O(T^3)``) is timed once.
* ``banded``: one step on a ``scipy.sparse`` band of width 33 for growing T; the time per step must
  grow linearly in T (log-log slope ~1). Baseline: ``A + r * (A @ L.T)`` with a sparse ``L`` built here.
* ``factored``: one key-axis step on ``phi(Q) phi(K)^T`` with m = 64 features (acts on ``phi(K)`` only),
  for growing T.

Timings on a shared machine are noisy; the load average is printed first. Plain script, never run by pytest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
from _common import write_json  # noqa: E402 - benchmarks/ is on sys.path when run as a script

# the checkout this script lives in, not an installed copy of the toolkit
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bare_stencil(a: np.ndarray, r: float) -> np.ndarray:
    """One Neumann key-axis step written out: (1 - 2r) a_j + r (a_(j-1) + a_(j+1)), ghosts a_0, a_(T-1)."""
    out = (1.0 - 2.0 * r) * a
    out[:, 1:] += r * a[:, :-1]
    out[:, :-1] += r * a[:, 1:]
    out[:, :1] += r * a[:, :1]
    out[:, -1:] += r * a[:, -1:]
    return out


def _sparse_laplacian(T: int):
    import scipy.sparse as sp

    main = np.full(T, -2.0)
    main[[0, -1]] = -1.0
    return sp.diags_array([np.ones(T - 1), main, np.ones(T - 1)], offsets=[-1, 0, 1], format="csr")


def _band(T: int, half: int, rng):
    import scipy.sparse as sp

    offsets = list(range(-half, half + 1))
    diags = [rng.random(T - abs(o)) + 0.1 for o in offsets]
    a = sp.diags_array(diags, offsets=offsets, format="csr")
    return sp.csr_array(sp.diags_array(1.0 / np.asarray(a.sum(axis=1)).ravel()) @ a)


def _time(fn, repeats: int) -> float:
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def _alternate(fns: dict, repeats: int) -> dict:
    """Median time of each function, calls interleaved so that load affects all alike."""
    ts = {k: [] for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            ts[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in ts.items()}


def _correlate(a: np.ndarray, r: float, out=None) -> np.ndarray:
    """One Neumann key-axis step by ``scipy.ndimage.correlate1d`` (ghost ``a_(-1) = a_0``: mode "nearest")."""
    from scipy.ndimage import correlate1d

    return correlate1d(a, [r, 1.0 - 2.0 * r, r], axis=1, mode="nearest", output=out)


def _correlate_steps(a: np.ndarray, r: float, steps: int) -> np.ndarray:
    """``steps`` correlate1d steps through two preallocated buffers."""
    bufs = [np.empty_like(a), np.empty_like(a)]
    cur = a
    for i in range(steps):
        cur = _correlate(cur, r, out=bufs[i % 2])
    return cur


def dense_section(T: int, repeats: int, matmul: bool, steps: int = 4) -> dict:
    from spectral import evolve_attention

    r = 0.1
    a = np.random.default_rng(0).random((T, T))
    toolkit = evolve_attention(a, steps=1, alpha=r).attention
    diffs = {"correlate1d": float(np.max(np.abs(toolkit - _correlate(a, r)))),
             "bare_stencil": float(np.max(np.abs(toolkit - _bare_stencil(a, r))))}
    assert max(diffs.values()) < 1e-15, diffs  # round-off of three products of numbers <= 1
    t = _alternate({"toolkit": lambda: evolve_attention(a, steps=1, alpha=r),
                    "correlate1d": lambda: _correlate(a, r),
                    "bare_stencil": lambda: _bare_stencil(a, r)}, repeats)
    out = {"T": T, "toolkit_s": t["toolkit"], "correlate1d_s": t["correlate1d"], "bare_stencil_s": t["bare_stencil"],
           "ratio_correlate1d": t["toolkit"] / t["correlate1d"], "ratio_bare": t["toolkit"] / t["bare_stencil"],
           "max_abs_difference": diffs}
    many = evolve_attention(a, steps=steps, alpha=r).attention
    out["steps"] = steps
    out["steps_max_abs_difference"] = float(np.max(np.abs(many - _correlate_steps(a, r, steps))))
    t = _alternate({"toolkit": lambda: evolve_attention(a, steps=steps, alpha=r),
                    "correlate1d": lambda: _correlate_steps(a, r, steps)}, max(3, repeats // 2))
    out.update(steps_toolkit_s=t["toolkit"], steps_correlate1d_s=t["correlate1d"],
               steps_ratio_correlate1d=t["toolkit"] / t["correlate1d"])
    out["both_reaction_s"] = _time(lambda: evolve_attention(a, pde="reaction-diffusion", beta=0.02, steps=1,
                                                            alpha=r, axis="both"), max(3, repeats // 2))
    if matmul:
        lap = _sparse_laplacian(T).toarray()
        t0 = time.perf_counter()
        dense = a + r * (a @ lap.T)
        out["dense_matmul_s"] = time.perf_counter() - t0
        out["matmul_over_toolkit"] = out["dense_matmul_s"] / out["toolkit_s"]
        out["matmul_max_abs_difference"] = float(np.max(np.abs(dense - _bare_stencil(a, r))))
    return out


def banded_section(sizes, repeats: int) -> dict:
    from spectral import evolve_attention

    r = 0.1
    rng = np.random.default_rng(1)
    rows = []
    for T in sizes:
        a = _band(T, 16, rng)
        lap = _sparse_laplacian(T)
        t = _alternate({"toolkit": lambda: evolve_attention(a, steps=1, alpha=r),
                        "bare_scipy": lambda: (a + r * (a @ lap.T)).tocsr()}, repeats)
        rows.append({"T": T, "nnz": int(a.nnz), "toolkit_s": t["toolkit"], "bare_scipy_s": t["bare_scipy"],
                     "ratio": t["toolkit"] / t["bare_scipy"]})
    x = np.log([row["T"] for row in rows])
    slope = float(np.polyfit(x, np.log([row["toolkit_s"] for row in rows]), 1)[0])
    slope_base = float(np.polyfit(x, np.log([row["bare_scipy_s"] for row in rows]), 1)[0])
    big = [row for row in rows if row["T"] >= 8192] or rows
    slope_big = float(np.polyfit(np.log([row["T"] for row in big]), np.log([row["toolkit_s"] for row in big]), 1)[0])
    return {"rows": rows, "loglog_slope_toolkit": slope, "loglog_slope_bare": slope_base,
            "loglog_slope_toolkit_T_ge_8192": slope_big}


def factored_section(sizes, repeats: int, m: int = 64) -> dict:
    from spectral import FactoredAttention, evolve_attention

    rng = np.random.default_rng(2)
    rows = []
    for T in sizes:
        fa = FactoredAttention(rng.random((T, m)), rng.random((T, m)))
        rows.append({"T": T, "toolkit_s": _time(lambda: evolve_attention(fa, steps=1), repeats)})
    slope = float(np.polyfit(np.log([r["T"] for r in rows]), np.log([r["toolkit_s"] for r in rows]), 1)[0])
    return {"rows": rows, "loglog_slope": slope, "features": m}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="dense T = 2048, banded up to 2^15")
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats per measurement (median)")
    parser.add_argument("--no-matmul", action="store_true", help="skip the O(T^3) dense product")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    import scipy

    print(f"load average: {os.getloadavg()}; numpy {np.__version__}, scipy {scipy.__version__}")
    T = 2048 if args.quick else 4096
    sizes = [2 ** k for k in range(10, 16 if args.quick else 18)]
    res = {"dense": dense_section(T, args.repeats, not args.no_matmul)}
    d = res["dense"]
    print(f"dense T={T}, one key-axis step: toolkit {d['toolkit_s'] * 1e3:.1f} ms, correlate1d "
          f"{d['correlate1d_s'] * 1e3:.1f} ms, bare stencil {d['bare_stencil_s'] * 1e3:.1f} ms; toolkit / correlate1d "
          f"{d['ratio_correlate1d']:.2f} (target <= 1.1), toolkit / bare {d['ratio_bare']:.2f}; max |difference| "
          f"{max(d['max_abs_difference'].values()):.1e}")
    print(f"  {d['steps']} steps: toolkit {d['steps_toolkit_s'] * 1e3:.1f} ms, correlate1d in two buffers "
          f"{d['steps_correlate1d_s'] * 1e3:.1f} ms, ratio {d['steps_ratio_correlate1d']:.2f}; max |difference| "
          f"{d['steps_max_abs_difference']:.1e}")
    print(f"  one step on both axes with the reaction term: {d['both_reaction_s'] * 1e3:.1f} ms")
    if "dense_matmul_s" in d:
        print(f"  literal A + r (A @ L.T): {d['dense_matmul_s']:.2f} s ({d['matmul_over_toolkit']:.0f}x the toolkit), "
              f"max |difference| {d['matmul_max_abs_difference']:.1e}")
    res["banded"] = banded_section(sizes, args.repeats)
    for row in res["banded"]["rows"]:
        print(f"banded T={row['T']:>7} nnz={row['nnz']:>9}: toolkit {row['toolkit_s'] * 1e3:8.2f} ms, "
              f"bare scipy {row['bare_scipy_s'] * 1e3:8.2f} ms, ratio {row['ratio']:.2f}")
    print(f"  log-log slope of time vs T: toolkit {res['banded']['loglog_slope_toolkit']:.3f}, "
          f"bare {res['banded']['loglog_slope_bare']:.3f}; toolkit for T >= 8192: "
          f"{res['banded']['loglog_slope_toolkit_T_ge_8192']:.3f} (target ~1)")
    res["factored"] = factored_section(sizes, args.repeats)
    for row in res["factored"]["rows"]:
        print(f"factored T={row['T']:>7} m=64: {row['toolkit_s'] * 1e3:8.3f} ms")
    print(f"  log-log slope: {res['factored']['loglog_slope']:.3f}")
    write_json(args.json, res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
