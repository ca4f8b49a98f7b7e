"""The generated command line: option types, choices, help from the docstring, exit codes."""

import dataclasses
import json

import pytest

from spectral.floor.validation import ConvergenceError, InputError, check_real
from verify.core.check import Check
from verify.core.cli import build_check_parser
from verify.core.implementation import ImplementationError
from verify.core.params import Flag, Int, Ints, Real, Reals, Text

TOY = Check("toy", claims=("FNA-10",), printed="the toy's printed statement")


@TOY.parameters
class ToyParams:
    alpha: float = Real(1.2, "Kernel exponent (FNA eq. 10)", low=0, high=2, low_open=True)
    n: int = Int(100, "Number of points", low=1)
    fit_range: tuple = Ints((2, 10), "Two integers", min_len=2, max_len=2)
    scales: tuple = Reals((1.0, 2.0), "Scales", low=0, low_open=True)
    full: bool = Flag(False, "Heavier run")
    scale: float = Real(None, "Kernel scale", low=0, low_open=True, auto="0.5")
    fail_with: str = Text("", "Raise this kind of error, or measure a NaN (test hook)")

    def resolve(self):
        return dataclasses.replace(self, scale=0.5 if self.scale is None else self.scale)


@dataclasses.dataclass(frozen=True)
class ToyQuantities:
    alpha: float


@TOY.measurement
def toy_measure(p: ToyParams, ctx) -> ToyQuantities:
    if p.fail_with == "convergence":
        raise ConvergenceError("ARPACK did not converge in 10 iterations; raise maxiter")
    if p.fail_with == "bug":
        raise KeyError("a bug")
    if p.fail_with == "user":
        raise ImplementationError("implementation 'mymod:f' raised ValueError: no")
    # a toolkit routine refusing a value the measurement produced (with "nan", a NaN)
    return ToyQuantities(check_real("alpha", float("nan") if p.fail_with == "nan" else p.alpha))


@TOY.assertions
def toy_assess(q: ToyQuantities, p: ToyParams, rec) -> str:
    rec.close("alpha", q.alpha, 1.2, atol=0.01, why="toy")
    return f"alpha is 1.2 (n={p.n}, full={p.full}, claim={p.claim})"


toy_run = TOY.run


def test_run_has_the_declared_signature_and_numpydoc():
    from verify.core.cli import parse_parameters

    docs = parse_parameters(toy_run.__doc__)
    assert docs["alpha"][0] == "float" and docs["alpha"][1].startswith("Kernel exponent (FNA eq. 10) (in (0, 2])")
    assert docs["claim"][0] == '{"corrected", "printed"}' and "Default: corrected." in docs["claim"][1]
    assert docs["scale"][0] == "float, optional" and "automatic: 0.5" in docs["scale"][1]
    assert list(docs) == ["alpha", "n", "fit_range", "scales", "full", "scale", "fail_with", "claim", "seed", "device"]


def test_parser_types_choices_and_help():
    parser = build_check_parser(TOY, prog="toy")
    ns = parser.parse_args(["--alpha", "1.5", "--n", "1e3", "--fit-range", "3,8", "--claim", "printed", "--full",
                            "--scale", "auto"])
    assert ns.alpha == 1.5 and ns.n == 1000 and ns.fit_range == (3, 8) and ns.claim == "printed"
    assert ns.full is True and ns.scale is None
    text = " ".join(parser.format_help().split())
    assert "Kernel exponent (FNA eq. 10) (in (0, 2]). Default: 1.2." in text
    with pytest.raises(SystemExit):
        parser.parse_args(["--n", "1.5e3x"])
    with pytest.raises(SystemExit):
        parser.parse_args(["--n", "2.5"])  # not an integer
    with pytest.raises(SystemExit):
        parser.parse_args(["--claim", "paper"])


def test_exit_codes(capsys, tmp_path):
    assert TOY.main(["--quiet"]) == 0
    assert capsys.readouterr().out.startswith("PASS toy [paper:")
    assert TOY.main(["--alpha", "1.5", "--quiet"]) == 1
    assert "FAIL toy" in capsys.readouterr().out
    for argv, word in ((["--alpha", "3"], "alpha"), (["--seed", "-1"], "seed"), (["--device", "gpu"], "host only"),
                       (["--json", str(tmp_path / "no" / "x.json")], "does not exist"),
                       (["--plot", str(tmp_path / "x.png")], "no figure"), (["--plot", "x.txt"], "suffix"),
                       (["--fit-range", "1,2,3"], "fit_range"), (["--scales", "1,-1"], "scales")):
        assert TOY.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and word in err and "Traceback" not in err
    assert TOY.main(["--fail-with", "convergence"]) == 1
    assert "did not converge" in capsys.readouterr().err
    with pytest.raises(KeyError):  # a bug keeps its traceback
        TOY.main(["--fail-with", "bug"])


def test_json_output_records_parameters_and_versions(tmp_path, capsys):
    path = tmp_path / "r.json"
    assert TOY.main(["--json", str(path), "--quiet"]) == 0
    data = json.loads(path.read_text())
    assert data["parameters"]["scale"] == 0.5 and data["parameters"]["seed"] == 0
    assert {"attention-limits", "numpy", "scipy", "timestamp", "command"} <= set(data["versions"])
    assert data["records"][0]["why"] == "toy"


def test_run_refuses_bools_and_non_numbers():
    with pytest.raises(InputError, match="alpha"):
        toy_run(alpha=True)
    with pytest.raises(InputError, match="n must be an integer"):
        toy_run(n=100.0)
    with pytest.raises(InputError, match="fail_with must be a string"):
        toy_run(fail_with=1)
    with pytest.raises(InputError, match="scales"):
        toy_run(scales=(1.0, True))
    with pytest.raises(InputError, match="full"):
        toy_run(full=1)
    with pytest.raises(TypeError):
        toy_run(unknown=1)


def test_a_measurement_a_toolkit_routine_stops_fails_and_says_why(capsys):
    res = toy_run(fail_with="nan")
    assert not res.passed and [r.name for r in res.records] == ["measurement_completed"]
    assert "the measurement stopped: alpha must be a finite real number" in res.final_line()
    assert TOY.main(["--fail-with", "nan", "--quiet"]) == 1  # a failed check, not bad input
    assert toy_run().passed
    with pytest.raises(ImplementationError, match="mymod:f"):  # the user's code failing stays exit 2
        toy_run(fail_with="user")
    assert TOY.main(["--fail-with", "user", "--quiet"]) == 2
    assert "mymod:f" in capsys.readouterr().err
