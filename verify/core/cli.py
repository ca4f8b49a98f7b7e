"""The command line of every check, generated from its parameter declarations.

Each declared parameter ``name`` (:mod:`verify.core.params`) becomes ``--name`` (underscores also
accepted as dashes), typed by its kind (bool -> bare flag or true/false, int, float, str with its
choices, tuples comma-separated; ``auto``/``none`` for an automatic value), with the declaration's
doc, constraint, unit and default as its help. The declarations themselves validate the values
(one wording for every check). Exit codes: 0 the claim held, 1 it failed (or a numerical method did
not converge), 2 bad input or environment (one line on stderr, no traceback). Anything else is a
bug and shows its traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import tempfile
import sys
from collections.abc import Callable
from typing import Any

from spectral import distributed
from spectral.floor.memory import DenseMemoryError
from spectral.floor.validation import ConvergenceError, InputError, UnavailableError
from verify.core.drawing import figure_formats, figure_saver
from verify.core.progress import silenced
from verify.core.tasks import check_scheduler, resume_into

__all__ = ["EXIT_PASS", "EXIT_FAIL", "EXIT_ERROR", "OneLineParser", "parse_parameters", "build_check_parser",
           "add_spec_argument", "add_execution_options", "execution", "check_output_path", "check_output_file",
           "check_output_dir", "check_plot_path", "report_error", "run_cli", "parse_int", "parse_float"]

EXIT_PASS, EXIT_FAIL, EXIT_ERROR = 0, 1, 2

#: Exceptions that are the user's input or environment, not a bug: one line, exit 2.
USER_ERRORS = (InputError, UnavailableError, DenseMemoryError)


class OneLineParser(argparse.ArgumentParser):
    """argparse with usage errors reported as one line on stderr (exit 2, no usage dump)."""

    def error(self, message):  # noqa: D401 - argparse API
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}\n")


def parse_parameters(doc: str | None) -> dict[str, tuple[str, str]]:
    """``name -> (type, description)`` from the ``Parameters`` section of a numpydoc docstring."""
    if not doc:
        return {}
    lines = inspect.cleandoc(doc).splitlines()
    out: dict[str, tuple[str, str]] = {}
    try:
        start = next(i for i, line in enumerate(lines[:-1])
                     if line.strip() == "Parameters" and set(lines[i + 1].strip()) == {"-"})
    except StopIteration:
        return {}
    names: list[str] = []
    kind, text = "", []

    def flush():
        for n in names:
            out[n] = (kind, " ".join(text))

    for line in lines[start + 2:]:
        if line and not line.startswith(" "):
            if set(line.strip()) == {"-"}:  # underline of the next section: its title is no parameter
                names = []
                break
            flush()
            head, _, kind = line.partition(":")
            names, kind, text = [p.strip() for p in head.split(",") if p.strip()], kind.strip(), []
            continue
        if names and line.strip():
            text.append(line.strip())
    flush()
    return out


def _parse_bool(text: str) -> bool:
    low = text.lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true/false, got {text!r}")


def parse_int(text: str) -> int:
    """An integer, also written as ``1e3`` or ``2000.0`` when the value is an exact integer."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not value.is_integer() or abs(value) > 2**63:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(value)


def parse_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _parse_optional(parse):
    def parser(text: str):
        if text.lower() in ("none", "auto"):
            return None
        return parse(text)

    return parser


def _parse_tuple(parse, name):
    def parser(text: str):
        parts = [p for p in text.replace(",", " ").split() if p]
        try:
            return tuple(parse(p) for p in parts)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {name} values, got {text!r}") from None

    return parser


_SCALARS = {"int": (parse_int, "integer"), "float": (parse_float, "number"), "str": (str, "string")}


