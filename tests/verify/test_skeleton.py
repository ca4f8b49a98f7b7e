"""verify.core.params, verify.core.quantities and verify.core.check: the declared skeleton of a check."""

import dataclasses
import json

import numpy as np
import pytest

from spectral.floor.validation import InputError
from verify.core.check import Check, Context
from verify.core.params import Choice, Flag, Int, Ints, Options, Real, Reals, Spec, Text, describe, validate_value
from verify.core.quantities import from_plain, to_plain


# ------------------------------------------------------------------------------------------ params

@pytest.mark.parametrize("spec, good, bad, match", [
    (Spec("int", 5, "n", low=2, high=10, name="n"), (2, np.int64(10)), (1, 11, 2.0, True, "3"), "n must be an integer"),
    (Spec("float", 1.2, "a", low=0, high=2, low_open=True, name="a"), (2, 1e-9, np.float32(1)),
     (0, 2.1, float("nan"), float("inf"), True, "1"), "a must be"),
    (Spec("str", "x", "o", choices=("x", "y"), name="o"), ("y",), ("z", 1), "o must be"),
    (Spec("bool", False, "f", name="f"), (True, np.bool_(False)), (1, "true"), "f must be True or False"),
    (Spec("ints", (1, 2), "s", low=1, min_len=2, max_len=3, name="s"), ((1, 2), [3, 4, 5]),
     ((1,), (1, 2, 3, 4), (1, 0), (1, 2.0), "12"), "s must"),
    (Spec("floats", (1.0,), "r", low=0, low_open=True, name="r"), ((0.5,), [1, 2]), ((), (0.0,), (1.0, "x")),
     "r must"),
    (Spec("strs", ("a",), "t", choices=("a", "b"), name="t"), (("a", "b"), "a,b"), (("c",), (), ("a", 1)), "t must"),
])
def test_declarations_validate_every_kind(spec, good, bad, match):
    for value in good:
        spec.validate(value)
    for value in bad:
        with pytest.raises(InputError, match=match):
            spec.validate(value)


def test_validation_normalises_values():
    assert Spec("ints", (1,), "s", name="s").validate([np.int64(3), 4]) == (3, 4)
    assert Spec("strs", ("a",), "t", choices=("a", "b"), name="t").validate(" a, b ") == ("a", "b")
    assert type(Spec("float", 1.0, "x", name="x").validate(2)) is float


def test_a_declaration_states_its_doc_default_and_automatic_value():
    with pytest.raises(ValueError, match="one-line doc"):
        Spec("int", 1, " ")
    with pytest.raises(ValueError, match="must say what it resolves to"):
        Spec("int", None, "n")
    with pytest.raises(InputError):  # a default outside its own constraint is a bug of the declaration
        Int(1, "n", low=2)
    s = Spec("floats", (1.0, 2.5), "Scales", low=0, low_open=True, unit="s", name="scales")
    assert s.help_text() == "Scales (each in (0, inf); unit: s)." and s.default_text() == "1,2.5"
    assert s.type_text() == "tuple of float"
    assert Spec("strs", ("a",), "t", choices=("a", "b")).type_text() == 'tuple of {"a", "b"}'


TOY = Check("skeleton_toy", claims=(), printed="the toy's printed statement", methods=("auto", "small", "large"))


@TOY.parameters
class ToyParams:
    n: int = Int(None, "Points", low=4, auto="16, or 8 with quick")
    quick: bool = Flag(False, "Fewer points")
    alpha: float = Real(1.2, "Exponent", low=0, high=2, low_open=True)
    sizes: tuple = Ints((4, 8), "Sizes", low=1)
    scales: tuple = Reals((0.5,), "Scales", low=0, low_open=True)
    kind: str = Choice("a", ("a", "b"), "Kind")
    tags: tuple = Options(("x",), ("x", "y"), "Tags")
    note: str = Text("", "Free text")

    def resolve(self):
        if self.quick and self.n is not None:
            raise InputError("n and quick exclude each other")
        return dataclasses.replace(self, n=self.n if self.n is not None else (8 if self.quick else 16))


