"""Progress of long runs on stderr: a bar on a terminal, plain lines otherwise, nothing when quiet.

``python -m verify --all``, sweeps and figure runs wrap their loops in :func:`progress`::

    for name in progress(names, total=len(names), desc="verify", label=str):
        run(name)

When stderr is a terminal and tqdm is installed (the optional ``progress`` extra:
``pip install "attention-limits[progress]"``) this draws a bar that names the current item;
otherwise (a log file, CI, or no tqdm) it writes one plain line per finished item with its time,
``verify [3/22] fna_rate 2.1 s``, and a closing ``verify: 22 done in 77.1 s``. Standard output is
never touched, so tables and JSON printed there stay clean.

``quiet=True`` silences it. ``quiet=None`` (the default) follows :func:`silenced`: a command's
``--quiet`` wraps its work in ``with silenced(True):`` and every ``progress`` inside (a check's own
loops included) stays silent.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO, TypeVar

__all__ = ["progress", "silenced", "is_silenced"]

T = TypeVar("T")

_SILENCED = [False]


@contextlib.contextmanager
def silenced(quiet: bool = True):
    """Within the block, :func:`progress` with ``quiet=None`` writes nothing (when ``quiet`` is true).

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


def progress(iterable: Iterable[T], *, total: int | None = None, desc: str = "", quiet: bool | None = None,
             label: Callable[[T], Any] | None = None, stream: TextIO | None = None) -> Iterator[T]:
    """Yield the items of ``iterable`` while reporting their progress on stderr.

    Parameters
    ----------
    iterable : iterable
        The items to go through (checks, sweep points, figures, ...).
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

    Yields
    ------
    object
        The items of ``iterable``, unchanged and in order.
    """
    if quiet is None:
        quiet = is_silenced()
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    if quiet:
        yield from iterable
        return
    out = sys.stderr if stream is None else stream
    tqdm = _tqdm() if _is_terminal(out) else None
    if tqdm is not None:
        yield from _bar(tqdm, iterable, total, desc, label, out)
    else:
        yield from _lines(iterable, total, desc, label, out)


def _bar(tqdm, iterable, total, desc, label, out):
    bar = tqdm(iterable, total=total, desc=desc or None, file=out, leave=False, dynamic_ncols=True)
    try:
        for item in bar:
            if label is not None:
                bar.set_postfix_str(str(label(item)), refresh=True)
            yield item
    finally:
        bar.close()


def _lines(iterable, total, desc, label, out):
    start = time.perf_counter()
    head = f"{desc} " if desc else ""
    count = 0
    for count, item in enumerate(iterable, 1):
        t0 = time.perf_counter()
        yield item  # a line once the item is done: an item that raises leaves no line behind
        of = f"/{total}" if total is not None else ""
        name = f" {label(item)}" if label is not None else ""
        out.write(f"{head}[{count}{of}]{name} {time.perf_counter() - t0:.1f} s\n")
        out.flush()
    elapsed = time.perf_counter() - start
    out.write(f"{desc or 'progress'}: {count} done in {elapsed:.1f} s\n")
    out.flush()
