"""One way to declare a check: a name, the ledger ids it covers, and a documented ``run()``.

A check module reads::

    CHECK = Check("metric_scaling", claims=("DRIFT-6",))

    @CHECK.define
    def run(*, power=2.0, n=3000, claim="corrected", seed=0, device="cpu"):
        \"\"\"One summary line.

        Parameters
        ----------
        power : float
            Claimed exponent q in At_(g/m^2) = m^q At_g (DRIFT section 3.2).
        ...
        \"\"\"
        rec = Recorder()
        ...
        return rec.finish("the statement that was tested")

    def main(argv=None):
        return CHECK.main(argv)

:meth:`Check.define` wraps the body: it binds the arguments to the signature (so the result
records every parameter, automatic values resolved through ``rec.resolve``), refuses booleans and
non-numbers for numeric options, validates ``seed`` (an integer >= 0) and ``device`` once, and
turns the body's :class:`~verify.result.Findings` into a :class:`~verify.result.CheckResult`.
The command line (``python -m verify.<name>``) is generated from the same signature and the
numpydoc ``Parameters`` section, so ``help(verify.<name>.run)`` and ``--help`` say the same.

Random streams: a check draws each part (tier, alpha, size) from ``child_rng(seed, key...)`` so
that adding a part never changes another part's samples.

Devices: a check declared with ``devices=("cpu",)`` refuses ``device="gpu"`` ("runs on the host
only"); one declared with ``devices=("cpu", "gpu")`` must create its arrays with the namespace
returned by :func:`device_namespace` and bring results back with ``to_numpy`` once. While a check's
body runs, :func:`current_device` names its device, so that the memory guard
(:func:`verify.peak_memory.require_memory`) compares the estimate with the GPU's free memory on
``device="gpu"`` without the check passing it along.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import inspect
from collections.abc import Callable

from spectral.validation import InputError, UnavailableError, check_option, check_seed
from verify.provenance import versions
from verify.result import CheckResult, Findings

__all__ = ["Check", "current_device", "device_namespace", "figure_saver"]

_DEVICES = ("cpu", "gpu")

#: the device of the check whose body is running ("cpu" outside any check, and for host-only checks)
_RUNNING_DEVICE: contextvars.ContextVar[str] = contextvars.ContextVar("verify_running_device", default="cpu")


def current_device() -> str:
    """The ``device`` of the check whose ``run()`` is executing now (``"cpu"`` outside a check)."""
    return _RUNNING_DEVICE.get()


def device_namespace(device: str):
    """The array namespace that computes on ``device`` (numpy for ``"cpu"``, CuPy for ``"gpu"``).

    Raises :class:`~spectral.validation.UnavailableError` when ``"gpu"`` is asked for and CuPy or
    a CUDA device is missing. Tests stand in a non-NumPy namespace (array-api-strict) by
    replacing this function.
    """
    from spectral.backend import require_device

    check_option("device", device, _DEVICES)
    try:
        return require_device(device)
    except RuntimeError as exc:
        raise UnavailableError(str(exc)) from None


def _is_number(value) -> bool:
    import numbers

    import numpy as np

    return isinstance(value, (numbers.Real, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _check_types(name: str, value, default) -> None:
    """Refuse a bool where a number is expected (``alpha=True`` is not 1.0), and non-numbers."""
    if isinstance(default, bool) or default is None:
        if isinstance(default, bool) and not isinstance(value, bool):
            raise InputError(f"{name} must be True or False, got {value!r}")
        return
    if _is_number(default):
        if not _is_number(value):
            raise InputError(f"{name} must be a number, got {value!r}")
        if isinstance(default, int) and not isinstance(default, bool):
            import numpy as np

            if not isinstance(value, (int, np.integer)):
                raise InputError(f"{name} must be an integer, got {value!r}")
    elif isinstance(default, tuple) and default and all(_is_number(v) for v in default):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise InputError(f"{name} must be a sequence of numbers, got {value!r}")
        if not all(_is_number(v) for v in value):
            raise InputError(f"{name} must hold numbers only (no booleans), got {value!r}")


@dataclasses.dataclass(frozen=True)
class Check:
    """Declaration of a check: its name, the ledger ids it covers and the devices it computes on."""

    name: str
    claims: tuple[str, ...]
    devices: tuple[str, ...] = ("cpu",)
    _run: list = dataclasses.field(default_factory=list, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "claims", tuple(self.claims))
        for d in self.devices:
            check_option("devices", d, _DEVICES)

    def define(self, body: Callable[..., Findings]) -> Callable[..., CheckResult]:
        """Decorator: turn the body of a check into its public ``run(**params) -> CheckResult``."""
        sig = inspect.signature(body)
        bad = [p for p in sig.parameters.values()
               if p.kind is not inspect.Parameter.KEYWORD_ONLY or p.default is inspect.Parameter.empty]
        if bad:
            raise TypeError(f"run() of {self.name} must take keyword-only parameters with defaults: {bad}")

        @functools.wraps(body)
        def run(**kwargs) -> CheckResult:
            bound = sig.bind(**kwargs)
            bound.apply_defaults()
            params = dict(bound.arguments)
            for key, value in params.items():
                _check_types(key, value, sig.parameters[key].default)
            if "seed" in params:
                check_seed(params["seed"])
            if "device" in params:
                check_option("device", params["device"], _DEVICES)
                if params["device"] not in self.devices:
                    raise InputError(f"{self.name} runs on the host only: device must be 'cpu', got "
                                     f"{params['device']!r}")
            token = _RUNNING_DEVICE.set(params.get("device", "cpu"))
            try:
                findings = body(**params)
            finally:
                _RUNNING_DEVICE.reset(token)
            if not isinstance(findings, Findings):
                raise TypeError(f"the body of {self.name} must return Recorder.finish(...), got {type(findings)}")
            return CheckResult(
                check=self.name,
                claims=self.claims,
                statement=findings.statement,
                records=findings.records,
                parameters={**params, **findings.resolved},
                timings=findings.timings,
                versions=versions(),
                arrays=findings.arrays,
                notes=findings.notes,
            )

        run.__signature__ = sig.replace(return_annotation=CheckResult)
        self._run[:] = [run]
        return run

    @property
    def run(self) -> Callable[..., CheckResult]:
        if not self._run:
            raise RuntimeError(f"check {self.name} has no run() defined yet")
        return self._run[0]

    def main(self, argv=None) -> int:
        """The command line ``python -m verify.<name>``; returns the exit code (0, 1 or 2)."""
        from verify.cli import run_cli

        return run_cli(self.run, argv, plot=functools.partial(figure_saver, self.name))


def figure_saver(name: str):
    """``save(result, path)`` for check ``name``'s figure, or None when it has none.

    The one place where ``verify`` reaches up to the ``figures`` layer, lazily and only to draw what
    a check returned: for ``--plot`` and for the report's embedded figures.
    """
    try:
        import figures  # lazy: figures draw what checks return; loaded only when a figure is asked for
    except ImportError:  # pragma: no cover - figures is part of the distribution
        return None
    if figures.check_drawer(name) is None:
        return None
    return figures.save_check_figure
