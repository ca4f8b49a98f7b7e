"""Regenerate the papers' figures from the checks' data.

``python -m figures`` lists every figure with one line saying what it shows.
``python -m figures NAME [NAME...] | all --out DIR [--format png,pdf] [--dpi 300] [--seed 0] [--quiet]``
draws them into DIR (created if missing) and prints the files written. The output folder, formats,
dpi and seed are checked before any figure is computed: a bad one is one line on stderr, exit 2.
A figure whose check refuses its settings or does not converge is reported in one line and the others
are still drawn (exit 2 or 1 at the end). Progress goes to stderr (``--quiet`` silences it).
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from figures import describe, registry
from figures._plotting import DEFAULT_DPI, output_options
from spectral.floor.memory import DenseMemoryError
from spectral.floor.validation import ConvergenceError, InputError, UnavailableError, check_int
from verify.core.cli import EXIT_PASS, OneLineParser, report_error
from verify.core.progress import progress, silenced
from verify.core.report import check_output_dir

PROG = "python -m figures"
FORMATS = ("png", "pdf", "svg")  # the formats figures._plotting.save writes
DPI_RANGE = (50, 1200)


def check_out_dir(path: str) -> Path:
    """The output folder ``path`` if it is, or can be made, a folder this process can write in; else InputError.

    Tried, not guessed from permission bits (:func:`verify.core.report.check_output_dir`: the missing
    folders are made, a file is written and removed, the folders made are removed again), so a
    read-only file system, ``/proc`` or a file in the way is refused before any figure is computed.
    """
    check_output_dir("--out", path)
    return Path(path)


def parse_formats(values) -> tuple[str, ...]:
    """``["png,pdf", "svg"]`` -> ``("png", "pdf", "svg")``: comma lists, repeats allowed, order kept."""
    out: list[str] = []
    for value in values or ["png,pdf"]:
        for fmt in (v.strip().lower() for v in value.split(",")):
            if fmt not in FORMATS:
                raise InputError(f"--format must be a comma list of {', '.join(FORMATS)}, got {fmt!r}")
            if fmt not in out:
                out.append(fmt)
    return tuple(out)


def _takes_seed(function) -> bool:
    return "seed" in inspect.signature(function).parameters


def _listing(reg: dict) -> str:
    if not reg:
        return "no figures installed"
    width = max(len(n) for n in reg)
    rows = [f"{name:<{width}}  {describe(fn)}" for name, fn in reg.items()]
    return "\n".join(rows + ["", f"Draw with: {PROG} NAME [NAME...] | all --out DIR [--format png,pdf] [--dpi N] "
                                 "[--seed N]"])


def main(argv=None) -> int:
    parser = OneLineParser(prog=PROG, description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="figure names, or 'all' (default: list them with a description)")
    parser.add_argument("--out", default=None, metavar="DIR", help="output folder, created if missing (required "
                                                                    "to draw)")
    parser.add_argument("--format", action="append", default=None, metavar="FMT[,FMT]",
                        help=f"file formats, a comma list of {', '.join(FORMATS)} (default png,pdf: 300-dpi PNG and "
                             "vector PDF)")
    parser.add_argument("--dpi", default=None, metavar="N",
                        help=f"PNG resolution in dots per inch, {DPI_RANGE[0]}..{DPI_RANGE[1]} (default 300)")
    parser.add_argument("--seed", default=None, metavar="N",
                        help="seed (integer >= 0) of the figures that draw random data (default 0); the others are "
                             "deterministic")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    reg = registry()
    if not ns.names:
        print(_listing(reg))
        return EXIT_PASS
    try:
        names = list(reg) if ns.names == ["all"] else list(dict.fromkeys(ns.names))
        unknown = [n for n in names if n not in reg]
        if unknown:
            raise InputError(f"unknown figure {unknown[0]!r}; available: {', '.join(reg)} (or 'all')")
        if not ns.out:
            raise InputError("--out DIR is required to draw figures")
        out = check_out_dir(ns.out)
        formats = parse_formats(ns.format)

        dpi = DEFAULT_DPI if ns.dpi is None else check_int("--dpi", _int(ns.dpi, "--dpi"), low=DPI_RANGE[0],
                                                            high=DPI_RANGE[1])
        seed = 0 if ns.seed is None else check_int("--seed", _int(ns.seed, "--seed"), low=0)
    except InputError as exc:
        return report_error(PROG, exc)
    if ns.seed is not None:
        fixed = [n for n in names if not _takes_seed(reg[n])]
        if fixed:
            sys.stderr.write(f"{PROG}: note: --seed does not change {', '.join(fixed)} (deterministic data)\n")

    status = EXIT_PASS
    with silenced(ns.quiet), output_options(dpi=dpi):
        for name in progress(names, desc="figures", label=str):
            fn = reg[name]
            try:
                paths = fn(out, formats=formats, **({"seed": seed} if _takes_seed(fn) else {}))
            except (InputError, UnavailableError, ConvergenceError, DenseMemoryError) as exc:
                status = max(status, report_error(f"{PROG} {name}", exc))
                continue
            except OSError as exc:  # the folder was writable when checked: a full disk, a file removed meanwhile
                status = max(status, report_error(f"{PROG} {name}", InputError(
                    f"cannot write to --out {ns.out!r}: {exc.strerror or exc}")))
                continue
            for path in paths:
                print(path, flush=True)
    return status


def _int(text: str, option: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(f"{option} must be an integer, got {text!r}") from None


if __name__ == "__main__":
    raise SystemExit(main())
