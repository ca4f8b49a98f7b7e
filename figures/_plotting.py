"""Matplotlib set-up in one place: the Agg backend, house style, saving to a directory.

Imported only by figure modules (never at ``import figures``), so the checks start fast.
"""

from __future__ import annotations

import os
from pathlib import Path


def pyplot():
    """``matplotlib.pyplot`` with the non-interactive Agg backend selected."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight", "font.size": 9,
                         "axes.grid": True, "grid.alpha": 0.3})
    return plt


def save(fig, out_dir, name: str, formats=("png",)) -> list[Path]:
    """Save ``fig`` as ``out_dir/name.<fmt>`` for each format; returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        if fmt not in ("png", "pdf", "svg"):
            raise ValueError(f"format must be one of png, pdf, svg, got {fmt!r}")
        path = out / f"{name}.{fmt}"
        fig.savefig(os.fspath(path))
        paths.append(path)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return paths