def add_spec_argument(parser, spec) -> None:
    """One option ``--name`` for a declared parameter (:class:`verify.core.params.Spec`)."""
    name = spec.name
    opts = ["--" + name.replace("_", "-")] + (["--" + name] if "_" in name else [])
    helptext = f"{spec.help_text()} Default: {spec.default_text()}.".replace("%", "%%")
    kwargs: dict[str, Any] = {"dest": name, "default": spec.default, "help": helptext}
    if spec.kind == "bool":  # "--full" alone means true; "--full false" is accepted too
        kwargs.update(type=_parse_bool, nargs="?", const=True, metavar="{true,false}")
    elif spec.kind in ("ints", "floats", "strs"):
        parse, what = _SCALARS[{"ints": "int", "floats": "float", "strs": "str"}[spec.kind]]
        kwargs.update(type=_parse_optional(_parse_tuple(parse, what)) if spec.default is None
                      else _parse_tuple(parse, what), metavar="A,B")
    else:
        parse, _ = _SCALARS[spec.kind]
        kwargs["type"] = _parse_optional(parse) if spec.default is None else parse
        if spec.choices is not None:
            kwargs["choices"] = spec.choices
    parser.add_argument(*opts, **kwargs)


def build_check_parser(check, *, prog: str) -> argparse.ArgumentParser:
    """argparse parser of a declared check: one option per declared parameter, then the output options."""
    parser = OneLineParser(prog=prog, description=check.summary())
    for spec in check.specs().values():
        add_spec_argument(parser, spec)
    add_execution_options(parser)
    _output_options(parser)
    return parser


def add_execution_options(parser) -> None:
    """``--scheduler`` and ``--resume``: where the work runs and where finished draws are kept."""
    run = parser.add_argument_group("execution")
    run.add_argument("--scheduler", metavar="ADDRESS", default=None,
                     help="run the independent draws as tasks, and the kernel-operator products in parts, on a Dask "
                          "cluster: a scheduler address (tcp://host:8786), or local[:N] for N worker processes on "
                          "this machine (needs the dask extra)")
    run.add_argument("--resume", metavar="DIR", default=None,
                     help="keep every finished draw in DIR and read back those already there: a stopped run "
                          "continues where it stopped, and runs sharing DIR divide the draws")


def execution(ns):
    """The context of ``--scheduler`` and ``--resume`` (``ns`` from a parser with :func:`add_execution_options`)."""
    stack = contextlib.ExitStack()
    try:
        stack.enter_context(resume_into(ns.resume))
        client, close = check_scheduler(ns.scheduler)
        stack.callback(close)
        if client is not None:
            stack.enter_context(distributed.use_client(client))
    except BaseException:
        stack.close()
        raise
    return stack


def _output_options(parser) -> None:
    out = parser.add_argument_group("output")
    out.add_argument("--json", metavar="PATH", default=None, help="write the full result as JSON to PATH")
    out.add_argument("--plot", metavar="PATH", default=None,
                     help="save the check's figure to PATH (.png, .pdf or .svg; needs matplotlib)")
    out.add_argument("--quiet", action="store_true", help="print only the final PASS/FAIL line")


