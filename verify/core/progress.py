"""Progress of long runs on stderr, with the time left: a bar on a terminal, plain lines otherwise.

Two pieces, both silenced by ``--quiet``:

* :func:`progress` wraps a loop (the checks of ``python -m verify --all``, a sweep's runs, a check's draws
  through :meth:`verify.core.check.Context.map`)::

      for name in progress(names, desc="verify", label=str, weight=cost):
          run(name)

  A check's draws (:meth:`verify.core.check.Context.map`) write nothing for their first :data:`FIRST_BEAT`
  seconds (``after=``), so a quick run stays silent. When stderr is a terminal and tqdm is installed (the optional ``progress`` extra:
  ``pip install "attention-limits[progress]"``) this draws a bar that names the current item and its time
  left; otherwise (a log file, CI, or no tqdm) one plain line per finished item with its time and the time
  left, ``verify [3/22] fna_rate 2.1 s, about 40 s left``, and a closing ``verify: 22 done in 77.1 s``. The
  time left is the time so far per unit of ``weight`` (default 1 per item) times the weight still to come.

* :func:`watch` is the check skeleton's heartbeat (:meth:`verify.core.check.Check.run` wraps every
  measurement in it): once a run has taken :data:`FIRST_BEAT` seconds it writes a line every
  :data:`BEAT_EVERY` seconds, ``sa_clustering: 1 min 40 s so far; draws [3/18] d=3 running 20 s; about 9 min
  left``. The time left comes from the innermost :func:`progress` loop running inside it; a check with no
  such loop gets the duration of its last run with the same parameters (kept in :func:`durations_path`),
  or says it does not know. So every check that takes more than a few seconds reports, without code of its
  own; a loop only adds the finer estimate.

Standard output is never touched, so tables and JSON printed there stay clean. ``quiet=True`` silences one
call; ``quiet=None`` (the default) follows :func:`silenced`: a command's ``--quiet`` wraps its work in
``with silenced(True):`` and every ``progress`` and ``watch`` inside stays silent.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO, TypeVar

__all__ = ["BEAT_EVERY", "FIRST_BEAT", "durations_path", "format_seconds", "is_silenced", "progress", "silenced",
           "watch"]

T = TypeVar("T")

#: Seconds before a run's first heartbeat line, then between two (a loop's own lines reset the clock).
FIRST_BEAT = 5.0
BEAT_EVERY = 30.0
#: Environment variable naming the file of remembered durations ("off": remember none).
DURATIONS_VARIABLE = "ATTENTION_LIMITS_DURATIONS"

_SILENCED = [False]
_WRITE = threading.Lock()


@contextlib.contextmanager
def silenced(quiet: bool = True):
    """Within the block, :func:`progress` and :func:`watch` with ``quiet=None`` write nothing (when ``quiet``
    is true).

    ``silenced(False)`` leaves the current setting as it is, so a command can always write
    ``with silenced(ns.quiet):``.
    """
    previous = _SILENCED[0]
    _SILENCED[0] = previous or bool(quiet)
    try:
        yield
    finally:
        _SILENCED[0] = previous


def is_silenced() -> bool:
    """Whether progress is currently silenced by an enclosing :func:`silenced`."""
    return _SILENCED[0]


def format_seconds(seconds: float) -> str:
    """``8.2 s``, ``1 min 40 s``, ``2 h 05 min``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        m, s = divmod(int(round(seconds)), 60)
        return f"{m} min {s:02d} s" if m < 10 else f"{m} min"
    h, m = divmod(int(round(seconds / 60)), 60)
    return f"{h} h {m:02d} min"


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except (ValueError, OSError):  # a closed stream
        return False


def _tqdm():
    try:
        from tqdm import tqdm  # optional dependency (extra "progress")
    except ImportError:
        return None
    return tqdm


# ------------------------------------------------------------------------------------------ loops


@dataclasses.dataclass
class _Loop:
    """A running :func:`progress` loop, as the heartbeat reads it."""

    desc: str
    total: int | None
    total_weight: float | None
    start: float = dataclasses.field(default_factory=time.perf_counter)
    count: int = 0
    done_weight: float = 0.0
    done_time: float = 0.0
    item_start: float = dataclasses.field(default_factory=time.perf_counter)
    item_label: str = ""
    #: when the loop last wrote a line (0: never); a bar on a terminal shows itself (``bar``)
    last_line: float = 0.0
    bar: Any = None

    def left(self, now: float) -> float | None:
        """Seconds left (the running item's time so far credited), or None before the first item is done."""
        if self.total_weight is None or self.done_weight <= 0:
            return None
        rate = self.done_time / self.done_weight
        return max(0.0, (self.total_weight - self.done_weight) * rate - (now - self.item_start))

    def status(self, now: float) -> str:
        of = f"/{self.total}" if self.total is not None else ""
        name = f" {self.item_label}" if self.item_label else ""
        return f"{self.desc} [{self.count + 1}{of}]{name} running {format_seconds(now - self.item_start)}"


