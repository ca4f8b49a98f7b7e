"""A number once: a calibrated tolerance's measured value lives in ``measured=`` and its seeds in ``over=``.

The reason of a row (``why=``) says why the tolerance has its value and what a wrong input gives; the
record's reason appends where it was calibrated (``Tolerance.reason``: "[measured 0.0121 over alpha in
{1.2}; seed in {0-3}]"). Prose that repeats the measured number or names seeds states it twice, and the
two drift apart (weyl's i.i.d. slope gap said "seeds 0-7 gave <= 0.0113" beside measured=0.0121 over
seeds 0-3). A static scan of every registered check: the rows' reasons, and the comments of the
``CALIBRATION`` table and the module docstring.
"""

import ast
import importlib
import io
import re
import tokenize
from pathlib import Path

import pytest

from verify.core import claims
from verify.core.calibration import Tolerance

NAMES = tuple(claims.available_checks())
ROOT = Path(__file__).resolve().parents[2]

#: seeds named in prose: "seeds 0-7", "seed 0", "over 20 seeds", "seeds 0..9"
SEEDS = re.compile(r"\bseeds?\s*(?:=\s*)?\d|\d+\s+seeds\b")
#: a measured number stated in prose: "measured <= 0.0009", "measured |diff| <= 0.0012", "measured 7-9 %"
MEASURED = re.compile(r"\bmeasured\b(?:\s+(?:max|relative|spread|error))*\s*(?:\|[^|]*\|)?\s*(?:<=|>=|~|=|<|>)?\s*-?\d")


def number_texts(value) -> set[str]:
    """How prose may write ``value``: 2 to 4 significant digits, plain or in exponent form (0.0121, 1.21e-2).

    Values with fewer than two significant digits (0.05, 2e-16, 1) are left out: prose uses such round
    numbers for other things (a tolerance, a margin)."""
    if value is None:
        return set()
    if isinstance(value, tuple):
        return set().union(*(number_texts(v) for v in value))
    out = set()
    for digits in (2, 3, 4):
        text = f"{value:.{digits}g}"
        mantissa = text.split("e")[0].lstrip("-").replace(".", "").lstrip("0")
        if len(mantissa) < 2:
            continue
        out.add(text)
        m, _, e = f"{value:.{digits - 1}e}".partition("e")
        out.add(f"{m}e{int(e)}")
        out.add(f"{m}e-{abs(int(e)):02d}" if int(e) < 0 else f"{m}e{int(e)}")
    return out


def repeats(text: str, value) -> list[str]:
    """The forms of ``value`` that ``text`` states as a number of its own (not inside a longer number)."""
    return sorted(t for t in number_texts(value) if re.search(rf"(?<![\w.]){re.escape(t)}(?![\w.]\d|\d)", text))


def row_problems(row: Tolerance) -> list[str]:
    """What the reason of ``row`` repeats: its measured value, seeds, a measured number."""
    out = [f"repeats its measured value {t}" for t in repeats(row.why, row.measured)]
    if SEEDS.search(row.why):
        out.append(f"names seeds ({SEEDS.search(row.why).group(0)!r}: they belong in over=)")
    if MEASURED.search(row.why):
        out.append(f"states a measured number ({MEASURED.search(row.why).group(0)!r}: it belongs in measured=)")
    return out


def table_prose(path: Path) -> tuple[str, str]:
    """``(docstring, comments)``: the module docstring and the comments inside its ``CALIBRATION = ...`` statement."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    span = next(((node.lineno, node.end_lineno) for node in tree.body if isinstance(node, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == "CALIBRATION" for t in node.targets)), None)
    comments = []
    if span is not None:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT and span[0] <= tok.start[0] <= span[1]:
                comments.append(tok.string)
    return ast.get_docstring(tree) or "", "\n".join(comments)


@pytest.mark.parametrize("name", NAMES)
def test_a_rows_reason_does_not_repeat_its_measured_value_or_seeds(name):
    table = getattr(importlib.import_module(f"verify.{name}"), "CALIBRATION", None)
    if table is None:
        return
    problems = [f"{row.name} {dict(row.setting) or ''}: {p}" for row in table for p in row_problems(row)]
    assert not problems, f"verify/{name}.py: " + "; ".join(problems)


@pytest.mark.parametrize("name", NAMES)
def test_the_tables_comments_and_docstring_do_not_repeat_measured_values_or_seeds(name):
    module = importlib.import_module(f"verify.{name}")
    table = getattr(module, "CALIBRATION", None)
    if table is None:
        return
    doc, comments = table_prose(Path(module.__file__))
    # the tolerances themselves (0.99) and integers (equation numbers) are other numbers that prose states
    values = {t for row in table for v in (row.value if isinstance(row.value, tuple) else (row.value,))
              for t in number_texts(v) | {f"{v:g}"}}
    found = sorted({t for row in table for t in repeats(doc + "\n" + comments, row.measured)
                    if t not in values and ("." in t or "e" in t)})
    assert not found, f"verify/{name}.py repeats measured values of its CALIBRATION in prose: {found}"
    seeds = SEEDS.findall(comments)
    assert not seeds, f"verify/{name}.py names seeds in the comments of its CALIBRATION (they belong in over=): {seeds}"


@pytest.mark.parametrize("why, measured, problem", [
    ("S^1 i.i.d.: seeds 0-7 gave <= 0.0113 (alpha 1.2)", 0.0121, "names seeds"),
    ("grid slope: measured <= 0.0009 (20x)", 0.0009, "states a measured number"),
    ("grid slope (20x margin): 0.0121 at alpha 2", 0.0121, "repeats its measured value 0.0121"),
    ("the worst of 20 seeds", 0.5, "names seeds"),
    ("grid slope: 1.21e-2 at alpha 2", 0.0121, "repeats its measured value 1.21e-2"),
])
def test_the_scan_catches_each_repetition(why, measured, problem):
    problems = row_problems(Tolerance("x", 0.05, measured=measured, why=why))
    assert any(p.startswith(problem) for p in problems), problems


@pytest.mark.parametrize("why, measured", [
    ("grid discretisation of the slope (20x margin); kernel alpha 1.25 claimed as 1.2 gives 0.037", 0.0009),
    ("a tolerance of 0.05: a wrong kernel gives 0.12", 0.0121),  # other numbers are allowed
    ("10.0121 is not 0.0121's neighbour", 0.5),
])
def test_the_scan_lets_other_numbers_be(why, measured):
    assert row_problems(Tolerance("x", 0.05, measured=measured, why=why)) == []
