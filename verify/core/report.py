"""The report of a run: ``DIR/report.json`` (every result), ``DIR/index.html``, figures and ``DIR/claims.md``.

``python -m verify --all --report DIR [--full]`` runs every check and calls :func:`write_report`.
The page has one section per paper and one row per ledger claim: its id, the claim, the ledger's
verdict on the paper's printed statement, the outcome of the run that decides it (its check in the
claim's setting, :func:`verify.core.claims.setting`), the deciding numbers against their tolerances,
and a link to that run's figure; below each paper's table, one block per run with its figure embedded
(PNG files next to the page), its notes, informational values and parameters. Plain HTML and a little
CSS: no script, readable offline.

The JSON has the same shape as ``python -m verify --json``: provenance, the options of the run,
every result (:meth:`~verify.core.result.CheckResult.to_dict`, plus the ``setting`` it ran in), the
errors by run label and the summary by paper.
:func:`load_report` reads it back; :mod:`verify.core.claims_doc` fills ``claims.md`` from it.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from verify.core.cli import check_output_dir, check_output_file  # noqa: F401 - re-exported
from verify.core.drawing import figure_saver
from verify.core.claims_doc import REPORT_JSON, claims_markdown, load_report  # noqa: F401 - re-exported
from verify.core.claims import (LEDGER, PAPER_TITLES, PAPERS, READINGS, VERDICT_NAMES, claim_records, decided_by,
                                details, run_label, setting)
from verify.core.progress import progress
from verify.core.provenance import versions
from verify.core.result import CheckResult, Record, format_value, jsonable
from verify.core.runner import CATEGORIES, CheckRow, summary_by_paper

__all__ = ["check_output_dir", "check_output_file", "report_data", "write_report", "load_report", "render_html",
           "claim_records",
           "REPORT_JSON", "REPORT_HTML"]

REPORT_HTML = "index.html"
_SHORT = {v: k for k, v in PAPERS.items()}


def report_data(rows: Sequence[CheckRow], *, options: Mapping[str, Any] | None = None) -> dict:
    """The JSON of a run: provenance, options, every result (with the setting it ran in), the errors (by run
    label, ``weyl[manifold=sphere]``) and the summary by paper."""
    rows = [r if isinstance(r, CheckRow) else CheckRow(*r) for r in rows]
    return {"versions": versions(), "options": dict(options or {}),
            "results": [{**row.result.to_dict(), "setting": jsonable(dict(row.setting))}
                        for row in rows if row.result is not None],
            "errors": {row.label: row.error for row in rows if row.result is None},
            "summary_by_paper": summary_by_paper(rows)}


def _results(data: Mapping) -> dict[str, CheckResult]:
    """run label -> result, in the order of the report (a result without a setting is labelled by its check)."""
    out: dict[str, CheckResult] = {}
    for d in data.get("results", ()):
        label = run_label(d["check"], d.get("setting") or {}) if d.get("setting") else d["check"]
        out[label] = CheckResult.from_json(json.dumps(d))
    return out


def _anchor(label: str) -> str:
    """A run label as an HTML id and a file name: ``weyl[manifold=sphere]`` -> ``weyl-manifold-sphere``."""
    return re.sub(r"[^A-Za-z0-9_.]+", "-", label).strip("-")


def _claim_run(c, results: Mapping[str, CheckResult], errors: Mapping[str, str]):
    """(label, result, error) of the run that decides claim ``c`` (its check in the claim's setting)."""
    for label, res in results.items():
        if decided_by(res, c.id):
            return label, res, ""
    label = run_label(c.check, setting(c.id))
    if label in errors:
        return label, None, errors[label]
    return label, None, errors.get(c.check, "") if label == c.check else ""


# -- figures ----------------------------------------------------------------------------------------

def _draw_figures(results: Mapping[str, CheckResult], folder: Path, *, quiet: bool | None) -> dict[str, str]:
    """Save each run's figure as ``folder/<run>.png``; run label -> file name or ``"error: ..."``."""
    drawn: dict[str, str] = {}
    savers = {label: figure_saver(res.check) for label, res in results.items()}
    todo = [label for label, save in savers.items() if save is not None]
    if todo:
        folder.mkdir(parents=True, exist_ok=True)
    for label in progress(todo, desc="report figures", quiet=quiet, label=str):
        path = folder / f"{_anchor(label)}.png"
        try:
            savers[label](results[label], os.fspath(path))
            drawn[label] = path.name
        except Exception as exc:  # a drawing bug must not lose the report; it is shown on the page
            drawn[label] = f"error: {type(exc).__name__}: {' '.join(str(exc).split())}"
    return drawn


# -- HTML -------------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1200px;
 padding:0 1.2rem 3rem;color:#1d2327;line-height:1.45;font-size:15px}
h1{font-size:1.6rem;margin:1.2rem 0 .3rem}h2{margin-top:2.2rem;border-bottom:2px solid #ccd;padding-bottom:.2rem}
h3{margin-top:1.6rem}.meta{color:#555;font-size:.9rem}code{font-size:.92em}
table{border-collapse:collapse;width:100%;margin:.6rem 0}th,td{border:1px solid #d5d8dc;padding:.35rem .5rem;
 vertical-align:top;text-align:left}th{background:#f3f4f6}
table.claims{table-layout:fixed}table.claims td.id{font-weight:600}
table.claims td{overflow-wrap:anywhere}
table.nums{font-size:.8rem;margin:.2rem 0}table.nums td,table.nums th{padding:.1rem .3rem;overflow-wrap:normal}
table.nums td:first-child{overflow-wrap:anywhere}table.nums td:last-child{white-space:nowrap}
.asserted{color:#333;font-size:.9rem;margin-top:.3rem}.where{color:#666;font-size:.85rem}
.tag{display:inline-block;padding:.05rem .45rem;border-radius:.6rem;font-size:.8rem;font-weight:600}
.PASS{background:#d7f5dd;color:#0f5c22}.FAIL{background:#fde2e1;color:#8a1c13}.ERROR{background:#fbe3c4;color:#7a4100}
.notrun{background:#eceef1;color:#444}.v-holds{background:#e3f0ff;color:#0b3c7a}
.v-cond{background:#fff4cc;color:#6b5200}.v-false{background:#f9dcef;color:#7a1155}
tr.row-PASS td.id{border-left:4px solid #3aa655}tr.row-FAIL td.id,tr.row-ERROR td.id{border-left:4px solid #c0392b;
 color:#8a1c13}td.ok-no{color:#8a1c13;font-weight:600}
figure{margin:.6rem 0}figure img{max-width:min(100%,720px);height:auto;border:1px solid #e1e4e8}
figcaption{font-size:.85rem;color:#555}.check{border-top:1px solid #e1e4e8;padding-top:.4rem}
.final{font-family:ui-monospace,monospace;font-size:.85rem;background:#f6f8fa;padding:.4rem;overflow-wrap:anywhere}
nav a{margin-right:1rem}details summary{cursor:pointer;color:#0b3c7a}
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _verdict_class(verdict: str) -> str:
    return {"should hold": "v-holds", "holds only under stated assumptions": "v-cond"}.get(verdict, "v-false")


def _numbers(records: Sequence[Record], *, open_limit: int = 5) -> str:
    if not records:
        return '<span class="meta">no deciding assertion</span>'
    rows = "".join(
        f"<tr><td><code>{_e(r.name)}</code></td><td>{_e(format_value(r.measured))}</td><td>{_e(r.expectation())}</td>"
        f"<td class=\"{'ok-yes' if r.passed else 'ok-no'}\">{'yes' if r.passed else 'NO'}</td></tr>"
        for r in records)
    table = (f'<table class="nums"><tr><th>assertion</th><th>measured</th><th>expected</th><th>ok</th></tr>'
             f"{rows}</table>")
    if len(records) <= open_limit:
        return table
    failed = sum(r.passed is False for r in records)
    summary = f"{len(records)} assertions, " + (f"{failed} failed" if failed else "all held")
    return f"<details{' open' if failed else ''}><summary>{_e(summary)}</summary>{table}</details>"


def _claim_row(c, results: Mapping[str, CheckResult], errors: Mapping[str, str], figs: Mapping[str, str]) -> str:
    d = details(c.id)
    statement = f"<strong>{_e(c.title)}</strong><div>{_e(d.claim)}</div>"
    if d.asserted:
        statement += f'<div class="asserted"><em>Checked:</em> {_e(d.asserted)}</div>'
    if d.split:
        statement += f'<div class="asserted"><em>Parts:</em> {_e(d.split)}</div>'
    statement += f'<div class="where">{_e(d.where)}</div>'
    verdict = f'<span class="tag {_verdict_class(c.verdict)}">{_e(VERDICT_NAMES.get(c.verdict, c.verdict))}</span>'
    figure, numbers, status = "", "", "notrun"
    if c.check is None:
        outcome = (f'<span class="tag notrun">test</span> <code>{_e(c.test)}</code>' if c.test
                   else '<span class="tag notrun">no check yet</span>')
    else:
        label, res, error = _claim_run(c, results, errors)
        if res is not None:
            status = res.verdict
            outcome = (f'<span class="tag {status}">{status}</span> '
                       f'<a href="#check-{_e(_anchor(label))}"><code>{_e(label)}</code></a>')
            if res.passed:
                outcome += f'<div class="meta">{_e(READINGS.get(c.verdict, c.verdict).replace("->", "→"))}</div>'
            numbers = _numbers(claim_records(res, c.id))
            if label in figs and not figs[label].startswith("error:"):
                figure = f'<a href="#fig-{_e(_anchor(label))}">figure</a>'
        elif error:
            status = "ERROR"
            outcome = (f'<span class="tag ERROR">ERROR</span> <code>{_e(label)}</code>'
                       f'<div class="meta">{_e(error)}</div>')
        else:
            outcome = f'<span class="tag notrun">not run</span> <code>{_e(label)}</code>'
    return (f'<tr id="claim-{_e(c.id)}" class="claim row-{status}"><td class="id">{_e(c.id)}'
            f'<div class="meta">{_e(c.priority)}</div></td><td class="statement">{statement}</td><td>{verdict}</td><td>{outcome}</td><td>{numbers}</td>'
            f"<td>{figure}</td></tr>")


def _check_block(label: str, res: CheckResult, figs: Mapping[str, str]) -> str:
    decided = [cid for cid in res.claims if _decides(res, cid)]
    parts = [f'<article class="check" id="check-{_e(_anchor(label))}"><h4><span class="tag {res.verdict}">'
             f"{res.verdict}</span> <code>{_e(label)}</code> [{_e(', '.join(decided or res.claims))}]</h4>",
             f'<p class="final">{_e(res.final_line())}</p>']
    fig = figs.get(label)
    if fig and not fig.startswith("error:"):
        parts.append(f'<figure id="fig-{_e(_anchor(label))}"><img src="figures/{_e(fig)}" alt="figure of the '
                     f'{_e(label)} run"><figcaption>Figure of <code>{_e(label)}</code>, drawn from this run\'s result '
                     f"(<code>python -m verify.{_e(res.check)} --plot FILE</code>).</figcaption></figure>")
    elif fig:
        parts.append(f'<p class="meta">The figure could not be drawn: {_e(fig[len("error: "):])}</p>')
    for note in res.notes:
        parts.append(f"<p>Note: {_e(note)}</p>")
    info = [r for r in res.records if not r.deciding]
    if info:
        rows = "".join(f"<tr><td><code>{_e(r.name)}</code></td><td>{_e(format_value(r.measured))}</td></tr>"
                       for r in info)
        parts.append(f"<details><summary>informational values ({len(info)})</summary>"
                     f'<table class="nums"><tr><th>quantity</th><th>value</th></tr>{rows}</table></details>')
    params = ", ".join(f"{k}={format_value(v)}" for k, v in res.parameters.items())
    parts.append(f'<p class="meta">parameters: {_e(params)}</p>')
    if res.timings:
        parts.append(f'<p class="meta">time: {_e(", ".join(f"{k} {v:.3g} s" for k, v in res.timings.items()))}</p>')
    parts.append("</article>")
    return "\n".join(parts)


def _decides(res: CheckResult, claim_id: str) -> bool:
    try:
        return decided_by(res, claim_id)
    except ValueError:  # a claim not in the ledger (a user's own check)
        return False


def _summary_table(summary: Mapping[str, Mapping[str, list]]) -> str:
    cats = [c for c in CATEGORIES if any(c in s for s in summary.values())]
    head = "".join(f"<th>{_e(c)}</th>" for c in cats)
    rows = ""
    for paper, by_cat in summary.items():
        short = _SHORT.get(paper, paper)
        cells = "".join(f"<td>{len(by_cat.get(c, []))}</td>" for c in cats)
        rows += f'<tr><td><a href="#paper-{_e(short)}">{_e(short)}</a></td>{cells}</tr>'
    return f'<table class="summary"><tr><th>paper</th>{head}</tr>{rows}</table>' if rows else ""


def render_html(data: Mapping, figs: Mapping[str, str] | None = None) -> str:
    """The static page of a report (``data`` as :func:`report_data` makes it; ``figs``: run label -> PNG name)."""
    figs = dict(figs or {})
    results = _results(data)
    errors = dict(data.get("errors", {}))
    v = data.get("versions", {})
    options = data.get("options", {})
    meta = [f"attention-limits {v.get('attention-limits', '?')}"]
    if v.get("git_commit"):
        meta.append(f"commit {v['git_commit'][:12]}")
    meta += [v.get("timestamp", ""), "full tier" if options.get("full") else "fast tier (defaults)"]
    if options.get("seed") is not None:
        meta.append(f"seed {options['seed']}")
    passed = sum(r.passed for r in results.values())
    failed = len(results) - passed
    out = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<title>attention-limits: report</title>", f"<style>{_CSS}</style></head><body>",
           "<header><h1>attention-limits: what five attention papers claim, checked</h1>",
           f'<p class="meta">{_e(" · ".join(m for m in meta if m))}</p>',
           f'<p class="meta">command: <code>{_e(v.get("command", ""))}</code> · {len(results)} runs of '
           f"{len({r.check for r in results.values()})} checks: {passed} passed, {failed} failed, "
           f"{len(errors)} errors (a check whose claims need several settings runs once per setting)</p>",
           "<p>Each row is one claim of a paper. <em>Paper's verdict</em> is the ledger's verdict on the claim as "
           "printed; the check asserts the precise statement under <em>Checked</em> where that differs. So "
           "<span class=\"tag PASS\">PASS</span> next to <span class=\"tag v-false\">false as printed</span> means "
           "the corrected statement holds and the paper's printed one does not. Deciding numbers are each "
           "assertion's measured value against its expected value and tolerance.</p>",
           _summary_table(data.get("summary_by_paper", {})),
           "<nav>" + "".join(f'<a href="#paper-{_e(s)}">{_e(s)}</a>' for s in PAPERS) + "</nav></header>"]
    for short, paper in PAPERS.items():
        claims_here = [c for c in LEDGER if c.paper == paper]
        if not claims_here:
            continue
        out.append(f'<section id="paper-{_e(short)}"><h2>{_e(short)} · {_e(PAPER_TITLES.get(short, paper))}</h2>')
        out.append('<table class="claims"><colgroup><col style="width:7%"><col style="width:32%">'
                   '<col style="width:10%"><col style="width:12%"><col style="width:33%"><col style="width:6%">'
                   "</colgroup><thead><tr><th>claim</th><th>statement</th><th>paper's verdict</th>"
                   "<th>check outcome</th><th>deciding numbers</th><th>figure</th></tr></thead><tbody>")
        out += [_claim_row(c, results, errors, figs) for c in claims_here]
        out.append("</tbody></table>")
        checks = {c.check for c in claims_here if c.check}
        runs = [label for label, res in results.items() if res.check in checks]
        if runs:
            out.append("<h3>Checks</h3>")
            out += [_check_block(label, results[label], figs) for label in runs]
        out.append("</section>")
    ledger_checks = {c.check for c in LEDGER if c.check}
    others = [label for label, res in results.items() if res.check not in ledger_checks]
    if others:
        out.append('<section id="other-checks"><h2>Other checks</h2>')
        out += [_check_block(label, results[label], figs) for label in others]
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_report(out_dir: str | os.PathLike, rows: Sequence[CheckRow], *, options: Mapping[str, Any] | None = None,
                 quiet: bool | None = None) -> Path:
    """Write ``report.json``, the figures, ``index.html`` and ``claims.md`` into ``out_dir``; returns the page."""
    check_output_dir("--report", out_dir)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = report_data(rows, options=options)
    with open(out / REPORT_JSON, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")
    figs = _draw_figures(_results(data), out / "figures", quiet=quiet)
    page = out / REPORT_HTML
    page.write_text(render_html(data, figs), encoding="utf-8")
    (out / "claims.md").write_text(claims_markdown(data), encoding="utf-8")
    return page
