"""Captions agree with the results they draw: verdicts stated with the reason in words, numbers read from the result.

fna-5a (verify.multiscale) and neural-1 (verify.neural_geometry): each caption is built from one small run
(computed once per module), then from the same result with one assertion made to fail, to show that a FAIL is
stated with what failed and whether the figure draws it.
"""

import dataclasses
import re

import pytest

from figures.fna_mechanism import fig5a_caption
from figures.neural import neural1_caption
from verify.core.claims import claim_records
from verify.core.result import format_value

#: a cheap Fig. 5a grid that passes (n = 16 does not: FNA rows are less uniform there, FNA-16): one token type,
#: d = 8, the gap ordering and the hop counts both asserted
CHEAP_5A = dict(datasets=("gaussian",), dims=(8,), sizes=(32, 64), draws=2, dm_dims=(8,), dm_n=32,
                alphas=(1.2, 2.0))


@pytest.fixture(scope="module")
def multiscale():
    from verify import multiscale

    return multiscale.run(**CHEAP_5A)


@pytest.fixture(scope="module")
def geometry():
    from verify import neural_geometry

    return neural_geometry.run(grid=101, surface_grid=31)


def _failing(res, name):
    """``res`` with the assertion ``name`` failing (its measured value moved past its bound)."""
    def broken(r):
        if r.name != name:
            return r
        bad = {"at_least": -1e9, "at_most": 1e9}.get(r.sense, float("nan"))
        return dataclasses.replace(r, measured=bad)

    return dataclasses.replace(res, records=tuple(broken(r) for r in res.records))


def _plain(text):
    assert "`" not in text, "no markdown in a caption"
    return text


def test_fig5a_caption_states_a_pass(multiscale):
    assert multiscale.passed, multiscale.failures
    text = _plain(fig5a_caption(multiscale))
    assert text.endswith("verify.multiscale on this grid: PASS.")
    p = multiscale.parameters
    assert f"n = {p['sizes'][-1]} tokens" in text and f"seed {p['seed']}" in text
    assert "the ordering reverses (FNA-17)" in text


def test_fig5a_caption_says_a_fail_off_the_figure_and_why(multiscale):
    hop = next(r for r in multiscale.records if r.deciding and r.name.startswith("hops_local_paper_"))
    res = _failing(multiscale, hop.name)
    text = _plain(fig5a_caption(res))
    assert "FAIL, not on the gaps drawn here (every FNA-17 assertion holds) but on 1 assertion this figure does not " \
           "draw" in text
    failed = res.record(hop.name)
    assert f"{hop.name} = {format_value(failed.measured)}, expected {failed.expectation()}" in text
    assert "the ordering reverses (FNA-17)" in text  # the gaps drawn still hold, so the sentence stays


def test_fig5a_caption_says_a_fail_of_what_it_draws(multiscale):
    gap = next(r for r in claim_records(multiscale, "FNA-17") if r.sense == "at_least")
    text = _plain(fig5a_caption(_failing(multiscale, gap.name)))
    assert "FAIL, on the gaps drawn here" in text and gap.name in text
    assert "the ordering reverses" not in text  # not claimed when the check does not support it


def test_fig5a_caption_names_a_bound_off_the_calibrated_grid(multiscale):
    from verify.multiscale import CALIBRATION

    hop = next(r for r in multiscale.records if r.deciding and r.name.startswith("hops_local_paper_"))
    renamed = dataclasses.replace(multiscale, records=tuple(
        dataclasses.replace(r, name=r.name.replace("_d8", "_d64"), measured=-1e9) if r.name == hop.name else r
        for r in multiscale.records))
    assert hop.name.replace("_d8", "_d64") not in {row.name for row in CALIBRATION}
    text = fig5a_caption(renamed)
    assert "(a bound measured on the check's own grid, d = 8, 32, and not at this setting)" in text


def test_neural1_caption_counts_lines_and_cells_from_the_result(geometry):
    assert geometry.passed, geometry.failures
    text = _plain(neural1_caption(geometry))
    cells, h = geometry.quantities.cells, geometry.parameters["hidden"]
    assert f"Of its {h} crease lines" in text
    assert f"{cells.lines_crossing_square} cross the square (red); they cut it into " \
           f"{cells.regions_by_sign_patterns} cells" in text
    assert f"= {geometry.measured['arrangement_bound']} for h lines" in text
    numbers = {int(n) for n in re.findall(r"(?<![\w.^-])(\d+)(?![\w.^])", text)}
    allowed = {h, cells.lines_crossing_square, cells.regions_by_sign_patterns, geometry.measured["arrangement_bound"],
               geometry.parameters["seed"], 1, 2, 0}
    assert numbers <= allowed, f"numbers typed into the caption: {numbers - allowed}"
    assert text.endswith("Check neural_geometry: PASS.")


def test_neural1_caption_states_a_fail_with_what_failed(geometry):
    res = _failing(geometry, "regions_vs_bound")
    text = neural1_caption(res)
    assert "Check neural_geometry: FAIL (" in text and "regions_vs_bound" in text


def test_neural1_caption_of_a_smooth_surface():
    from verify import neural_geometry

    res = neural_geometry.run(grid=51, surface_grid=21, activation="tanh")
    text = neural1_caption(res)
    assert "no crease lines" in text and "cross the square" not in text
