"""A new check in an afternoon: ``python -m verify.core.new_check NAME --paper P`` writes it from a template.

Three files change in the checkout: ``verify/NAME.py`` (the check: declaration, calibration table, parameters,
quantities, measurement, assertions, the command line), ``tests/verify/test_NAME.py`` (its tests: the small
setting passes, the printed claim fails, each assertion fails on a wrong quantity, a NaN never passes, the JSON
round trip, bad input refused) and the ledger module of paper ``P`` (``verify/papers/<p>.py``: a new claim
``P-k`` that names the check, with its details to fill in; the one place a claim and its check are linked).
The template is a complete, small check that runs and passes its tests as written: softmax attention of random
tokens is row-stochastic (the printed statement, "its columns sum to 1 as well", fails).
Replace its measurement and assertions with the paper's claim, then measure the tolerances again
(``python -m verify.calibrate NAME``) and regenerate the documents (``python -m verify.core.claims_doc
--write``). docs/checks.md shows the template and says what each part is for.
"""

from __future__ import annotations

import argparse
import ast
import keyword
import re
import sys
from pathlib import Path

from spectral.floor.validation import InputError
from verify.core.claims import PAPERS
from verify.core.cli import EXIT_PASS, OneLineParser, report_error
from verify.core.generated_docs import source_root

__all__ = ["render_check", "render_test", "next_claim_id", "add_ledger_entry", "new_check", "main"]

#: The ledger's verdict of a generated claim: the template's printed statement fails (edit it with the claim).
VERDICT = "suspicious / likely false as stated"
DEFAULT_TITLE = "Softmax attention is row-stochastic"

_CHECK = '''"""{title} ({claim_id}).

The claim, the exact reference and where each tolerance comes from, in prose. The template's claim: softmax
attention A = softmax(Q K^T / sqrt(d)) of random tokens is row-stochastic (A >= 0, every row sums to 1); the
printed statement, that its columns sum to 1 as well, fails. Replace the measurement and the assertions with
the paper's claim, then measure the tolerances again: python -m verify.calibrate {name}.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from spectral.floor.validation import child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.params import Int
from verify.core.result import Recorder

CHECK = Check("{name}",
              printed="the printed statement (here: the columns of A sum to 1 as well), which fails")

#: The measured tolerances (python -m verify.calibrate {name} measures them again over their grids).
CALIBRATION = Calibration(
    Tolerance("row_sum_error", 1e-12, measured=2.2e-16, over={{"seed": (0, 1, 2, 3)}},
              why="rounding of a sum of n terms of size <= 1 (the exponentials are max-subtracted)"),
)


@CHECK.parameters
class Params:
    n: int = Int(256, "Number of tokens", low=2, high=4096, unit="tokens")
    d: int = Int(16, "Dimension of the queries and keys", low=1, high=1024)


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What {name} measures."""

    #: max_i |sum_j A_ij - 1|
    row_sum_error: float
    #: max_j |sum_i A_ij - 1|
    column_sum_error: float
    #: min_ij A_ij
    min_entry: float


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """A = softmax(Q K^T / sqrt(d)) of seeded Gaussian tokens; its row sums, column sums and smallest entry."""
    rng = child_rng(p.seed, "tokens")
    q, k = rng.standard_normal((p.n, p.d)), rng.standard_normal((p.n, p.d))
    with ctx.timed("attention"):
        s = q @ k.T / math.sqrt(p.d)
        e = np.exp(s - np.max(s, axis=1, keepdims=True))
        a = e / np.sum(e, axis=1, keepdims=True)
    return Quantities(row_sum_error=float(np.max(np.abs(np.sum(a, axis=1) - 1.0))),
                      column_sum_error=float(np.max(np.abs(np.sum(a, axis=0) - 1.0))),
                      min_entry=float(np.min(a)))


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Every row of A sums to 1 and no entry is negative; printed: the columns sum to 1 too."""
    tol = CALIBRATION.get("row_sum_error", p)
    rec.at_most("row_sum_error", q.row_sum_error, tol, label="{claim_id}: a row of A does not sum to 1")
    rec.at_least("min_entry", q.min_entry, 0.0, why="exp(x) >= 0 exactly", label="{claim_id}: A has a negative entry")
    if p.claim == "printed":
        rec.at_most("printed_column_sum_error", q.column_sum_error, tol.value,
                    why="as printed: A doubly stochastic, its columns summing to 1 like its rows",
                    label="{claim_id} as printed: the columns of A do not sum to 1")
        return "A = softmax(Q K^T / sqrt(d)) is doubly stochastic ({claim_id} as printed)"
    rec.info("column_sum_error", q.column_sum_error)
    return "A = softmax(Q K^T / sqrt(d)) is row-stochastic: A >= 0 and every row sums to 1"


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
'''

