"""Parameter sweeps of a check: serial by default, on a Dask cluster with ``--scheduler``.

``python -m verify.sweep weyl --grid alpha=1.0,1.2,1.5 --grid n=1000,2000 [--seeds 3]
[--scheduler ADDRESS] [--json PATH]`` runs the check at every point of the Cartesian grid (times
``--seeds`` repetitions with child seeds from ``numpy.random.SeedSequence(seed).spawn``), prints one
line per point and exits 1 if any point fails. Points are independent, so on Dask each becomes one
``dask.delayed(run)(**params)`` and the whole sweep is one ``dask.compute``; workers return
``CheckResult`` objects (host data only, never device arrays).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from verify.claims import load_check
from verify.core import EXIT_ERROR, EXIT_FAIL, EXIT_PASS, CheckResult, _OneLineParser

__all__ = ["SweepPoint", "sweep_points", "sweep", "main"]


@dataclasses.dataclass(frozen=True)
class SweepPoint:
    """One point of a sweep: the keyword arguments passed to ``run`` (seed included)."""

    params: Mapping


def sweep_points(grid: Mapping[str, Sequence], *, seeds: int = 1, seed: int = 0) -> list[SweepPoint]:
    """Cartesian product of ``grid`` times ``seeds`` repetitions with independent child seeds.

    Child seeds come from ``SeedSequence(seed).spawn(len(points))`` so that every point draws from
    its own stream whatever the execution order (SPEC 7). With ``seeds=1`` and no ``seed`` in the
    grid, each point still gets its own spawned seed.
    """
    if seeds < 1:
        raise ValueError(f"seeds must be an integer >= 1, got {seeds!r}")
    for name, values in grid.items():
        if isinstance(values, (str, bytes)) or len(values) == 0:
            raise ValueError(f"grid[{name!r}] must be a non-empty sequence of values")
    names = list(grid)
    combos = [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]
    combos = [dict(c) for c in combos for _ in range(seeds)]
    if "seed" not in grid:
        children = np.random.SeedSequence(seed).spawn(len(combos))
        for combo, child in zip(combos, children):
            combo["seed"] = int(child.generate_state(1)[0])
    return [SweepPoint(c) for c in combos]


def sweep(run: Callable[..., CheckResult], grid: Mapping[str, Sequence], *, seeds: int = 1, seed: int = 0,
          scheduler: str | None = None, progress: bool = False) -> list[CheckResult]:
    """Run ``run(**point)`` for every point of the grid; serial, or on Dask when ``scheduler`` is set.

    Parameters
    ----------
    run : callable
        A check's ``run`` function (keyword-only, returns a :class:`~verify.core.CheckResult`).
    grid : mapping
        Parameter name -> values.
    seeds, seed : int
        Repetitions per grid point and the root seed of the spawned child seeds.
    scheduler : str, optional
        ``None`` for a serial loop; a Dask scheduler address (``tcp://host:8786``) for a cluster;
        ``"threads"``, ``"processes"`` or ``"synchronous"`` for a local Dask scheduler.
    progress : bool
        Print one line per completed point (serial) or a Dask progress bar.
    """
    points = sweep_points(grid, seeds=seeds, seed=seed)
    if scheduler is None:
        results = []
        for i, point in enumerate(points, 1):
            results.append(run(**point.params))
            if progress:
                sys.stderr.write(f"[{i}/{len(points)}] {results[-1].verdict}\n")
        return results
    try:
        import dask
    except ImportError as exc:
        raise RuntimeError("scheduler needs dask: pip install 'attention-limits[dask]'") from exc
    tasks = [dask.delayed(run, pure=False)(**point.params) for point in points]
    if scheduler in ("threads", "processes", "synchronous"):
        return list(dask.compute(*tasks, scheduler=scheduler))
    from dask.distributed import Client, progress as dask_progress  # lazy: optional extra

    with Client(scheduler) as client:
        futures = client.compute(tasks)
        if progress:
            dask_progress(futures)
        return list(client.gather(futures))


def _parse_grid(items: Sequence[str]) -> dict[str, list]:
    grid: dict[str, list] = {}
    for item in items:
        name, sep, values = item.partition("=")
        if not sep or not name or not values:
            raise ValueError(f"--grid takes NAME=V1,V2,..., got {item!r}")
        parsed = []
        for text in values.split(","):
            try:
                parsed.append(json.loads(text))
            except json.JSONDecodeError:
                parsed.append(text)  # a string option such as kernel=softmax
        grid[name.replace("-", "_")] = parsed
    return grid


def main(argv=None) -> int:
    parser = _OneLineParser(prog="python -m verify.sweep", description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("check", help="check name (python -m verify lists them)")
    parser.add_argument("--grid", action="append", default=[], metavar="NAME=V1,V2", help="a swept parameter")
    parser.add_argument("--seeds", type=int, default=1, help="repetitions per point (child seeds)")
    parser.add_argument("--seed", type=int, default=0, help="root seed for the spawned child seeds")
    parser.add_argument("--scheduler", default=None, help="Dask scheduler address, or threads/processes")
    parser.add_argument("--json", metavar="PATH", default=None, help="write all results as a JSON list")
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        module = load_check(ns.check)
        grid = _parse_grid(ns.grid)
        results = sweep(module.run, grid, seeds=ns.seeds, seed=ns.seed, scheduler=ns.scheduler,
                        progress=ns.scheduler is not None)
    except (ValueError, TypeError, MemoryError, RuntimeError) as exc:
        sys.stderr.write(f"python -m verify.sweep: error: {' '.join(str(exc).split())}\n")
        return EXIT_ERROR
    for result in results:
        swept = ", ".join(f"{k}={result.parameters.get(k)}" for k in [*grid, "seed"])
        print(f"{result.verdict}  {swept}")
    if ns.json:
        with open(ns.json, "w", encoding="utf-8") as fh:
            json.dump([r.to_dict() for r in results], fh, indent=1)
    failed = sum(not r.passed for r in results)
    print(f"{len(results) - failed} passed, {failed} failed")
    return EXIT_FAIL if failed else EXIT_PASS


if __name__ == "__main__":
    raise SystemExit(main())
