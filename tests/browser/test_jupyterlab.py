"""The report in JupyterLab itself (`jupyterlab` from PyPI, a server of its
own on 127.0.0.1, chromium through selenium), as a user meets it: the
notebook nbconvert executed (as CI does) opened untrusted, then the same
notebook signed (trusted).

Untrusted, JupyterLab sanitizes each output's HTML and shows that (no frame,
no script): the static summary must be there and readable. Trusted, the
interactive page runs in its frame, the summary hidden; the frame is as tall
as the page whichever way the page changes, and nothing scrolls inside it: a
wheel over a report scrolls the notebook."""

import copy
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By

from conftest import WIDTH, wait_for

pytest.importorskip("jupyterlab")
pytest.importorskip("ommx_memprof")

OUTPUTS = ".jp-Notebook .jp-OutputArea-output"

# Inside a frame: whether the page is drawn, the graph's width, the body's
# height, and how far the document could scroll (down, sideways) and has.
INSIDE = """
const svg = document.querySelector('#chart svg');
const e = document.documentElement;
return {ready: window.memprofReady || 0, graph: svg ? svg.getBoundingClientRect().width : 0,
        body: document.body.getBoundingClientRect().height,
        down: e.scrollHeight - e.clientHeight, across: e.scrollWidth - e.clientWidth,
        scrolled: window.scrollY + window.scrollX};
"""

# The notebook's scrolling box: the nearest ancestor of the frame that scrolls.
SCROLLER = """
for (let e = arguments[0].parentElement; e; e = e.parentElement) {
  const y = getComputedStyle(e).overflowY;
  if ((y === 'auto' || y === 'scroll') && e.scrollHeight > e.clientHeight) return e;
}
return null;
"""


@pytest.fixture(scope="module")
def lab(executed_notebook, tmp_path_factory):
    """A JupyterLab server over a folder holding the executed notebook twice:
    `untrusted.ipynb` as nbconvert wrote it, `trusted.ipynb` signed."""
    import nbformat
    from nbformat.sign import NotebookNotary

    root = tmp_path_factory.mktemp("lab")
    env = dict(os.environ, JUPYTER_PATH=str(executed_notebook.jupyter_path))
    for var, sub in [
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTERLAB_SETTINGS_DIR", "settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
    ]:
        env[var] = str(root / sub)
        (root / sub).mkdir()
    # No question about news on first start.
    (root / "config" / "labconfig").mkdir()
    (root / "config" / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    # A notebook's kernel starts without asking which (no dialog over the page).
    tracker = root / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"autoStartDefaultKernel": True}))
    notebooks = root / "notebooks"
    notebooks.mkdir()
    nb = copy.deepcopy(executed_notebook.notebook)
    nbformat.write(nb, notebooks / "untrusted.ipynb")
    # Signed with the secret the server reads (its data dir): trusted. A
    # signature is of the content, which must differ from the untrusted one's.
    nb.metadata["title"] = "trusted"
    NotebookNotary(data_dir=str(root / "data")).sign(nb)
    nbformat.write(nb, notebooks / "trusted.ipynb")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
            "--IdentityProvider.token=", "--ServerApp.password=", f"--ServerApp.root_dir={notebooks}"]
    if os.geteuid() == 0:
        args.append("--allow-root")
    log = open(root / "server.log", "w")
    server = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"

    def up():
        assert server.poll() is None, (root / "server.log").read_text()
        try:
            return urllib.request.urlopen(f"{url}/api/status", timeout=2).status == 200
        except OSError:
            return False

    try:
        wait_for(up, timeout=60)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def open_notebook(browser, url: str, name: str):
    browser.set_window_size(WIDTH, 1000)
    # A workspace of its own: only this notebook open.
    browser.get(f"{url}/lab/workspaces/{name.split('.')[0]}/tree/{name}")
    # Both reports' outputs (the first cell has none).
    return wait_for(lambda: len(found := browser.find_elements(By.CSS_SELECTOR, OUTPUTS)) >= 2 and found, 90)