_TEST = '''"""verify.{name} ({claim_id}): passes at a small setting; fails as printed and on each wrong quantity."""

import dataclasses

from verify import {name} as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
#: the small setting: measured once per session (this file and tests/verify/test_controls.py share it)
small = measurement_fixture(CHECK, n=64)


def test_small_setting_passes(small):
    p, q = small
    assert_passes(CHECK, q, p)


def test_printed_claim_fails(small):
    p, q = small
    assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), "printed_column_sum_error", only=True)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({{"row_sum_error": 1e-6}}, "row_sum_error"),  # a row normalisation off by 1e-6
    ({{"min_entry": -1e-3}}, "min_entry"),  # a negative weight
], only=True)


def test_nan_never_passes(small):
    p, q = small
    assert_nan_fails(CHECK, q, p, "row_sum_error", "row_sum_error")


def test_json_round_trip(small):
    p, q = small
    assert_round_trip(CHECK, q, p)


test_bad_input = refusals(check.run, [({{"n": 1}}, "n"), ({{"d": 0}}, "d")])
'''

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


def render_check(name: str, claim_id: str, title: str = DEFAULT_TITLE) -> str:
    """The text of ``verify/<name>.py`` for claim ``claim_id`` (the template check)."""
    return _CHECK.format(name=name, claim_id=claim_id, title=title)


def render_test(name: str, claim_id: str) -> str:
    """The text of ``tests/verify/test_<name>.py``."""
    return _TEST.format(name=name, claim_id=claim_id)


def _literal(s: str) -> str:
    """``s`` as a Python string literal in the ledger's quotes (double, single where ``s`` holds double quotes)."""
    if '"' in s and "'" not in s:
        return "'" + s.replace("\\", "\\\\") + "'"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ledger_path(root: Path, paper: str) -> Path:
    """The data module of ``paper``'s claims: ``verify/papers/<paper in lower case>.py``."""
    return root / "verify" / "papers" / f"{paper.lower()}.py"


def _claims_node(text: str) -> ast.Tuple:
    """The ``CLAIMS`` tuple of a paper module's source."""
    for node in ast.parse(text).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == "CLAIMS" and isinstance(node.value, ast.Tuple):
            return node.value
    raise RuntimeError("the paper module has no CLAIMS tuple to add the claim to")


def _claim_id_of(call) -> str | None:
    if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant):
        return call.args[0].value
    return None


def _paper_source(paper: str, root: Path) -> tuple[Path, str]:
    path = _ledger_path(root, paper)
    if not path.is_file():
        raise InputError(f"--paper {paper!r} has no ledger module {path} in the checkout")
    return path, path.read_text(encoding="utf-8")


def next_claim_id(paper: str, root=None) -> str:
    """The next free ledger id of ``paper`` (``"FNA"`` -> ``"FNA-21"`` after FNA-20) in ``verify/papers/<paper>.py``
    of the checkout at ``root``."""
    _, text = _paper_source(paper, source_root(root))
    numbers = [int(cid.split("-")[1]) for cid in map(_claim_id_of, _claims_node(text).elts)
               if isinstance(cid, str) and cid.startswith(paper + "-")]
    return f"{paper}-{max(numbers, default=0) + 1}"