@dataclasses.dataclass(frozen=True)
class ToyQuantities:
    n: int
    values: np.ndarray
    by_alpha: dict[float, np.ndarray]
    pairs: tuple[tuple[int, float], ...]
    maybe: float | None
    nested: "Inner"


@dataclasses.dataclass(frozen=True)
class Inner:
    x: float


@TOY.measurement
def toy_measure(p: ToyParams, ctx: Context) -> ToyQuantities:
    with ctx.timed("all"):
        values = ctx.xp.linspace(0.0, 1.0, p.n)
    ctx.note("a note")
    return ToyQuantities(p.n, np.asarray(values), {p.alpha: np.arange(3.0)}, ((1, 0.5),), None, Inner(float("nan")))


@TOY.assertions
def toy_assess(q: ToyQuantities, p: ToyParams, rec) -> str:
    rec.equal("n", q.n, p.n, why="resolved")
    return "the toy measured what it was asked"


@TOY.memory
def toy_needs(p):
    from verify.core.memory import PathNeed

    return {"small": PathNeed(lambda v: v * 8, p.n, "--n", 4, "small"),
            "large": PathNeed(lambda v: v * 2 ** 70, p.n, "--n", 4, "large")}


def test_the_skeleton_owns_claim_method_seed_and_device():
    names = list(TOY.specs())
    assert names[-4:] == ["claim", "method", "seed", "device"]
    p = TOY.params()
    assert p.n == 16 and p.claim == "corrected" and p.method == "auto" and p.seed == 0 and p.device == "cpu"
    assert TOY.params(quick=True).n == 8
    with pytest.raises(InputError, match="exclude each other"):
        TOY.params(quick=True, n=10)
    with pytest.raises(InputError, match="host only"):
        TOY.params(device="gpu")
    with pytest.raises(TypeError, match="unknown parameter"):
        TOY.params(size=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.n = 3


def test_auto_takes_the_first_path_that_fits_and_is_recorded():
    result = TOY.run()
    assert result.parameters["method"] == "small" and result.passed
    assert result.timings["all"] >= 0 and result.notes == ("a note",)
    from spectral.floor.memory import DenseMemoryError

    with pytest.raises(DenseMemoryError, match="large"):
        TOY.run(method="large")


def test_a_declaration_error_is_a_bug_of_the_check():
    bad = Check("skeleton_bad", claims=())
    with pytest.raises(TypeError, match="owned by the skeleton"):
        @bad.parameters
        class Owned:
            seed: int = Int(0, "Seed")
    with pytest.raises(TypeError, match="must be declared with Int"):
        @bad.parameters
        class Bare:
            n: int = 3


def test_run_describe_and_grid_validation():
    import inspect

    assert list(inspect.signature(TOY.run).parameters) == list(TOY.specs())
    assert TOY.run.__check__ is TOY
    described = TOY.describe()
    json.dumps(described)
    assert described["parameters"][0] == {"name": "n", "kind": "int", "default": None, "doc": "Points", "low": 4,
                                          "auto": "16, or 8 with quick"}
    assert [d["name"] for d in describe(ToyParams)] == list(TOY.specs())
    assert validate_value(ToyParams, "tags", "x,y") == ("x", "y")
    with pytest.raises(InputError, match="unknown parameter 'nope'"):
        validate_value(ToyParams, "nope", 1)


def test_measure_in_another_namespace():
    xp = pytest.importorskip("array_api_strict")
    p = TOY.params()
    q = TOY.measure(p, xp=xp)
    assert q.values.shape == (16,) and TOY.assess(q, p).passed


# -------------------------------------------------------------------------------------- quantities

def test_typed_quantities_survive_json():
    p = TOY.params()
    q = TOY.measure(p)
    plain = json.loads(json.dumps(to_plain(q)))
    back = from_plain(ToyQuantities, plain)
    assert type(back) is ToyQuantities and back.n == 16
    np.testing.assert_array_equal(back.values, q.values)
    assert list(back.by_alpha) == [1.2] and isinstance(back.by_alpha[1.2], np.ndarray)
    assert back.pairs == ((1, 0.5),) and back.maybe is None and np.isnan(back.nested.x)
    from verify.core.result import CheckResult

    result = CheckResult.from_json(TOY.assess(q, p).to_json())
    assert type(result.quantities) is ToyQuantities
