"""Matplotlib set-up in one place: the Agg backend, the house style, captions, log ticks, saving.

Every figure module gets ``pyplot`` from here, so all figures share one look: the style file
``figures/house.mplstyle`` (fonts, sizes, grid, 300-dpi PNG, PDF with embedded TrueType fonts).
Imported only by figure modules (never at ``import figures``), so the checks start fast.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
import os
import textwrap
from pathlib import Path

import numpy as np

__all__ = ["STYLE_FILE", "FORMATS", "DEFAULT_DPI", "pyplot", "caption", "check_title", "plain_log_ticks",
           "output_options", "current_dpi", "save"]

#: The house style applied to every figure.
STYLE_FILE = Path(__file__).with_name("house.mplstyle")
#: File formats a figure can be saved in (PDF and SVG are vector; PNG is raster at the chosen dpi).
FORMATS = ("png", "pdf", "svg")
#: Raster resolution of PNG files unless ``python -m figures --dpi`` says otherwise.
DEFAULT_DPI = 300

_DPI = contextvars.ContextVar("figures_dpi", default=DEFAULT_DPI)


def _quiet_font_timestamps(record) -> bool:
    # matplotlib's bundled cmsy10.ttf (a mathtext fallback glyph font) has zero creation/modification dates in
    # its 'head' table; fontTools warns about it on every PDF that embeds a subset. Nothing is wrong.
    return "timestamp seems very low" not in record.getMessage()


def pyplot():
    """``matplotlib.pyplot`` with the non-interactive Agg backend selected and the house style applied."""
    import matplotlib

    font_log = logging.getLogger("fontTools.ttLib.tables._h_e_a_d")
    if _quiet_font_timestamps not in font_log.filters:
        font_log.addFilter(_quiet_font_timestamps)

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.style.use(os.fspath(STYLE_FILE))
    return plt


def caption(fig, text: str, *, fontsize: float = 7.0, top: float = 1.0) -> None:
    """Write ``text`` under the axes of ``fig``, wrapped to the figure width, and lay the axes out above it.

    Call it once, after every axes is drawn (it runs ``tight_layout`` on the room left above the text);
    ``top`` < 1 keeps a band free at the top of the figure (for a figure-wide legend or title).
    """
    width_in, height_in = fig.get_size_inches()
    # DejaVu Sans averages ~0.56 em per character: 7 pt text holds about 72 / 3.9 characters per inch
    lines = textwrap.wrap(" ".join(text.split()), width=max(int(width_in * 72 / (0.56 * fontsize)) - 2, 20))
    room = (len(lines) * fontsize * 1.3 / 72 + 0.12) / height_in
    fig.tight_layout(rect=(0, room, 1, top))
    fig.text(0.01, 0.01, "\n".join(lines), ha="left", va="bottom", fontsize=fontsize, linespacing=1.3)


def check_title(result, ax, what: str) -> None:
    """The title of a check's --plot panel: the check, its verdict, then what the panel shows."""
    ax.set_title(f"{result.check}: {result.verdict}; {what}", fontsize=8)


def plain_log_ticks(ax, axis: str = "both") -> None:
    """Label a log axis with tick labels of one kind instead of mixing 10^k, 2x10^0 and 0.5.

    Within [1e-4, 1e5] the labels are plain numbers (0.001, 2, 30); an axis reaching outside that range
    is labelled 10^k throughout. Major ticks (powers of ten) are always labelled; minor ticks are labelled
    where the powers of ten alone would leave the axis nearly bare: at 2 and 5 times a power of ten when
    the axis spans less than two decades, at 2, 3, 4, 5, 6 and 8 times when it spans less than one.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    def plain(v):
        return np.format_float_positional(float(f"{v:.6g}"), trim="-")

    def sci(v):
        e = math.floor(math.log10(v) + 1e-9)
        m = round(v / 10**e)
        return f"$10^{{{e}}}$" if m == 1 else rf"${m}\times10^{{{e}}}$"

    for name in ("x", "y") if axis == "both" else (axis,):
        axis_ = ax.xaxis if name == "x" else ax.yaxis
        if axis_.get_scale() != "log":
            continue
        lo, hi = sorted(ax.get_xlim() if name == "x" else ax.get_ylim())
        decades = math.log10(hi / lo) if lo > 0 else math.inf
        style = plain if lo >= 1e-4 and hi <= 1e5 else sci

        def label(labelled, style=style):
            def fmt(v, _pos=None):
                if v <= 0:
                    return ""
                mantissa = round(v / 10 ** math.floor(math.log10(v) + 1e-9))
                return style(v) if mantissa in labelled else ""
            return FuncFormatter(fmt)

        axis_.set_major_locator(LogLocator(base=10))
        axis_.set_major_formatter(label((1,)))
        axis_.set_minor_locator(LogLocator(base=10, subs=tuple(range(2, 10))))
        if decades < 1:
            axis_.set_minor_formatter(label((2, 3, 4, 5, 6, 8)))
        elif decades < 2:
            axis_.set_minor_formatter(label((2, 5)))
        else:
            axis_.set_minor_formatter(NullFormatter())


@contextlib.contextmanager
def output_options(*, dpi: int = DEFAULT_DPI):
    """Within the block, :func:`save` writes PNG files at ``dpi`` (``python -m figures --dpi``)."""
    token = _DPI.set(int(dpi))
    try:
        yield
    finally:
        _DPI.reset(token)


def current_dpi() -> int:
    """The PNG resolution :func:`save` uses now (``DEFAULT_DPI`` unless inside :func:`output_options`)."""
    return _DPI.get()


def save(fig, out_dir, name: str, formats=("png",)) -> list[Path]:
    """Save ``fig`` as ``out_dir/name.<fmt>`` for each format, close it and return the paths written."""
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {bad[0]!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        path = out / f"{name}.{fmt}"
        # no creation date in vector files: regenerating a figure gives the same bytes for the same data
        metadata = {"Creator": "attention-limits figures", **({"CreationDate": None} if fmt == "pdf" else {}),
                    **({"Date": None} if fmt == "svg" else {})}
        fig.savefig(os.fspath(path), format=fmt, dpi=current_dpi() if fmt == "png" else None, metadata=metadata)
        paths.append(path)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return paths