def add_ledger_entry(claim_id: str, name: str, title: str, root=None) -> Path:
    """Add claim ``claim_id`` covered by check ``name`` to its paper's ledger module at ``root`` (after the
    paper's last claim in ``CLAIMS``, with its ``ClaimDetails`` to fill in); returns the module's path."""
    paper = claim_id.split("-")[0]
    path, text = _paper_source(paper, source_root(root))
    claims = _claims_node(text).elts
    if not claims:
        raise InputError(f"paper {paper!r} has no claim in the ledger to add {claim_id} after")
    entry = (f"    Claim({_literal(claim_id)}, NAME, {_literal(title)}, \"P2\", {_literal(VERDICT)},\n"
             f"          check={_literal(name)},\n"
             "          details=ClaimDetails(\n"
             "              where=\"where the paper makes the claim (section, equation, figure)\",\n"
             f"              claim={_literal(title)},\n"
             "              asserted=\"what the toolkit asserts instead (the corrected statement); delete it when "
             "the claim is \"\n"
             "                       \"asserted as printed\")),\n")
    lines = text.splitlines(keepends=True)
    after = claims[-1].end_lineno
    if not lines[after - 1].rstrip().endswith(","):
        raise RuntimeError(f"{path}: line {after} does not end its entry with a comma")
    lines.insert(after, entry)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def new_check(name: str, paper: str, *, title: str = DEFAULT_TITLE, root=None) -> dict[str, Path]:
    """Write check ``name`` of paper ``paper`` into the checkout at ``root``: the check, its test, its ledger entry.

    Returns ``{"check": path, "test": path, "ledger": path, "claim": claim_id}``; InputError for a bad or taken
    name, an unknown paper, or a file that exists already (nothing is written then).
    """
    root = source_root(root)
    if not isinstance(name, str) or not _NAME.match(name) or keyword.iskeyword(name):
        raise InputError(f"NAME must be a lowercase Python identifier (letters, digits, _), got {name!r}")
    if paper not in PAPERS:
        raise InputError(f"--paper must be one of the ledger's papers: {', '.join(PAPERS)}; got {paper!r}")
    check_path = root / "verify" / f"{name}.py"
    test_path = root / "tests" / "verify" / f"test_{name}.py"
    for path in (check_path, test_path, root / "verify" / name):
        if path.exists():
            raise InputError(f"NAME {name!r} is taken: {path} exists")
    claim_id = next_claim_id(paper, root)
    check_path.write_text(render_check(name, claim_id, title), encoding="utf-8")
    test_path.parent.mkdir(parents=True, exist_ok=True)
    test_path.write_text(render_test(name, claim_id), encoding="utf-8")
    ledger = add_ledger_entry(claim_id, name, title, root)
    return {"check": check_path, "test": test_path, "ledger": ledger, "claim": claim_id}


def main(argv=None) -> int:
    prog = "python -m verify.core.new_check"
    parser = OneLineParser(prog=prog, description="Write a new check (verify/NAME.py), its tests and the ledger entry "
                           "of its claim from the template (docs/checks.md shows it).",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", help="the check's name: verify/NAME.py, python -m verify.NAME")
    parser.add_argument("--paper", required=True, help=f"the ledger's paper of the new claim: {', '.join(PAPERS)}")
    parser.add_argument("--title", default=DEFAULT_TITLE, help="the claim's title in the ledger")
    parser.add_argument("--root", default=None, help="the checkout to write into (default: this one)")
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        out = new_check(ns.name, ns.paper, title=ns.title, root=ns.root)
    except InputError as exc:
        return report_error(prog, exc)
    print(f"wrote {out['check']}, {out['test']} and claim {out['claim']} in {out['ledger']}")
    print(f"next: replace the template's measurement and assertions with {out['claim']}'s, then run\n"
          f"  python -m pytest tests/verify/test_{ns.name}.py tests/verify/test_controls.py -k {ns.name}\n"
          f"  python -m verify.calibrate {ns.name}\n"
          "  python -m verify.core.claims_doc --write")
    return EXIT_PASS


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
