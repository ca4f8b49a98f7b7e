"""The generated command line: option types, choices, help from the docstring, exit codes."""

import json

import pytest

from spectral.validation import ConvergenceError, InputError, check_real
from verify.core.check import Check
from verify.core.cli import build_parser, parse_parameters
from verify.core.result import Recorder

TOY = Check("toy", claims=("FNA-10",))


@TOY.define
def toy_run(*, alpha=1.2, n=100, fit_range=(2, 10), scales=(1.0, 2.0), claim="corrected", full=False,
            scale=None, fail_with="", seed=0, device="cpu"):
    """A toy check.

    Parameters
    ----------
    alpha : float
        Kernel exponent (FNA eq. 10).
    n : int
        Number of points.
    fit_range, scales : tuple
        Two tuples.
    claim : {"corrected", "printed"}
        Which statement to assert.
    full : bool
        Heavier run.
    scale : float, optional
        Automatic when omitted.
    fail_with : str
        Raise this kind of error (test hook).
    seed : int
        Seed.
    device : {"cpu"}
        Host only.

    Returns
    -------
    CheckResult
    """
    check_real("alpha", alpha, low=0, high=2, low_open=True)
    if fail_with == "convergence":
        raise ConvergenceError("ARPACK did not converge in 10 iterations; raise maxiter")
    if fail_with == "bug":
        raise KeyError("a bug")
    rec = Recorder()
    rec.close("alpha", alpha, 1.2, atol=0.01, why="toy")
    rec.resolve("scale", 0.5 if scale is None else scale)
    return rec.finish(f"alpha is 1.2 (n={n}, full={full}, claim={claim})")


def test_parse_parameters_reads_numpydoc():
    docs = parse_parameters(toy_run.__doc__)
    assert docs["alpha"] == ("float", "Kernel exponent (FNA eq. 10).")
    assert docs["claim"][0].startswith("{") and docs["scales"][1] == "Two tuples."
    assert "Returns" not in docs and "CheckResult" not in docs


def test_parser_types_choices_and_help():
    parser = build_parser(toy_run, prog="toy")
    ns = parser.parse_args(["--alpha", "1.5", "--n", "1e3", "--fit-range", "3,8", "--claim", "printed", "--full",
                            "--scale", "auto"])
    assert ns.alpha == 1.5 and ns.n == 1000 and ns.fit_range == (3, 8) and ns.claim == "printed"
    assert ns.full is True and ns.scale is None
    text = parser.format_help()
    assert "Kernel exponent (FNA eq. 10). (default: 1.2)" in " ".join(text.split())
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
                       (["--plot", str(tmp_path / "x.png")], "no figure")):
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
    with pytest.raises(InputError, match="scales"):
        toy_run(scales=(1.0, True))
    with pytest.raises(InputError, match="full"):
        toy_run(full=1)
    with pytest.raises(TypeError):
        toy_run(unknown=1)