_LOOPS: list[_Loop] = []


def progress(iterable: Iterable[T], *, total: int | None = None, desc: str = "", quiet: bool | None = None,
             label: Callable[[T], Any] | None = None, stream: TextIO | None = None,
             weight: Callable[[T], float] | None = None, clock: str = "item", after: float = 0.0,
             total_weight: float | None = None) -> Iterator[T]:
    """Yield the items of ``iterable`` while reporting their progress and the time left on stderr.

    Parameters
    ----------
    iterable : iterable
        The items to go through (checks, sweep points, draws, figures, ...).
    total : int, optional
        Number of items; taken from ``len(iterable)`` when it has one.
    desc : str
        What is running, e.g. ``"verify"`` or ``"sweep weyl"``; starts every line.
    quiet : bool, optional
        True: write nothing. None (default): silent inside ``with silenced(True):``.
    label : callable, optional
        ``label(item)`` names the item in the bar or line (default: no name, only the count).
    stream : file, optional
        Where to write (default: ``sys.stderr`` at the time of the call).
    weight : callable, optional
        ``weight(item)``: the item's expected cost relative to the others (e.g. ``n**2`` for a draw of n
        points), for the time left; needs a sized ``iterable``. Default: every item costs the same.
    clock : {"item", "run"}
        What a line's time is: the item's own (a loop that does the items), or the time since the loop began
        (items finishing elsewhere, e.g. tasks on a cluster gathered as they complete).
    total_weight : float, optional
        The weight of all the items, for an ``iterable`` without a length (then ``weight`` weighs each item as
        it is done).
    after : float
        Seconds the loop runs before it writes anything (a check's draws: :data:`FIRST_BEAT`, so that a run of a
        second stays silent); the first line then counts the items done so far.

    Yields
    ------
    object
        The items of ``iterable``, unchanged and in order.
    """
    if quiet is None:
        quiet = is_silenced()
    weights = None
    if weight is not None and hasattr(iterable, "__len__"):
        iterable = list(iterable)
        weights = [float(weight(item)) for item in iterable]
    elif weight is not None and total_weight is not None:
        weights = _Weigh(weight)
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    if quiet:
        yield from iterable
        return
    if total_weight is None:
        total_weight = sum(weights) if isinstance(weights, list) else (float(total) if total is not None else None)
    loop = _Loop(desc, total, total_weight)
    out = sys.stderr if stream is None else stream
    tqdm = _tqdm() if _is_terminal(out) else None
    _LOOPS.append(loop)
    try:
        if tqdm is not None:
            yield from _bar(tqdm, iterable, loop, weights, label, out, after)
        else:
            yield from _lines(iterable, loop, weights, label, out, clock, after)
    finally:
        _LOOPS.remove(loop)


class _Weigh:
    """Weights of the items of an iterable without a length, taken as they come (``weights[index]``)."""

    def __init__(self, weight):
        self.weight, self.items = weight, {}

    def note(self, index, item):
        self.items[index] = float(self.weight(item))

    def __getitem__(self, index):
        return self.items[index]


def _finish_item(loop: _Loop, weights, index: int, now: float) -> None:
    loop.count += 1
    loop.done_weight += weights[index] if weights is not None else 1.0
    loop.done_time = now - loop.start
    loop.item_start = now


def _bar(tqdm, iterable, loop, weights, label, out, after=0.0):
    fmt = "{desc}: {percentage:3.0f}%|{bar}| " + ("{n:.0f}/{total:.0f} " if weights is None else "") + \
          "[{elapsed}<{remaining}]{postfix}"
    bar = tqdm(total=loop.total_weight, desc=loop.desc or None, file=out, leave=False, dynamic_ncols=True,
               bar_format=fmt, delay=after)
    loop.bar = bar
    try:
        for index, item in enumerate(iterable):
            if isinstance(weights, _Weigh):
                weights.note(index, item)
            loop.item_label = str(label(item)) if label is not None else ""
            if label is not None:
                bar.set_postfix_str(loop.item_label, refresh=True)
            yield item
            _finish_item(loop, weights, index, time.perf_counter())
            bar.update(weights[index] if weights is not None else 1)
    finally:
        bar.close()


def _lines(iterable, loop, weights, label, out, clock="item", after=0.0):
    head = f"{loop.desc} " if loop.desc else ""
    wrote = False
    for index, item in enumerate(iterable):
        t0 = time.perf_counter()
        if isinstance(weights, _Weigh):
            weights.note(index, item)
        loop.item_label = str(label(item)) if label is not None else ""
        yield item  # a line once the item is done: an item that raises leaves no line behind
        now = time.perf_counter()
        _finish_item(loop, weights, index, now)
        of = f"/{loop.total}" if loop.total is not None else ""
        name = f" {loop.item_label}" if loop.item_label else ""
        left = loop.left(now)
        tail = f", about {format_seconds(left)} left" if left is not None and loop.count != loop.total else ""
        if now - loop.start < after:
            continue
        took = f"{now - t0:.1f} s" if clock == "item" else f"at {format_seconds(now - loop.start)}"
        _write(out, f"{head}[{loop.count}{of}]{name} {took}{tail}\n")
        loop.last_line, wrote = now, True
    if wrote or after <= 0:
        _write(out, f"{loop.desc or 'progress'}: {loop.count} done in {time.perf_counter() - loop.start:.1f} s\n")


