"""`acclab report`'s pages in a real browser (issue 54 §7): headless Chromium (Debian's
chromium, driven through its chromium-driver by Selenium) loads the page of a run, a sweep and
a directory of reproductions from the files alone; the browser logs no error or warning, every
figure the page names is loaded and drawn, and a screenshot of the whole page shows the tables
and the figures' coloured lines.

Without the browser the test is skipped, saying so; with ACCLAB_REQUIRE_BROWSER=1 (CI as
root, which installs it) a missing browser fails it.
"""

import json
import os
import shutil
import subprocess
from io import BytesIO
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def browser():
    if not (Path(CHROMIUM).is_file() and Path(DRIVER).is_file()):
        why = f"no headless browser: {CHROMIUM} and {DRIVER} (Debian's chromium, chromium-driver)"
        if os.environ.get("ACCLAB_REQUIRE_BROWSER") == "1":
            pytest.fail(why)
        pytest.skip(why)
    from selenium import webdriver

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    # Root in a container needs --no-sandbox; the rest keeps Chromium from calling home on a
    # closed network (each refused connection would be a console error).
    for flag in [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--window-size=1200,900",
    ]:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=DRIVER))
    yield driver
    driver.quit()


def acclab(bin_, cwd, *args):
    out = subprocess.run([str(Path(bin_).resolve()), *args], cwd=cwd, capture_output=True, text=True)
    assert out.returncode == 0, f"acclab {args}: {out.stdout}{out.stderr}"
    return out.stdout


def check_page(driver, report: Path, shot: Path, title: str):
    """Loads report/index.html and checks what a reader would see; returns the page's text."""
    import numpy as np
    from PIL import Image

    figures = json.loads((report / "report.json").read_text())["figures"]
    assert figures, "the page shows figures"
    driver.get(report.joinpath("index.html").resolve().as_uri())
    assert driver.title == title
    # Every image loaded and decoded: complete, with its natural size.
    images = driver.execute_script(
        "return Array.from(document.images).map(i => "
        "[i.getAttribute('src'), i.complete, i.naturalWidth, i.naturalHeight])"
    )
    assert [i[0] for i in images] == figures
    for src, complete, w, h in images:
        assert complete and w > 100 and h > 100, f"{src} did not load ({w}×{h})"
    # Nothing went wrong on the way: no console message at all (errors, failed loads, warnings).
    logs = driver.get_log("browser")
    assert logs == [], f"the browser logged: {logs}"
    # The whole page, captured at its full height.
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1200, min(height + 100, 16000))
    driver.save_screenshot(str(shot))
    img = Image.open(shot).convert("RGB")
    assert img.width >= 1000 and img.height >= min(height, 15000) * 0.9, img.size
    px = np.asarray(img, dtype=np.int16)
    spread = px.max(axis=2) - px.min(axis=2)
    # Text and table rules are grey to black; the plots' lines are coloured (saturated pixels).
    dark = int((px.max(axis=2) < 100).sum())
    coloured = int((spread > 80).sum())
    assert dark > 5000, f"{shot}: hardly any text ({dark} dark pixels)"
    assert coloured > 1000 * len(figures), f"{shot}: {coloured} coloured pixels for {len(figures)} figures"
    return driver.find_element("tag name", "body").text


def test_pages_load_in_chromium_without_errors(browser, acclab_bin, tmp_path):
    acclab(acclab_bin, tmp_path, "demo", "--out", "run")
    acclab(acclab_bin, tmp_path, "report", "run", "-q")
    text = check_page(browser, tmp_path / "run/report", tmp_path / "run.png", "simulation of demo")
    assert "reno-rtt24ms" in text and "How it was made" in text

    root = Path(__file__).resolve().parents[2]
    acclab(
        acclab_bin, tmp_path, "sweep", str(root / "scenarios/examples/demo.toml"),
        "--set", 'link."r1->r2".rate=50Mbps,100Mbps', "--seeds", "3", "--out", "sw", "-q",
    )
    acclab(acclab_bin, tmp_path, "report", "sw", "-q")
    text = check_page(browser, tmp_path / "sw/report", tmp_path / "sweep.png", "sweep sw")
    assert "identical replicates" in text or "95%" in text

    for e in ["acc-fig2", "vegas-fig8"]:
        acclab(acclab_bin, tmp_path, "reproduce", e, "--quick", "--out", f"repro/{e}")
    acclab(acclab_bin, tmp_path, "report", "repro", "-q")
    text = check_page(browser, tmp_path / "repro/report", tmp_path / "repro.png", "acclab results: repro")
    assert "2 of 2 reproductions pass" in text
    # The outcome's colour: a passing check's cell is green, an information row's grey.
    colours = browser.execute_script(
        "return ['tr.pass td:last-child', 'tr.unchecked td'].map(s => "
        "getComputedStyle(document.querySelector(s)).color)"
    )
    assert colours == ["rgb(23, 99, 23)", "rgb(102, 102, 102)"], colours
