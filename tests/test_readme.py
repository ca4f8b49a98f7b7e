"""The README's library example runs as printed and gives the numbers its comment states."""

import contextlib
import io
import pathlib
import re

import numpy as np

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_library_example_runs_and_matches_its_comment():
    text = README.read_text(encoding="utf-8")
    block = re.search(r"Or use it as a library.*?```python\n(.*?)```", text, re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {})
    printed = np.array([float(v) for v in out.getvalue().strip().strip("[]").split()])
    stated = np.array([float(v) for v in re.search(r"# (0, [\d., ]+)\n", block).group(1).split(",")])
    # the comment rounds to two decimals; the zero mode is 0 to rounding (4e-15 measured)
    np.testing.assert_allclose(printed, stated, atol=0.006)