def _write(out: TextIO, text: str) -> None:
    with _WRITE:
        out.write(text)
        out.flush()


# -------------------------------------------------------------------------------------- heartbeat


def durations_path() -> str | None:
    """The file of remembered run durations: ``$ATTENTION_LIMITS_DURATIONS``, else
    ``$XDG_CACHE_HOME/attention-limits/durations.json`` (``~/.cache`` by default); None when the variable is
    ``off``."""
    path = os.environ.get(DURATIONS_VARIABLE, "").strip()
    if path.lower() == "off":
        return None
    if path:
        return path
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "attention-limits", "durations.json")


def _run_key(name: str, parameters: Any) -> str:
    text = json.dumps(parameters, sort_keys=True, default=repr)
    return f"{name}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def _remembered(key: str) -> float | None:
    path = durations_path()
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            value = json.load(fh).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, (int, float)) else None


def _remember(key: str, seconds: float) -> None:
    """Keep the duration of a run that reported (best effort: a cache that cannot be written is skipped)."""
    path = durations_path()
    if path is None:
        return
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        try:
            with open(path, encoding="utf-8") as fh:
                table = json.load(fh)
            table = table if isinstance(table, dict) else {}
        except (OSError, ValueError):
            table = {}
        table[key] = round(seconds, 3)
        if len(table) > 2000:  # the oldest entries go first (insertion order)
            table = dict(list(table.items())[-2000:])
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(table, fh)
        os.replace(tmp, path)
    except OSError:
        pass


class _Heartbeat:
    def __init__(self, desc, key, out, first, every):
        self.desc, self.key, self.out, self.first, self.every = desc, key, out, first, every
        self.start = time.perf_counter()
        self.depth = len(_LOOPS)  # loops entered inside this run are deeper
        self.stop = threading.Event()
        self.beats = 0
        self.previous = _remembered(key) if key is not None else None
        self.thread = threading.Thread(target=self._run, name=f"heartbeat {desc}", daemon=True)

    def _run(self):
        last = self.start
        while True:
            inner = _LOOPS[self.depth:]
            if any(loop.bar is not None for loop in inner):  # a bar on the terminal: keep its clock moving
                if self.stop.wait(1.0):
                    return
                for loop in inner:
                    if loop.bar is not None:
                        loop.bar.refresh()
                continue
            threshold = self.first if self.beats == 0 else self.every
            wrote = max([last] + [loop.last_line for loop in inner])  # a loop's own line counts as a beat
            wait = threshold - (time.perf_counter() - wrote)
            if wait > 0:
                if self.stop.wait(wait):
                    return
                continue
            last = time.perf_counter()
            self.beat(last, _LOOPS[self.depth:])

    def beat(self, now, inner) -> None:
        parts = [f"{self.desc}: {format_seconds(now - self.start)} so far"]
        loop = inner[-1] if inner else None
        if loop is not None:
            parts.append(loop.status(now))
        left = next((lp.left(now) for lp in reversed(inner) if lp.left(now) is not None), None)
        if left is not None:
            parts.append(f"about {format_seconds(left)} left")
        elif self.previous is not None and now - self.start < self.previous:
            parts.append(f"about {format_seconds(self.previous - (now - self.start))} left (the last run with these "
                         f"parameters took {format_seconds(self.previous)})")
        elif self.previous is not None:
            parts.append(f"longer than the last run with these parameters ({format_seconds(self.previous)})")
        else:
            parts.append("time left unknown until a step finishes" if loop is not None else
                         "time left unknown (no earlier run with these parameters)")
        self.beats += 1
        _write(self.out, "; ".join(parts) + "\n")


@contextlib.contextmanager
def watch(desc: str, *, parameters: Any = None, quiet: bool | None = None, stream: TextIO | None = None,
          first: float = FIRST_BEAT, every: float = BEAT_EVERY):
    """Heartbeat lines on stderr while the block runs longer than ``first`` seconds (see the module notes).

    ``parameters`` (JSON-able): the run's parameters; with them the run's duration is remembered (runs longer
    than ``first``) and the next run with the same parameters states its time left from it.
    """
    if quiet is None:
        quiet = is_silenced()
    if quiet:
        yield
        return
    key = _run_key(desc, parameters) if parameters is not None else None
    beat = _Heartbeat(desc, key, sys.stderr if stream is None else stream, first, every)
    beat.thread.start()
    ok = False
    try:
        yield beat
        ok = True
    finally:
        beat.stop.set()
        beat.thread.join()
        elapsed = time.perf_counter() - beat.start
        if ok and key is not None and elapsed >= first:
            _remember(key, elapsed)