def check_plot_path(path: str | None) -> None:
    """Refuse a ``--plot`` path whose format is not one a figure is saved in, before any work."""
    if path is None:
        return
    check_output_path("--plot", path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in figure_formats():
        raise InputError(f"--plot {path!r}: the format is taken from the suffix, one of "
                         f"{', '.join(figure_formats())}; got {suffix or 'no suffix'!r}")


def check_output_dir(option: str, path: str | os.PathLike | None) -> None:
    """Refuse an output folder that cannot be created or written, before any work (InputError).

    The folder is tried, not guessed from permission bits (which do not tell a read-only file system
    or ``/proc`` apart, and which root ignores): the missing folders are made, a file is written in the
    folder and removed, and the folders made are removed again.
    """
    if path is None:
        return
    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise InputError(f"{option} {path!r} exists and is not a folder; give a folder (it is created if missing)")
    head, missing = os.path.abspath(path), []
    while not os.path.exists(head):
        missing.append(head)
        head = os.path.dirname(head)
    if not os.path.isdir(head):
        raise InputError(f"{option} {path!r}: {head!r} is not a folder, so no folder can be made inside it")
    made: list[str] = []
    try:
        for folder in reversed(missing):
            try:
                os.mkdir(folder)
            except OSError as exc:
                raise InputError(f"{option} {path!r}: cannot create the folder {folder!r} "
                                 f"({exc.strerror or exc})") from None
            made.append(folder)
        try:
            fd, probe = tempfile.mkstemp(dir=path, prefix=".write-test-")
            os.close(fd)
            os.remove(probe)
        except OSError as exc:
            raise InputError(f"{option} {path!r}: cannot write in this folder ({exc.strerror or exc})") from None
    finally:
        for folder in reversed(made):
            try:
                os.rmdir(folder)
            except OSError:
                pass


def check_output_file(option: str, path: str | os.PathLike | None) -> None:
    """Refuse an output file that cannot be written, before any work (InputError).

    Its folder must exist; the file is opened for appending (which changes nothing in a file that
    exists) and removed again if it did not exist.
    """
    if path is None:
        return
    path = os.fspath(path)
    if os.path.isdir(path):
        raise InputError(f"{option} {path!r} is a folder; give a file path")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"{option} {path!r}: folder {folder!r} does not exist")
    existed = os.path.exists(path)
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise InputError(f"{option} {path!r}: cannot write this file ({exc.strerror or exc})") from None
    if not existed:
        os.remove(path)


#: the name the checks' command line uses for an output file
check_output_path = check_output_file


def report_error(prog: str, exc: BaseException) -> int:
    """One line on stderr for a user error (exit 2) or a numerical failure (exit 1)."""
    message = " ".join(str(exc).split())
    if isinstance(exc, ConvergenceError):
        sys.stderr.write(f"{prog}: did not converge: {message}\n")
        return EXIT_FAIL
    label = {InputError: "error", UnavailableError: "unavailable", DenseMemoryError: "memory"}
    kind = next((v for k, v in label.items() if isinstance(exc, k)), "error")
    sys.stderr.write(f"{prog}: {kind}: {message}\n")
    return EXIT_ERROR


def run_cli(check, argv=None, *, plot: Callable | None = None, prog: str | None = None) -> int:
    """Parse ``argv``, run the declared ``check``, print the table and the final line; return the exit code.

    The options come from the check's parameter declarations and its figure from
    :mod:`verify.core.drawing`. ``plot()`` is called only when ``--plot`` is given and returns the
    drawer ``draw(result, path)`` or None; with None, ``--plot`` is refused before the check runs.
    """
    prog = prog or f"python -m verify.{check.name}"
    parser = build_check_parser(check, prog=prog)
    plot = (lambda: figure_saver(check.name)) if plot is None else plot
    run = check.run
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return int(exc.code or 0)
    kwargs = {k: v for k, v in vars(ns).items() if k not in ("json", "plot", "quiet", "scheduler", "resume")}
    try:
        check_output_path("--json", ns.json)
        check_plot_path(ns.plot)
        draw = (plot() if plot is not None else None) if ns.plot else None
        if ns.plot and draw is None:
            raise InputError("--plot: this check has no figure")
        with silenced(ns.quiet), execution(ns):  # --quiet also silences progress inside the check
            result = run(**kwargs)
    except (*USER_ERRORS, ConvergenceError) as exc:
        return report_error(prog, exc)
    if not ns.quiet:
        print(result.summary())
    print(result.final_line())
    try:
        if ns.json:
            result.to_json(ns.json)
        if draw is not None:
            draw(result, ns.plot)
    except OSError as exc:
        return report_error(prog, InputError(str(exc)))
    return EXIT_PASS if result.passed else EXIT_FAIL
