"""A check's independent draws (seeds, sizes, beta values): in a loop, or as tasks on a Dask cluster; resumable.

:meth:`verify.core.check.Context.map` is how a check runs them::

    results = ctx.map(functools.partial(_one_draw, p), draws, label=str, weight=lambda d: d.n ** 2)

``fn(item)`` for every item, results in item order, with progress and the time left on stderr
(:func:`verify.core.progress.progress`). Two switches, both set around a run (the command line's
``--scheduler`` and ``--resume``, or the Python contexts):

* a Dask cluster (``with spectral.distributed.use_client(client):``): each item is one task, submitted at once,
  gathered as it finishes. A worker that dies (killed, out of memory, lost) is replaced by Dask's scheduler,
  which reruns the tasks it held; results already gathered are kept here and their futures released, so they
  are never recomputed. The tasks run with progress silenced and no cluster of their own (a kernel operator
  built inside a draw computes in its worker).
* a resume folder (``with resume_into(folder):``): each finished item is stored there at once (one file per
  item, written whole then renamed into place), and items already there are read back, not rerun, so a run
  that was stopped continues where it stopped. Runs sharing the folder (on one machine, or on a shared file
  system: :mod:`verify.core.locks`) claim items before they run them and wait for the items others hold, so
  each item runs once. An item's file name is a hash of the check, its parameters, the function, the item
  and the toolkit's version and commit: another run, or other code, never reads it. The files are Python
  pickles: read a resume folder only from runs you trust (your own).

Without either, ``map`` is a loop with progress lines.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from spectral.floor.validation import InputError, UnavailableError
from verify.core.locks import Claims
from verify.core.plain import jsonable
from verify.core.progress import FIRST_BEAT, is_silenced, progress, silenced
from verify.core.provenance import toolkit_commit, toolkit_version

__all__ = ["ResultStore", "current_store", "gather_as_completed", "resume_into", "run_items"]


_STORES: list[ResultStore] = []


class ResultStore:
    """Finished items kept in a folder (one pickle file each) and the claims of the runs sharing it."""

    def __init__(self, folder):
        folder = os.fspath(folder)
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise InputError(f"resume {folder!r} exists and is not a folder; give a folder (created if missing)")
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise InputError(f"resume {folder!r}: cannot create this folder ({exc.strerror or exc})") from None
        self.folder = os.path.abspath(folder)
        self.claims = Claims(os.path.join(self.folder, "claims"))

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, f"{key}.pkl")

    def has(self, key: str) -> bool:
        return os.path.exists(self._path(key))

    def get(self, key: str):
        with open(self._path(key), "rb") as fh:
            return pickle.load(fh)

    def put(self, key: str, value) -> None:
        tmp = f"{self._path(key)}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self._path(key))  # whole or absent, also on NFS (rename is atomic)

    def __repr__(self) -> str:
        return f"ResultStore({self.folder!r})"


@contextlib.contextmanager
def resume_into(folder):
    """Within the block, every :func:`run_items` (``Context.map``) keeps its finished items in ``folder`` and
    reads back those already there (None: no store)."""
    if folder is None:
        yield None
        return
    store = ResultStore(folder)
    _STORES.append(store)
    try:
        yield store
    finally:
        _STORES.remove(store)
        store.claims.release_all()


def current_store() -> ResultStore | None:
    """The store of the innermost :func:`resume_into`, or None."""
    return _STORES[-1] if _STORES else None


def item_key(context: Any, fn: Callable, key: Any) -> str:
    """The file name of one item: a hash of ``context`` (check, parameters), the function, the item's key and
    the toolkit's version and commit."""
    base = fn.func if isinstance(fn, functools.partial) else fn
    text = json.dumps({"context": jsonable(context), "fn": f"{base.__module__}.{base.__qualname__}",
                       "key": jsonable(key), "version": toolkit_version(), "commit": toolkit_commit()},
                      sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _quietly(fn, item):
    """``fn(item)`` on a worker: no progress lines there, no cluster of its own."""
    with silenced(True):
        return fn(item)


def run_items(fn: Callable, items: Sequence, *, desc: str, label: Callable | None = None,
              weight: Callable | None = None, keys: Sequence | None = None, context: Any = None,
              client=None, store: ResultStore | None = None, quiet: bool | None = None) -> list:
    """``[fn(item) for item in items]``, on ``client`` (a Dask client) or here, resumable in ``store``.

    Parameters
    ----------
    fn : callable
        One item's work; picklable for a cluster (a module-level function, or a ``functools.partial`` of
        one with picklable arguments).
    items : sequence
        The items, in the order of the results.
    desc, label, weight
        Progress (see :func:`verify.core.progress.progress`): what runs, an item's name, its relative cost.
    keys : sequence, optional
        An item's identity in the store (JSON-able; default the item itself).
    context : JSON-able, optional
        What else decides the results (the check's name and parameters): part of every item's file name.
    client : dask.distributed.Client, optional
        Run the items as tasks there.
    store : ResultStore, optional
        Keep finished items there and read back those already done (see the module notes).
    quiet : bool, optional
        No progress lines (default: as :func:`verify.core.progress.silenced` says).
    """
    items = list(items)
    keys = list(items) if keys is None else list(keys)
    if len(keys) != len(items):
        raise ValueError("one key per item")
    names = [item_key(context, fn, k) for k in keys] if store is not None else [None] * len(items)
    results: dict[int, Any] = {}
    todo = []
    for i, name in enumerate(names):
        if store is not None and store.has(name):
            results[i] = store.get(name)
        else:
            todo.append(i)
    quiet = is_silenced() if quiet is None else quiet
    label_of = (lambda i: label(items[i])) if label is not None else None
    weight_of = (lambda i: weight(items[i])) if weight is not None else None
    try:
        while todo:
            if client is None:  # one item claimed at a time: runs sharing the store take turns
                waiting = _loop(fn, items, todo, names, results, store, desc, label_of, weight_of, quiet)
            else:  # every item claimed, then submitted
                mine, waiting = _claim(store, names, todo)
                if mine:
                    _on_cluster(fn, items, mine, names, results, store, client, desc, label_of, quiet)
            todo = _wait(store, names, waiting, results, desc, quiet) if waiting else []
    finally:
        if store is not None:
            for i in todo:
                store.claims.release(names[i])
    return [results[i] for i in range(len(items))]


def _claim(store, names, todo):
    """(the items this run takes, those another run holds)."""
    if store is None:
        return list(todo), []
    mine, waiting = [], []
    with store.claims.lock():
        for i in todo:
            if store.has(names[i]):
                continue  # finished meanwhile: read back by _wait
            (mine if store.claims.claim(names[i]) else waiting).append(i)
    done = [i for i in todo if i not in mine and i not in waiting]
    return mine, waiting + done


def _record(store, names, results, i, value) -> None:
    results[i] = value
    if store is not None:
        store.put(names[i], value)
        with store.claims.lock():
            store.claims.release(names[i])


def _loop(fn, items, todo, names, results, store, desc, label_of, weight_of, quiet) -> list:
    """The items in a loop here, each claimed just before it runs; returns those another run holds."""
    held = []

    def claimed():
        for i in todo:
            if store is not None:
                with store.claims.lock():
                    if store.has(names[i]):
                        results[i] = store.get(names[i])
                        continue
                    if not store.claims.claim(names[i]):
                        held.append(i)
                        continue
            yield i

    total = sum(weight_of(i) for i in todo) if weight_of is not None else None
    for i in progress(claimed(), total=len(todo), desc=desc, label=label_of, weight=weight_of, total_weight=total,
                      quiet=quiet, after=FIRST_BEAT):
        _record(store, names, results, i, fn(items[i]))
    return held


def _on_cluster(fn, items, mine, names, results, store, client, desc, label_of, quiet) -> None:
    """The items as tasks on ``client``, gathered (and stored) as they finish."""
    token = f"{desc.replace(' ', '-')}-{time.time_ns()}"
    futures = {client.submit(_quietly, fn, items[i], key=f"{token}-{i}", pure=False): i for i in mine}
    gather_as_completed(futures, lambda i, result: _record(store, names, results, i, result),
                        desc=f"{desc} on dask", quiet=quiet, label=label_of, after=FIRST_BEAT)


def gather_as_completed(futures: dict, on_done: Callable, *, desc: str, quiet: bool | None = None,
                        label: Callable | None = None, after: float = 0.0) -> None:
    """``on_done(index, result)`` for each Dask future of ``futures`` (future -> index) as it completes, with
    progress (``label(index)`` names an item). Each gathered future is released at once (no other list of
    them is kept, so the cluster frees its result); on an error or an interrupt every future not yet gathered
    is cancelled. ``futures`` is emptied."""
    from dask.distributed import as_completed  # the futures came from a Dask client: dask is installed

    index = {f.key: i for f, i in futures.items()}
    done = as_completed(list(futures))
    try:
        for future in progress(done, total=len(index), desc=desc, quiet=quiet, clock="run", after=after,
                               label=(lambda f: label(index[f.key])) if label is not None else None):
            on_done(index[future.key], future.result())
            futures.pop(future, None)
            future.release()
    except BaseException:
        for future in futures:
            future.cancel()
        raise
    finally:
        futures.clear()


def _wait(store, names, waiting, results, desc, quiet):
    """Wait for the items other runs hold (progress as they arrive); returns those that became free again
    (their owner stopped or is gone), for this run to do."""
    free = []
    by_name = {names[i]: i for i in waiting}

    def done(name):
        if store.has(name):
            results[by_name[name]] = store.get(name)
            return True
        return False

    settled = store.claims.arrivals([names[i] for i in waiting], done, free)
    for _ in progress(settled, total=len(waiting), desc=f"{desc}: held by other runs", quiet=quiet,
                      after=FIRST_BEAT):
        pass
    return [by_name[name] for name in free]


def client_for_items():
    """The Dask client of an enclosing :func:`spectral.distributed.use_client`, or None."""
    module = sys.modules.get("spectral.distributed")
    workers = module.current() if module is not None else None
    return None if workers is None else workers.client


def check_scheduler(address: str | None):
    """Nothing for None; else a reachable cluster's client (``local`` or ``local:N``: a LocalCluster of N worker
    processes on this machine, one thread each) and a function that closes it."""
    if address is None:
        return None, lambda: None
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UnavailableError("--scheduler needs dask.distributed: pip install 'attention-limits[dask]'") from None
    if address == "local" or address.startswith("local:"):
        count = address.partition(":")[2]
        try:
            workers = int(count) if count else None
        except ValueError:
            raise InputError(f"--scheduler local:N takes a number of workers, got {address!r}") from None
        if workers is not None and workers < 1:
            raise InputError(f"--scheduler local:N needs N >= 1, got {address!r}")
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
        client = Client(cluster)
        if not is_silenced():
            sys.stderr.write(f"dask: {len(client.nthreads())} local workers, dashboard {client.dashboard_link}\n")

        def close():
            client.close()
            cluster.close()

        return client, close
    try:
        client = Client(address, timeout=30)
    except OSError as exc:
        raise UnavailableError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    return client, client.close
