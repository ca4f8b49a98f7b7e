"""Files shared by several runs: an exclusive lock, and claims on units of work (one file per claimed key).

Two sweeps started on one run log (``python -m verify.sweep ... --jsonl runs.jsonl``), or two runs of a
check sharing a ``--resume`` folder, divide the work instead of both doing all of it:

* :func:`locked` holds an exclusive lock on a lock file (``fcntl.lockf``: a POSIX record lock) while a run
  reads or appends to the shared log, or claims work;
* :class:`Claims` keeps one file per claimed unit (``<folder>/<key>.claim``, holding the owner's host, process
  id and start time). A run claims what nobody holds, does it, records the result, then drops the claim;
  it waits for the units others hold and takes over a claim whose owner is gone: a process of this host that
  no longer exists, or an owner that has not refreshed its claims (they are touched every
  :data:`REFRESH` seconds while it runs) for :data:`STALE_AFTER` seconds. Ages are read against the shared
  folder's own clock (the modification time of a file touched now), not this host's.

Guarantees and limits:

* on one machine (any local file system) the lock is exclusive between processes and threads of other
  processes, claims are taken by one run each, and a killed run's claims are taken over at once (its
  process is gone);
* on a shared file system the lock is as good as its POSIX record locks: NFSv4, NFSv3 with the lock daemon
  (``lockd``; not mounts with ``-o nolock``), Lustre mounted with ``-o flock`` (``localflock`` locks within
  one node only), GPFS, CephFS and BeeGFS honour them between hosts; where locking fails (``ENOLCK``,
  ``EOPNOTSUPP``) the run continues without the lock, with one :class:`SharedFileWarning`: claims are then
  files made with ``O_CREAT | O_EXCL`` (atomic on NFSv3 and later), so two runs still do not both start a
  free unit, but a stale claim may be taken over by both (the unit is then done twice; both records are
  the same run, and the log keeps one) and appends may interleave on file systems without atomic appends;
* a run on another host that stops refreshing (suspended, partitioned) loses its claims after
  :data:`STALE_AFTER` seconds: its units may then be done twice; never lost;
* Windows: no ``fcntl``; claims by ``O_EXCL`` only, as on a file system without locks.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import threading
import time
import warnings

__all__ = ["Claims", "POLL", "POLL_MAX", "REFRESH", "STALE_AFTER", "SharedFileWarning", "locked"]

#: Seconds without a refresh after which a claim of another host is stale.
STALE_AFTER = 600.0
#: Seconds between two refreshes of a run's own claims.
REFRESH = 60.0
#: Seconds between two looks at the work other runs hold (growing by half each time up to :data:`POLL_MAX`).
POLL = 0.1
POLL_MAX = 10.0

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

_WARNED = set()
_NO_LOCK = (errno.ENOLCK, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP), errno.EINVAL)


class SharedFileWarning(UserWarning):
    """A shared file could not be locked: the run goes on with claims by ``O_EXCL`` alone."""


def _warn_once(path: str, why: str) -> None:
    if path not in _WARNED:
        _WARNED.add(path)
        warnings.warn(f"cannot lock {path} ({why}): two runs sharing it may do a unit of work twice",
                      SharedFileWarning, stacklevel=3)


# one lock per path and process: POSIX record locks belong to the process, so threads of one process
# serialise on this mutex first (else a second thread would "hold" the lock the first one holds)
_MUTEXES: dict[str, threading.RLock] = {}
_MUTEX = threading.Lock()


@contextlib.contextmanager
def locked(path):
    """Hold an exclusive lock on the file ``path`` (created if missing) for the block (see the module notes)."""
    path = os.path.abspath(os.fspath(path))
    with _MUTEX:
        mutex = _MUTEXES.setdefault(path, threading.RLock())
    with mutex:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        held = False
        try:
            if fcntl is not None:
                try:
                    fcntl.lockf(fd, fcntl.LOCK_EX)
                    held = True
                except OSError as exc:
                    if exc.errno not in _NO_LOCK:
                        raise
                    _warn_once(path, os.strerror(exc.errno))
            else:  # pragma: no cover - Windows
                _warn_once(path, "no fcntl on this system")
            yield
        finally:
            if held:
                fcntl.lockf(fd, fcntl.LOCK_UN)
            os.close(fd)


def _owner() -> dict:
    return {"host": socket.gethostname(), "pid": os.getpid(), "since": time.time()}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    except OSError:
        return True
    return True


class Claims:
    """Claims of this process on units of work named by keys, shared with other runs through ``folder``.

    Parameters
    ----------
    folder : path
        Where the claim files live (created if missing); every run sharing the work gives the same folder.
    stale_after : float
        Seconds without a refresh after which another host's claim is taken over.
    refresh : float
        Seconds between two refreshes of this process's claims (a background thread, while any is held).
    """

    def __init__(self, folder, *, stale_after: float = STALE_AFTER, refresh: float = REFRESH):
        self.folder = os.path.abspath(os.fspath(folder))
        os.makedirs(self.folder, exist_ok=True)
        self.stale_after = float(stale_after)
        self.refresh_every = float(refresh)
        self.mine: set[str] = set()
        self._lock_path = os.path.join(self.folder, ".lock")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, f"{key}.claim")

    def lock(self):
        """The folder's lock (:func:`locked`): hold it to make a check-then-claim atomic with others' records."""
        return locked(self._lock_path)

    def holder(self, key: str) -> dict | None:
        """The owner recorded in the claim on ``key`` (``host``, ``pid``, ``since``), or None when unclaimed."""
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                return json.load(fh)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {"host": "?", "pid": -1, "since": 0.0}  # being written: held

    def _now(self) -> float:
        """The shared folder's clock: the modification time of a file touched now."""
        probe = os.path.join(self.folder, ".clock")
        with open(probe, "a", encoding="utf-8"):
            pass
        os.utime(probe)
        return os.stat(probe).st_mtime

    def stale(self, key: str) -> bool:
        """True when the claim on ``key`` exists and its owner is gone (see the module notes)."""
        owner = self.holder(key)
        if owner is None or key in self.mine:
            return False
        if owner.get("host") == socket.gethostname() and isinstance(owner.get("pid"), int) and owner["pid"] > 0:
            if not _alive(owner["pid"]):
                return True
        try:
            age = self._now() - os.stat(self._path(key)).st_mtime
        except FileNotFoundError:
            return False
        return age > self.stale_after

    def arrivals(self, keys, done, free: list, *, before=None):
        """Wait for the work other runs hold: yields each key of ``keys`` as it is settled, either done by its
        holder (``done(key)`` true) or free again (its claim dropped or stale: appended to ``free``, for this
        run to do). ``before()``, if given, runs under the lock ahead of each look (to re-read a shared log).
        Looks every :data:`POLL` seconds, growing to :data:`POLL_MAX`."""
        pending, pause = list(keys), POLL
        while pending:
            left, now = [], []
            with self.lock():
                if before is not None:
                    before()
                for key in pending:
                    if done(key):
                        now.append(key)
                    elif self.holder(key) is None or self.stale(key):
                        free.append(key)
                        now.append(key)
                    else:
                        left.append(key)
            pending = left
            yield from now
            if pending:
                time.sleep(pause)
                pause = min(POLL_MAX, pause * 1.5)

    def claim(self, key: str, *, take_stale: bool = True) -> bool:
        """Claim ``key``: True when this process holds it now (it was free, stale and taken over, or already
        ours). Call under :meth:`lock` when the check that the unit is not done yet must hold too."""
        if key in self.mine:
            return True
        path = self._path(key)
        if take_stale and self.stale(key):
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(_owner(), fh)
        with self._guard:
            self.mine.add(key)
            self._start_refresh()
        return True

    def release(self, key: str) -> None:
        """Drop this process's claim on ``key`` (after its result is recorded)."""
        with self._guard:
            if key not in self.mine:
                return
            self.mine.discard(key)
        with contextlib.suppress(FileNotFoundError):
            os.remove(self._path(key))

    def release_all(self) -> None:
        """Drop every claim of this process (a run that stops before finishing its units)."""
        for key in list(self.mine):
            self.release(key)
        self._stop.set()

    def refresh(self) -> None:
        """Touch this process's claim files (they stay fresh while it runs)."""
        for key in list(self.mine):
            with contextlib.suppress(FileNotFoundError):
                os.utime(self._path(key))

    def _start_refresh(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._refresh_loop, name="claims refresh", daemon=True)
            self._thread.start()

    def _refresh_loop(self) -> None:
        while not self._stop.wait(self.refresh_every):
            if not self.mine:
                return
            self.refresh()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release_all()
