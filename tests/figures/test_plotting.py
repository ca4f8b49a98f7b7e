"""figures._plotting: the house style, captions inside the figure, plain log ticks, saving."""

import pytest

from figures import _plotting
from figures._plotting import caption, output_options, plain_log_ticks, pyplot, save


def test_house_style_is_applied():
    plt = pyplot()
    import matplotlib

    assert _plotting.STYLE_FILE.is_file()
    assert matplotlib.get_backend().lower() == "agg"
    assert plt.rcParams["savefig.dpi"] == 300 and plt.rcParams["pdf.fonttype"] == 42
    assert plt.rcParams["axes.spines.top"] is False


def test_caption_stays_inside_the_figure_and_below_the_axes():
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.0, 3.0))
    ax.set_xlabel("x label")
    caption(fig, "word " * 120)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    text = fig.texts[-1].get_window_extent(renderer)
    frame = fig.bbox
    assert text.x0 >= frame.x0 and text.x1 <= frame.x1 + 1 and text.y0 >= frame.y0
    label = ax.xaxis.label.get_window_extent(renderer)
    assert label.y0 > text.y1  # the axes and their labels sit above the caption
    plt.close(fig)


@pytest.mark.parametrize("limits, minor_labelled", [((1, 20), True), ((1e-4, 1e2), False), ((2e5, 5e6), True),
                                                    ((1e-12, 1e4), False)])
def test_plain_log_ticks_use_one_kind_of_label(limits, minor_labelled):
    plt = pyplot()
    fig, ax = plt.subplots()
    ax.loglog([limits[0], limits[1]], [limits[0], limits[1]])
    ax.set_xlim(*limits)
    ax.set_ylim(*limits)
    plain_log_ticks(ax)
    # get_xticklabels sets each label's text from the formatters (no draw needed: the texts are what is tested,
    # and laying out a wide log axis's mathtext labels cost most of this test)
    labels = [t.get_text() for t in ax.get_xticklabels(minor=False) + ax.get_xticklabels(minor=True) if t.get_text()]
    plain = limits[0] >= 1e-4 and limits[1] <= 1e5
    assert labels and all(("$" not in s) is plain for s in labels)  # all plain or all 10^k, never mixed
    assert not any("e+" in s or "e-" in s for s in labels)
    assert any(t.get_text() for t in ax.get_xticklabels(minor=True)) is minor_labelled
    plt.close(fig)


def test_save_writes_each_format_with_the_dpi_of_the_session(tmp_path, house_dpi):
    from PIL import Image

    plt = pyplot()
    for dpi in (None, 72):
        fig, ax = plt.subplots(figsize=(2.0, 2.0))
        ax.plot([0, 1])
        ax.set_xticks([])  # no text: nothing to lay out or embed (fonts in a PDF: the tests below)
        ax.set_yticks([])
        if dpi is None:
            paths = save(fig, tmp_path / "a", "f", ("png", "pdf"))
        else:
            with output_options(dpi=dpi):
                paths = save(fig, tmp_path / "b", "f", ("png",))
        assert [p.suffix for p in paths] == ([".png", ".pdf"] if dpi is None else [".png"])
        with Image.open(paths[0]) as im:
            assert im.info["dpi"][0] == pytest.approx(dpi or 300, abs=0.5)
    assert _plotting.current_dpi() == 300  # the session setting ends with its block
    with pytest.raises(ValueError, match="format"):
        save(plt.figure(), tmp_path, "g", ("jpg",))


def test_pdf_bytes_do_not_depend_on_the_time(tmp_path):
    plt = pyplot()
    out = []
    for sub in ("x", "y"):
        fig, ax = plt.subplots(figsize=(2.0, 2.0))
        ax.plot([0, 1], [1, 0])
        out.append(save(fig, tmp_path / sub, "f", ("pdf",))[0].read_bytes())
    assert out[0] == out[1]


def test_pdf_with_mathtext_symbols_saves_without_font_warnings(tmp_path, caplog):
    # the prime of H'' comes from matplotlib's cmsy10.ttf, whose zero timestamps made fontTools warn
    import logging

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(2.0, 1.0))
    ax.set_title(r"PDE $\partial_t H = H'' + 2(\log p)'H'$")
    with caplog.at_level(logging.WARNING):
        save(fig, tmp_path, "f", ("pdf",))
    assert not [r for r in caplog.records if r.name.startswith("fontTools")]
