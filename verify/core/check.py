"""The skeleton of a check: declared parameters, a measurement, the assertions on what it measured.

A check module reads::

    CHECK = Check("metric_scaling",
                  printed="the paper's exponent q = 2 (At_(g/m^2) = m^2 At_g), which fails")

    @CHECK.parameters
    class Params:
        power: float = Real(-2.0, "Exponent q in At_(g/m^2) = m^q At_g (DRIFT section 3.2)")
        n: int = Int(3000, "Number of points", low=100, high=10**6)

    @dataclasses.dataclass(frozen=True)
    class Quantities:
        slope: float
        residuals: np.ndarray

    @CHECK.measurement
    def measure(p: Params, ctx: Context) -> Quantities:
        ...

    @CHECK.assertions
    def assess(q: Quantities, p: Params, rec: Recorder) -> str:
        rec.close("slope", q.slope, p.power, atol=TOLERANCES["slope"])
        return "the statement that was tested"

    run = CHECK.run

    def main(argv=None):
        return CHECK.main(argv)

Each parameter is declared once (:mod:`verify.core.params`); the skeleton owns ``claim`` (when the
check declares ``printed``), ``seed``, ``device`` and ``method`` (when it declares ``methods``, with
its memory hook :meth:`Check.memory`), and generates from the declarations the validation, the
signature and numpydoc of ``run()``, the command line and ``--help``, a sweep's grid validation and
the JSON description (:meth:`Check.describe`).

Measuring is apart from asserting: ``measure(p, ctx)`` returns typed quantities (what figures draw
and the JSON stores), ``assess(q, p, rec)`` makes the assertions on them. Tests measure at small
settings (:meth:`Check.measure`) and hold the assertions to stored or altered quantities
(:meth:`Check.assess`) without re-running whole checks.

Devices are explicit: ``p.device`` is the device of the run, ``ctx.xp`` the array namespace that
computes there (NumPy on ``"cpu"``, CuPy on ``"gpu"``; tests pass another one to
:meth:`Check.measure`), and the memory guards take ``device=p.device``.

Random streams: a check draws each part (tier, alpha, size) from ``child_rng(p.seed, key...)`` so
that adding a part never changes another part's samples.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import typing
from collections.abc import Callable, Mapping
from typing import Any

from spectral.floor.backend import require_device
from spectral.floor.validation import InputError, UnavailableError, check_option
from verify.core import progress
from verify.core.claims import CHECKS
from verify.core.cli import run_cli
from verify.core.implementation import ImplementationError
from verify.core.memory import choose_path
from verify.core.params import Choice, Int, Spec, spec_of, specs
from verify.core.provenance import versions
from verify.core.registry import register, registered
from verify.core.result import CheckResult, Recorder, jsonable, timed_into
from verify.core.tasks import client_for_items, current_store, run_items

__all__ = ["Check", "Context", "device_namespace", "registered"]

DEVICES = ("cpu", "gpu")
CLAIM_MODES = ("corrected", "printed")

def device_namespace(device: str):
    """The array namespace that computes on ``device`` (numpy for ``"cpu"``, CuPy for ``"gpu"``).

    Raises :class:`~spectral.floor.validation.UnavailableError` when ``"gpu"`` is asked for and CuPy or
    a CUDA device is missing.
    """
    check_option("device", device, DEVICES)
    try:
        return require_device(device)
    except RuntimeError as exc:
        raise UnavailableError(str(exc)) from None


class Context:
    """What a measurement gets besides its parameters: the array namespace, a clock, a notebook, and a way to
    run independent draws (:meth:`map`).

    Attributes
    ----------
    device : str
        The device of the run (``"cpu"`` or ``"gpu"``).
    timings : dict
        Wall-clock seconds per phase (:meth:`timed`).
    notes : list of str
        Sentences the reader needs to interpret the numbers (:meth:`note`).
    check : str
        The check's name ("" for a bare context).
    parameters : dict
        The run's parameters (JSON-able), part of the names of its stored draws.
    """

    def __init__(self, device: str = "cpu", xp=None, *, check: str = "", parameters=None):
        self.device = device
        self._xp = xp
        self.timings: dict[str, float] = {}
        self.notes: list[str] = []
        self.check = check
        self.parameters = dict(parameters or {})

    def map(self, fn: Callable, items, *, label: Callable | None = None, weight: Callable | None = None,
            key: Callable | None = None, desc: str = "") -> list:
        """``[fn(item) for item in items]``, with progress and the time left on stderr; on the Dask cluster of an
        enclosing ``spectral.distributed.use_client`` (``--scheduler``) as one task per item; kept in and read
        back from an enclosing ``resume_into`` folder (``--resume``). See :mod:`verify.core.tasks`.

        ``fn`` must be picklable for a cluster (a module-level function, or ``functools.partial`` of one, e.g.
        ``partial(_draw, p)``: no closures over ``ctx``); its results come back to this process. ``label``,
        ``weight``: an item's name and relative cost (the time left); ``key``: an item's JSON-able identity in
        the resume folder (default the item); ``desc``: what runs (default the check's name).
        """
        items = list(items)
        keys = None if key is None else [key(item) for item in items]
        return run_items(fn, items, desc=desc or self.check or "draws", label=label, weight=weight, keys=keys,
                         context={"check": self.check, "parameters": self.parameters, "device": self.device},
                         client=client_for_items(), store=current_store())

    @property
    def xp(self):
        """The array namespace of the run's device (resolved on first use: host-only checks never load CuPy)."""
        if self._xp is None:
            self._xp = device_namespace(self.device)
        return self._xp

    def timed(self, phase: str):
        """Accumulate the wall-clock seconds of ``phase`` (a context manager)."""
        return timed_into(self.timings, phase)

    def note(self, text: str) -> None:
        """A sentence the reader needs (e.g. ``"diagonal self-score dropped"``)."""
        if text not in self.notes:
            self.notes.append(text)


class Check:
    """Declaration of a check: its name, its devices and its parts; the ledger ids it covers come from the ledger.

    Parameters
    ----------
    name : str
        The check's name: ``python -m verify.<name>``.
    claims : tuple of str, optional
        Only for a check the ledger does not know (a user's own check, a test's toy): the ids it covers.
        A check of the toolkit names none: the ledger's entries name their check (``Claim(check=...)`` in
        ``verify/papers/<paper>.py``), the one place the two are linked, and :attr:`claims` reads it.
    devices : tuple of str
        Devices the measurement computes on (``("cpu",)``: host only, ``--device gpu`` is refused).
    printed : str, optional
        What ``claim="printed"`` asserts (the paper's statement as printed) when the check has that
        mode; the skeleton then owns the ``claim`` parameter.
    methods : tuple of str, optional
        The computing paths of a check with ``--method`` (``"auto"`` first); the skeleton owns the
        ``method`` parameter and resolves ``"auto"`` through :meth:`memory`.
    host_only : str
        For a host-only check whose cost grows like n^2 or faster: why it stays on the host.
    claim_modes : tuple of str
        The values of ``claim`` (``"corrected"`` first, the default); a check may add wrong
        statements beside ``"printed"`` (negative controls a user can run), described by ``claim_doc``.
    claim_doc : str, optional
        The doc of ``claim`` when ``claim_modes`` has more than the two usual modes.
    """

    def __init__(self, name: str, *, claims: tuple[str, ...] | None = None, devices=("cpu",),
                 printed: str | None = None, methods: tuple[str, ...] | None = None, host_only: str = "",
                 claim_modes: tuple[str, ...] = CLAIM_MODES, claim_doc: str = ""):
        self.name = name
        if claims is not None and name in CHECKS:
            raise ValueError(f"Check({name!r}) names its claims, but the ledger links them already "
                             f"({', '.join(CHECKS[name])}): the link is written once, in verify/papers")
        self._claims = None if claims is None else tuple(claims)
        self.devices = tuple(devices)
        for d in self.devices:
            check_option("devices", d, DEVICES)
        self.printed = printed
        self.methods = None if methods is None else tuple(methods)
        if self.methods is not None and self.methods[0] != "auto":
            raise ValueError("methods must start with 'auto'")
        self.host_only = host_only
        self.claim_modes = tuple(claim_modes)
        if self.claim_modes[0] != "corrected" or "printed" not in self.claim_modes:
            raise ValueError("claim_modes must start with 'corrected' and hold 'printed'")
        self.claim_doc = claim_doc
        self.Params = None
        self._measure: Callable | None = None
        self._assess: Callable | None = None
        self._memory: Callable | None = None
        self._run: Callable | None = None
        register(name, self)

    @property
    def claims(self) -> tuple[str, ...]:
        """The ledger ids the check decides: the entries that name it (:data:`verify.core.claims.CHECKS`)."""
        return CHECKS.get(self.name, ()) if self._claims is None else self._claims

    def __repr__(self) -> str:
        return f"Check({self.name!r}, claims={self.claims})"

    # -- declaration ------------------------------------------------------------------------------
    def parameters(self, cls):
        """Class decorator: the declared parameters become a frozen keyword-only dataclass.

        The skeleton adds its own parameters after the check's: ``claim`` (with ``printed``),
        ``method`` (with ``methods``), ``seed`` and ``device``. Every field must be declared with
        :func:`~verify.core.params.Int`, :func:`~verify.core.params.Real`, ... A method
        ``resolve(self) -> Params`` fills automatic values and checks the rules between parameters.
        """
        notes = dict(getattr(cls, "__annotations__", {}))
        own = {}
        if self.printed is not None:
            own["claim"] = Choice("corrected", self.claim_modes, self.claim_doc or
                                  f'"corrected" asserts the corrected statement; "printed" asserts {self.printed}')
        if self.methods is not None:
            own["method"] = Choice("auto", self.methods,
                                   '"auto" takes the first path that fits the memory available now; the others '
                                   "are the computing paths of this check (see its notes on memory)")
        own["seed"] = Int(0, "Root seed of every random draw (child streams per part)", low=0)
        own["device"] = Choice("cpu", DEVICES,
                               "Array device" + ("" if "gpu" in self.devices else
                                                 f"; this check runs on the host only{self._host_reason()}"))
        for key, field in own.items():
            if key in notes:
                raise TypeError(f"{self.name}: parameter {key!r} is owned by the skeleton; do not declare it")
            notes[key] = str
            setattr(cls, key, field)
        cls.__annotations__ = notes
        for key in notes:
            field = cls.__dict__.get(key)
            if not isinstance(field, dataclasses.Field) or "spec" not in field.metadata:
                raise TypeError(f"{self.name}: parameter {key!r} must be declared with Int, Real, Choice, ...")
        user_post = cls.__dict__.get("__post_init__")
        if user_post is not None:
            raise TypeError(f"{self.name}: put the rules between parameters in resolve(), not __post_init__")

        def __post_init__(obj):  # noqa: N807 - dataclass hook
            for f in dataclasses.fields(obj):
                object.__setattr__(obj, f.name, spec_of(f).validate(getattr(obj, f.name)))

        cls.__post_init__ = __post_init__
        params_type = dataclasses.dataclass(frozen=True, kw_only=True)(cls)
        self.Params = params_type
        return params_type

    def measurement(self, fn: Callable):
        """Decorator: ``measure(p, ctx) -> quantities`` (a frozen dataclass of typed fields)."""
        self._measure = fn
        return fn

    def assertions(self, fn: Callable):
        """Decorator: ``assess(q, p, rec) -> statement``: the assertions on the measured quantities."""
        self._assess = fn
        return fn

    def memory(self, fn: Callable):
        """Decorator: ``needs(p) -> {path: PathNeed}``: the memory each computing path needs.

        With ``methods``, ``"auto"`` resolves to the first path (in ``methods`` order, or the order
        of the returned mapping) whose need fits the memory available now on ``p.device``, and the
        path taken is held to its estimate before anything is allocated. Without ``methods`` every
        need returned is held to its estimate, in order (one per size option of the request).
        """
        self._memory = fn
        return fn

    @property
    def quantities_type(self):
        """The dataclass ``measure`` returns (its return annotation), for reading results back from JSON."""
        if self._measure is None:
            return None
        return typing.get_type_hints(self._measure).get("return")

    def _host_reason(self) -> str:
        return f" ({self.host_only})" if self.host_only else ""


    # -- parameters -----------------------------------------------------------------------------------
    def specs(self) -> dict[str, Spec]:
        """``name -> Spec`` of every parameter, the skeleton's included."""
        self._require_parts()
        return specs(self.Params)

    def describe(self) -> dict:
        """The check as plain JSON: name, claims, devices and every parameter's declaration."""
        return {"check": self.name, "claims": list(self.claims), "devices": list(self.devices),
                "parameters": [s.to_dict() for s in self.specs().values()]}

    def params(self, **kwargs):
        """Validated, resolved parameters (automatic values filled; ``method="auto"`` not yet resolved)."""
        self._require_parts()
        table = specs(self.Params)
        unknown = [k for k in kwargs if k not in table]
        if unknown:
            raise TypeError(f"{self.name}: unknown parameter(s) {', '.join(unknown)}; the parameters are: "
                            f"{', '.join(table)}")
        p = self.Params(**kwargs)
        if p.device not in self.devices:
            raise InputError(f"{self.name} runs on the host only{self._host_reason()}: device must be 'cpu', got "
                             f"{p.device!r}")
        resolve = getattr(p, "resolve", None)
        if resolve is not None:
            p = resolve()
            if not isinstance(p, self.Params):
                raise TypeError(f"{self.name}: resolve() must return the Params (dataclasses.replace(self, ...))")
        return p

    def choose(self, p):
        """``p`` with ``method`` resolved and the memory of the path taken checked (refused if it would not fit)."""
        if self._memory is None:
            return p

        needs = self._memory(p)
        if self.methods is None:  # every need applies, in order (a check may have several size options)
            for need in needs.values():
                need.require(device=p.device)
            return p
        method = choose_path(p.method, needs, device=p.device)
        return dataclasses.replace(p, method=method) if method != p.method else p

    # -- running ------------------------------------------------------------------------------------
    def measure(self, p, *, xp=None, ctx: Context | None = None):
        """The quantities measured with parameters ``p`` (``xp``: another array namespace, for tests)."""
        self._require_parts()
        if ctx is None:

            ctx = Context(p.device, xp, check=self.name, parameters=jsonable(_parameters(p)))
        return self._measure(p, ctx)

    def assess(self, q, p, *, timings: Mapping[str, float] | None = None, notes=()) -> CheckResult:
        """The result of the assertions on quantities ``q`` measured with parameters ``p``."""
        self._require_parts()
        rec = Recorder(params=p, check=self.name)
        statement = self._assess(q, p, rec)
        if not isinstance(statement, str) or not statement:
            raise TypeError(f"assess() of {self.name} must return the statement tested (a sentence)")
        findings = rec.finish(statement)
        return CheckResult(
            check=self.name,
            claims=self.claims,
            statement=statement,
            records=findings.records,
            parameters=_parameters(p),
            timings=dict(timings or {}),
            versions=versions(),
            notes=tuple(notes) + tuple(n for n in findings.notes if n not in notes),
            quantities=q,
            implementation=findings.implementation,
        )

    def _execute(self, **kwargs) -> CheckResult:
        p = self.choose(self.params(**kwargs))
        parameters = jsonable(_parameters(p))
        ctx = Context(p.device, check=self.name, parameters=parameters)
        try:
            with progress.watch(self.name, parameters=parameters):  # heartbeat lines on stderr past a few seconds
                q = self.measure(p, ctx=ctx)
        except InputError as exc:
            if isinstance(exc, ImplementationError):  # the user's code failed: one line, exit 2
                raise
            # the parameters were accepted (validated and resolved above), so a toolkit routine that refuses a
            # value inside the measurement refuses what the measurement produced (a NaN, an infinity): the
            # claim was not established, which is a failure of the check, never a pass
            return self._stopped(p, exc, ctx)
        return self.assess(q, p, timings=ctx.timings, notes=ctx.notes)

    def _stopped(self, p, exc: Exception, ctx: Context) -> CheckResult:
        """The result of a measurement a toolkit routine stopped: one failed record saying why."""
        rec = Recorder(params=p, check=self.name)
        rec.holds("measurement_completed", False,
                  why="every accepted parameter set must measure to the end; a toolkit routine refused a value the "
                      "measurement itself produced",
                  label=f"the measurement stopped: {' '.join(str(exc).split())}")
        findings = rec.finish(f"the measurement of {self.name} did not complete")
        return CheckResult(check=self.name, claims=self.claims, statement=findings.statement,
                           records=findings.records, parameters=_parameters(p), timings=dict(ctx.timings),
                           versions=versions(), notes=tuple(ctx.notes))

    @property
    def run(self) -> Callable[..., CheckResult]:
        """The public ``run(**params) -> CheckResult``, with the declared signature and numpydoc."""
        self._require_parts()
        if self._run is None:
            self._run = self._make_run()
        return self._run

    def _make_run(self):
        def run(**kwargs) -> CheckResult:
            return self._execute(**kwargs)

        table = specs(self.Params)
        run.__signature__ = inspect.Signature(
            [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=s.default) for name, s in table.items()],
            return_annotation=CheckResult)
        run.__doc__ = self.docstring()
        run.__name__ = run.__qualname__ = "run"
        run.__module__ = self._measure.__module__
        run.__check__ = self
        return run

    def summary(self) -> str:
        """The first line of the check module's docstring."""
        module = sys.modules.get(self._measure.__module__) if self._measure is not None else None
        doc = (module.__doc__ or "") if module is not None else ""
        return " ".join(doc.strip().split("\n\n")[0].split()) or f"The {self.name} check."

    def docstring(self) -> str:
        """numpydoc of ``run()``, generated from the declarations."""
        lines = [self.summary(), "", "Parameters", "----------"]
        for name, s in specs(self.Params).items():
            lines.append(f"{name} : {s.type_text()}")
            lines.append(f"    {s.help_text()} Default: {s.default_text()}.")
        lines += ["", "Returns", "-------", "CheckResult",
                  f"    The assertions of {self.name} ({', '.join(self.claims)}) on what it measured."]
        return "\n".join(lines)

    def main(self, argv=None) -> int:
        """The command line ``python -m verify.<name>``; returns the exit code (0, 1 or 2)."""
        return run_cli(self, argv)

    def _require_parts(self) -> None:
        missing = [what for what, part in (("parameters", self.Params), ("measurement", self._measure),
                                           ("assertions", self._assess)) if part is None]
        if missing:
            raise RuntimeError(f"check {self.name} has no {', '.join(missing)} declared yet")


def _parameters(p) -> dict[str, Any]:
    return {f.name: getattr(p, f.name) for f in dataclasses.fields(p)}
