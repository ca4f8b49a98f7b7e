"""figures.drift: DRIFT Fig. 2 renders a non-empty PNG from verify.euler_steps."""

import pytest

from figures import drift
from figures.__main__ import registry


def test_registered():
    assert "drift-2" in registry()


@pytest.mark.slow
def test_drift2_writes_png(tmp_path):
    paths = drift.fig_drift2(tmp_path)
    assert [p.name for p in paths] == ["drift-2.png"]
    assert paths[0].stat().st_size > 10_000
