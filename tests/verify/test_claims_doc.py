"""docs/claims.md and the README's tables are what the ledger and benchmarks make; no text cites a missing file."""

import re
from pathlib import Path

import pytest

from verify.core import claims, claims_doc

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "run python -m verify.core.claims_doc --write and commit docs/claims.md and README.md"


def test_committed_docs_are_what_the_ledger_makes():
    assert claims_doc.stale_docs(ROOT) == [], REGENERATE


def test_readme_table_counts_the_ledger():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert claims_doc.paper_table(checks=False) in readme, REGENERATE
    total = readme.split(claims_doc.README_BEGIN)[1].split(claims_doc.README_END)[0].strip().splitlines()[-1]
    cells = [c.strip() for c in total.strip("|").split("|")]
    assert cells[0] == "all papers" and int(cells[1]) == len(claims.LEDGER)
    by_verdict = [sum(c.verdict == v for c in claims.LEDGER) for v in claims_doc._COLUMNS]
    assert [int(c) for c in cells[2:6]] == by_verdict and sum(by_verdict) == len(claims.LEDGER)


def test_every_claim_has_its_section(tmp_path):
    text = claims_doc.claims_markdown()
    for c in claims.LEDGER:
        section = text.split(f"### {c.id} · ")[1].split("\n### ")[0]
        assert claims.details(c.id).claim in section
        if c.check:  # the command that decides it, with the options of its setting (FNA-11: --manifold sphere)
            options = "".join(f" --{k.replace('_', '-')} {v}" for k, v in c.setting)
            assert f"`python -m verify.{c.check}{options}`" in section and "to fill in" in section
    assert "`python -m verify.weyl --manifold sphere`" in text.split("### FNA-11 · ")[1].split("\n### ")[0]
    assert claims_doc.write_docs(ROOT) == []  # nothing to rewrite in a clean checkout


def test_readme_set_up_and_test_commands_stay_verbatim():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "\npip install . && python -m verify.weyl --alpha 1.2\n" in readme  # CI runs these two lines
    assert '\npip install ".[test]" && python -m pytest\n' in readme


def test_readme_performance_rows_are_the_benchmarks_rows():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    bench = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").splitlines()
    block = readme.split("<!-- performance rows:")[1].split("<!-- end of the performance rows -->")[0]
    rows = [line for line in block.splitlines() if line.startswith("| ") and not line.startswith("| section")]
    assert len(rows) >= 5
    missing = [row for row in rows if row not in bench]
    assert not missing, f"README performance rows not in benchmarks/README.md (copy them again): {missing}"


_PATH = re.compile(r"\b((?:tests|docs|benchmarks|verify|figures|spectral|manifolds|graphs)/[A-Za-z0-9_./-]+"
                   r"\.(?:py|md|mplstyle|json|txt|toml))\b")
_TEAM_DOCS = re.compile(r"CLAIMS\.md|DESIGN\.md|STYLE\.md|\.\./shared|/work/shared|\bCLAIMS [A-Z]+-\d|\bDESIGN \d")


def _user_texts():
    """The texts a user reads: README, docs/, and the ledger's details and test paths."""
    yield "README.md", (ROOT / "README.md").read_text(encoding="utf-8")
    for path in sorted((ROOT / "docs").glob("*.md")):
        yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")
    for c in claims.LEDGER:
        d = claims.details(c.id)
        yield f"ledger {c.id}", " ".join(filter(None, (c.test, d.where, d.claim, d.asserted, d.split)))


@pytest.mark.parametrize("name, text", list(_user_texts()), ids=lambda v: v if isinstance(v, str) and
                         len(v) < 40 else "")
def test_user_texts_cite_only_files_in_the_repository(name, text):
    assert not _TEAM_DOCS.search(text), f"{name} cites a document that is not in the repository"
    missing = [p for p in _PATH.findall(text) if not (ROOT / p).exists()]
    assert not missing, f"{name} cites files that are not in the repository: {missing}"
    for link in re.findall(r"\]\(([^)#]+)\)", text):
        base = ROOT / "docs" if name.startswith("docs/") else ROOT
        assert link.startswith("http") or (base / link).exists(), f"{name}: broken link {link}"


def test_ledger_checks_exist():
    missing = [c.id for c in claims.LEDGER if c.check and not (ROOT / "verify" / f"{c.check}.py").is_file()]
    assert not missing, f"ledger ids whose check module is missing: {missing}"


def _tracked_files():
    """The files git tracks (a virtual environment or build folder inside the clone is not read)."""
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to list the tracked files")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / p for p in out.decode("utf-8").split("\0") if p]


def test_no_source_cites_the_team_documents():
    """Code, docstrings and comments anywhere in the repository cite nothing outside it."""
    offenders = []
    for path in _tracked_files():
        rel = path.relative_to(ROOT).as_posix()
        if path.suffix not in (".py", ".md", ".toml", ".cfg", ".txt", ".mplstyle") or not path.is_file():
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if _TEAM_DOCS.search(line) and rel != "tests/verify/test_claims_doc.py":
                offenders.append(f"{rel}:{n}")
    assert not offenders, "cite documents that are not in the repository: " + ", ".join(offenders)
