"""report.html in a real browser: headless Chromium opens each kind of report (drive,
sweep, yard) with name resolution switched off, and its console shows no error, no script
throws, the page asks for nothing but itself and inline data, its scripts draw the plots
(canvases in the rendered DOM) and the screenshot shows them (the plots' own line colours).

Skipped, saying why, where Chromium is not installed; in CI (CI=true) its absence fails
(.ci/run installs Debian's chromium)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from .browser import Browser, chromium, in_ci


@pytest.fixture(scope="module")
def browser():
    executable = chromium()
    if executable is None:
        reason = ("Chromium is not installed (apt-get install chromium): the report's "
                  "browser tests need it")
        if in_ci():
            pytest.fail(f"CI=true: {reason}")
        pytest.skip(reason)
    b = Browser(executable)
    yield b
    b.close()


def pixels(png: bytes) -> np.ndarray:
    """The screenshot as 8-bit RGB."""
    import matplotlib.image

    rgb = matplotlib.image.imread(io.BytesIO(png), format="png")[..., :3]
    return np.round(rgb * 255).astype(int)


def near(rgb: np.ndarray, colour: str, tol: int = 40) -> int:
    """How many pixels are within ``tol`` (per channel) of ``colour`` (#rrggbb)."""
    target = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(rgb - target).max(axis=-1) <= tol).sum())


def opened(browser: Browser, path: Path, plots: int, keep: Path):
    load = browser.open(path, min_canvases=plots)
    (keep / "screenshot.png").write_bytes(load.screenshot)  # to look at when one fails
    assert load.errors == []
    assert load.requests and all(u.startswith(("file:", "data:", "blob:"))
                                 for u in load.requests), load.requests
    assert load.canvases >= plots
    rgb = pixels(load.screenshot)
    assert len(np.unique(rgb.reshape(-1, 3), axis=0)) > 200  # not a blank page
    return rgb


def test_a_drives_report_opens_offline_without_errors_and_shows_its_plots(
        browser, drive_dir, tmp_path):
    # speed, profile, forces, pressures, coupler map
    rgb = opened(browser, drive_dir / "report.html", plots=5, keep=tmp_path)
    for colour in ("#1f77b4", "#2ca02c", "#ff7f0e"):  # speed, gradient, traction lines
        assert near(rgb, colour) > 150, colour
    # the coupler map: a spread of its blues and reds, not a blank square
    reds = (rgb[..., 0] - rgb[..., 2] > 60).sum()
    blues = (rgb[..., 2] - rgb[..., 0] > 60).sum()
    assert reds + blues > 5000


def test_a_sweeps_report_opens_offline_without_errors_and_shows_its_plots(
        browser, sweep_dir, tmp_path):
    # six figures against three parameters (the solver's name as categories)
    rgb = opened(browser, sweep_dir / "report.html", plots=18, keep=tmp_path)
    # the points' outlines: at least two points apart in each panel (cases with equal
    # figures overlap), some 15 px each
    assert near(rgb, "#1f77b4") > 18 * 2 * 15


def test_a_yards_report_opens_offline_without_errors_and_shows_its_plots(
        browser, yard_dir, tmp_path):
    rgb = opened(browser, yard_dir / "report.html", plots=3, keep=tmp_path)
    assert near(rgb, "#1f77b4", tol=30) > 300  # the first cut's lines


def test_the_browser_check_sees_errors_throws_and_fetches(browser, tmp_path):
    # the check itself: a page that logs an error, fetches a script and throws
    page = tmp_path / "bad.html"
    page.write_text('<html><body><script>console.error("logged");</script>'
                    '<script src="https://example.com/x.js"></script>'
                    "<script>notDefined();</script></body></html>")
    load = browser.open(page, min_canvases=0, timeout=5)
    text = "\n".join(load.errors)
    assert "console.error: logged" in text
    assert "notDefined" in text
    assert "https://example.com/x.js" in load.requests
    assert load.canvases == 0