def test_an_untrusted_notebook_shows_each_report_s_summary(browser, lab, shots):
    outputs = open_notebook(browser, lab, "untrusted.ipynb")
    summaries = wait_for(
        lambda: len(s := browser.find_elements(By.CSS_SELECTOR, f"{OUTPUTS} .ommx-memprof-summary")) == 2 and s
    )
    # Sanitized: no frame, no script; the summary is all there is.
    assert not browser.find_elements(By.CSS_SELECTOR, f"{OUTPUTS} iframe")
    profile, diff = summaries
    browser.execute_script("arguments[0].scrollIntoView()", profile)
    assert profile.is_displayed() and diff.is_displayed()
    text = profile.text
    assert "memprof: " in text and " holds " in text and "3 instance layers" in text, text
    assert "the largest paths by the bytes they hold" in text and "100.0%" in text, text
    # Its largest paths, one per row (the first is the largest).
    rows = profile.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) >= 3 and rows[-1].text.startswith("total"), [r.text for r in rows]
    assert "Trust Notebook" in text and "jupyter trust" in text, text
    assert "memprof diff: " in diff.text and "the largest changes" in diff.text, diff.text
    # Readable: the table spans the output, its path column too.
    table = profile.find_element(By.TAG_NAME, "table")
    assert table.rect["width"] > 600, table.rect
    assert outputs[0].rect["height"] > 200
    time.sleep(0.3)
    browser.save_screenshot(str(shots / "jupyterlab-untrusted.png"))
    browser.execute_script("arguments[0].scrollIntoView()", diff)
    time.sleep(0.3)
    browser.save_screenshot(str(shots / "jupyterlab-untrusted-diff.png"))


def inside(browser, frame) -> dict:
    browser.switch_to.frame(frame)
    try:
        return wait_for(lambda: (v := browser.execute_script(INSIDE))["ready"] and v["graph"] and v)
    finally:
        browser.switch_to.default_content()


def follows(browser, frame) -> dict:
    """Waits until the frame is as tall as its page; returns the page's figures."""

    def fitted():
        v = inside(browser, frame)
        return abs(frame.rect["height"] - v["body"]) <= 2 and v

    return wait_for(fitted)


def test_a_trusted_notebook_runs_each_report_in_a_frame_as_tall_as_its_page(browser, lab, shots):
    open_notebook(browser, lab, "trusted.ipynb")
    frames = wait_for(
        lambda: len(f := browser.find_elements(By.CSS_SELECTOR, f"{OUTPUTS} iframe.ommx-memprof-report")) == 2 and f
    )
    for frame in frames:
        browser.execute_script("arguments[0].scrollIntoView()", frame)
        v = follows(browser, frame)
        # The graph spans the cell; nothing scrolls inside.
        assert v["graph"] > 700 and frame.rect["width"] > 700, (v, frame.rect)
        assert v["down"] <= 0 and v["across"] <= 0, v
        # The summary for notebooks that run no script is hidden.
        summary = frame.find_element(By.XPATH, "preceding-sibling::div[@class='ommx-memprof-summary']")
        assert not summary.is_displayed()

    frame = frames[0]
    browser.execute_script("arguments[0].scrollIntoView()", frame)
    time.sleep(0.3)
    browser.save_screenshot(str(shots / "jupyterlab-trusted.png"))
    short = follows(browser, frame)["body"]

    # A section opened grows the frame; closed, the frame shrinks back.
    def toggle():
        browser.switch_to.frame(frame)
        browser.find_element(By.CSS_SELECTOR, "section#top > details > summary").click()
        browser.switch_to.default_content()

    toggle()
    tall = wait_for(lambda: (b := follows(browser, frame)["body"]) > short + 100 and b)
    toggle()
    wait_for(lambda: abs(follows(browser, frame)["body"] - short) <= 2)

    # A narrower window makes the page taller and the frame with it; wider
    # again, the frame shrinks back. (1000 pixels: the frame 670 wide beside
    # JupyterLab's file browser.)
    browser.set_window_size(1000, 1000)
    narrow = wait_for(lambda: (b := follows(browser, frame)["body"]) > short + 20 and b)
    v = follows(browser, frame)
    assert v["down"] <= 0 and v["across"] <= 0, v
    browser.execute_script("arguments[0].scrollIntoView()", frame)
    time.sleep(0.3)
    browser.save_screenshot(str(shots / "jupyterlab-trusted-narrow.png"))
    browser.set_window_size(WIDTH, 1000)
    wait_for(lambda: abs(follows(browser, frame)["body"] - short) <= 2)
    assert tall > narrow > short

    # The first wheel notch over a report scrolls the notebook, not the frame.
    browser.execute_script("arguments[0].scrollIntoView()", frame)
    time.sleep(0.3)
    scroller = browser.execute_script(SCROLLER, frame)
    assert scroller is not None
    before = browser.execute_script("return arguments[0].scrollTop", scroller)
    ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(frame, 0, 0), 0, 120).perform()
    wait_for(lambda: browser.execute_script("return arguments[0].scrollTop", scroller) >= before + 60)
    assert inside(browser, frame)["scrolled"] == 0
