"""Every deciding record of every check can fail, and is shown failing (verify.core.controls).

One test per registered check (``verify.core.claims.available_checks``: a new check is picked up when it
is in the registry): at every small setting its tests declare with ``verify.testing.measurement_fixture``
(found by importing the test modules of tests/verify), each deciding record must fail under a negative
control: the printed claim on the true measurement, or a finite alteration of the quantities. The
measurements are those of the checks' own module fixtures, made once per session
(``verify.testing.measured_once``), so this costs assessments only. The slow tier holds the default run of
every check to the same rule (records that exist only at the default setting: other tiers, sizes, paths).
"""

import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest

from verify.core import claims
from verify.core.controls import Control, alterations, controls, leaves
from verify.testing import assert_every_record_can_fail, measured_once, small_settings

NAMES = tuple(claims.available_checks())
HERE = Path(__file__).resolve().parent


def _declare_small_settings() -> None:
    """Import the test modules of tests/verify not imported yet: their measurement fixtures declare the small
    settings (pytest reuses a module imported here: it looks the name up in sys.modules first)."""
    imported = {Path(m.__file__).resolve() for m in list(sys.modules.values())
                if getattr(m, "__file__", None) and m.__file__.endswith(".py")}
    for path in sorted(HERE.glob("test_*.py")):
        if path.resolve() in imported or path.name == Path(__file__).name:
            continue
        name = f"tests.verify.{path.stem}"
        if name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


@pytest.fixture(scope="module")
def declared():
    _declare_small_settings()
    return small_settings


@pytest.mark.parametrize("name", NAMES)
def test_every_deciding_record_fails_under_a_control(name, declared):
    check = claims.load_check(name).CHECK
    settings = declared(name)
    assert settings, (f"{name}: no small setting declared; its tests must measure with "
                      f"verify.testing.measurement_fixture(CHECK, ...) at a setting whose run passes")
    for setting in settings:
        p, q = measured_once(check, **setting)
        assert_every_record_can_fail(check, q, p)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_deciding_record_of_the_default_run_fails_under_a_control(name, default_result):
    """The fuller version: the records of the default run (tiers, sizes and paths the small settings skip)."""
    check = claims.load_check(name).CHECK
    result = default_result(name)
    p = check.Params(**result.parameters)
    assert_every_record_can_fail(check, result.quantities, p)


# -- the search itself, on a check that reads its quantities in the ways the toolkit's checks do ----------------
@dataclasses.dataclass(frozen=True)
class _Fit:
    exponent: float
    errors: object  # a numpy array


@dataclasses.dataclass(frozen=True)
class _Q:
    slope: float
    tiny: float
    fits: dict
    plain: _Fit
    corrected: _Fit
    modes: tuple
    symbolic: str
    defect: object = None
    vacuous: float = 1.0


def _toy_check(vacuous: bool):
    import numpy as np

    from verify.core.check import Check
    from verify.core.params import Int

    check = Check(f"toy_controls_{int(vacuous)}", claims=(), printed="the slope is 2")

    @check.parameters
    class Params:
        n: int = Int(4, "size", low=1)

    @check.measurement
    def measure(p, ctx) -> _Q:
        fit = _Fit(1.0, np.array([0.1, 0.05, 0.025]))
        better = _Fit(1.0, np.array([0.01, 0.005, 0.0025]))
        return _Q(slope=1.0, tiny=1e-16, fits={1.2: fit}, plain=fit, corrected=better, modes=(), symbolic="0")

    @check.assertions
    def assess(q, p, rec):
        rec.close("slope", q.slope, 2.0 if p.claim == "printed" else 1.0, atol=0.01, why="a")
        rec.at_most("rounding", q.tiny, 1e-12, why="b")
        rec.close("exponent_a1.2", q.fits[1.2].exponent, 1.0, rtol=1e-9, why="c")
        rec.holds("correction_helps", float(np.max(q.corrected.errors)) < float(np.max(q.plain.errors)), why="d",
                  label="d")
        rec.equal("violations", len(q.modes), 0, why="e")
        rec.holds("identity", q.symbolic == "0", why="f", label="f")
        rec.holds("no_defect", q.defect is None, why="g", label="g")
        rec.at_most("max_error_monotone", float(np.max(np.diff(q.plain.errors))), 0.0, why="h")
        if vacuous:
            rec.at_most("vacuous", abs(q.vacuous), float(np.finfo(float).max), why="no finite number fails this")
        return "the toy holds"

    return check


def test_each_kind_of_record_is_shown_failing():
    check = _toy_check(vacuous=False)
    p = check.params()
    found = assert_every_record_can_fail(check, check.measure(p), p)
    how = {(c.record, c.mode): c for c in found.found}
    assert how["slope", "printed"].path is None  # the printed claim fails as measured: its own control
    assert how["violations", "corrected"].path == ("modes",)  # an empty set of violations gains one
    assert how["no_defect", "corrected"].path == ("defect",)  # None became a defect
    assert {record for record, _ in how} == {"slope", "rounding", "exponent_a1.2", "correction_helps", "violations",
                                            "identity", "no_defect", "max_error_monotone"}
    assert found.assessments < 200


def test_a_record_no_finite_number_fails_is_reported():
    check = _toy_check(vacuous=True)
    p = check.params()
    found = controls(check, check.measure(p), p, budget=300)  # the search is exhausted before the budget
    assert found.unfailed == ("vacuous [corrected]", "vacuous [printed]") and not found.complete
    assert "no finite alteration of the quantities makes these fail: vacuous [corrected]" in found.summary()


def test_a_small_setting_that_does_not_pass_is_reported():
    check = _toy_check(vacuous=False)
    p = check.params()
    q = dataclasses.replace(check.measure(p), slope=1.5)
    found = controls(check, q, p)
    assert found.failing_as_measured == ("slope [corrected]",) and not found.complete


def test_alterations_are_finite_and_change_the_value():
    import math

    import numpy as np

    for value in (0.0, 1e-300, -3.5, 7, np.float64(2.0), np.array([1.0, 2.0]), (1, 2), (), "0", True, None):
        seen = list(alterations(value))
        assert seen, value
        for text, altered in seen:
            assert text
            if isinstance(altered, float):
                assert math.isfinite(altered) and altered != value
            if isinstance(altered, np.ndarray):
                assert np.all(np.isfinite(altered))
    q = _Q(1.0, 0.0, {1.2: _Fit(1.0, np.zeros(2))}, _Fit(1.0, np.zeros(2)), _Fit(1.0, np.zeros(2)), (), "0")
    paths = [path for path, _ in leaves(q)]
    assert ("fits", 1.2, "exponent") in paths and ("plain",) in paths and ("modes",) in paths
    other = _Fit(2.0, np.ones(2))
    assert list(alterations(q.plain, [("q.corrected", other)])) == [("replaced by q.corrected", other)]
    control = Control("slope", "printed", ("fits", 1.2, "exponent"), "x 2")
    assert str(control) == "slope [printed]: q.fits[1.2].exponent x 2"
