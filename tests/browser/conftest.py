"""The report page in a real browser: Debian's chromium driven by selenium
through chromium-driver, offline (every host name resolves to nothing), at
1280 pixels wide. Run by .ci/run after the Python package's tests:

    MEMPROF_BIN=target/debug/memprof pytest tests/browser

Each test keeps a screenshot under $MEMPROF_SCREENSHOTS (default
target/browser-screenshots/) for a person to look at.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ORACLE = REPO / "fixtures" / "oracle"
WIDTH = 1280


def tool(env: str, name: str) -> str:
    path = str((REPO / os.environ[env]) if env in os.environ else REPO / "target" / "debug" / name)
    assert Path(path).exists(), f"{path}: build it first (cargo build), or set {env}"
    return path


@pytest.fixture(scope="session")
def memprof():
    path = tool("MEMPROF_BIN", "memprof")

    # From the repository, so that pages name fixtures as `fixtures/...`.
    def run(*args) -> subprocess.CompletedProcess:
        return subprocess.run([path, *map(str, args)], check=True, capture_output=True, text=True, cwd=REPO)

    return run


@pytest.fixture(scope="session")
def memprof_gen():
    path = tool("MEMPROF_GEN", "memprof-gen")

    def run(*args):
        subprocess.run([path, *map(str, args)], check=True, capture_output=True)

    return run


@pytest.fixture(scope="session")
def shots() -> Path:
    out = Path(os.environ.get("MEMPROF_SCREENSHOTS") or REPO / "target" / "browser-screenshots")
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="session")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # selenium downloads nothing
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    profile = tempfile.mkdtemp(prefix="memprof-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--window-size={WIDTH},900",
        "--hide-scrollbars",
        # Offline: a page that tried to fetch anything would fail to, but
        # for the local JupyterLab server (test_jupyterlab.py).
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def console_errors(driver) -> list:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


# Resolves, once the page's script has run and every frame of its graph
# has its width, with that time in milliseconds since navigation began.
DRAWN = """
const done = arguments[arguments.length - 1];
(function poll() {
  const rects = [...document.querySelectorAll('#chart g.frame rect')];
  if (window.memprofReady && rects.length && rects.every(r => r.getAttribute('width'))) done(performance.now());
  else requestAnimationFrame(poll);
})();
"""


def open_page(driver, path: Path, height: int = 900) -> float:
    """Loads a report page; returns when it was drawn (ms since navigation)."""
    driver.set_window_size(WIDTH, height)
    console_errors(driver)  # forget what earlier pages logged
    driver.set_script_timeout(20)
    driver.get(path.as_uri())
    drawn = driver.execute_async_script(DRAWN)
    time.sleep(0.3)  # labels, and the last frame painted
    return drawn


def wait_for(condition, timeout: float = 10.0):
    end = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError("timed out waiting for the page")
        time.sleep(0.05)


def page_data(path: Path) -> dict:
    """The page's document, as its script reads it."""
    text = path.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="memprof-data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))


def tree(view: dict) -> dict:
    """A view's tree as nested dicts (name, bytes, old bytes, children), rebuilt from
    its preorder columns as the page does."""
    t = view["tree"]
    old = t.get("old_bytes") or [None] * len(t["name"])
    nodes = [
        {"name": t["names"][n], "bytes": b, "old": o, "children": []}
        for n, b, o in zip(t["name"], t["bytes"], old)
    ]
    open_ = [[nodes[0], t["children"][0]]]
    for i in range(1, len(nodes)):
        while open_[-1][1] == 0:
            open_.pop()
        open_[-1][0]["children"].append(nodes[i])
        open_[-1][1] -= 1
        open_.append([nodes[i], t["children"][i]])
    return nodes[0]


def human(n: int) -> str:
    """Bytes as the page writes them (binary prefixes, one decimal)."""
    if n < 1024:
        return f"{n:,} B"
    value, unit = n / 1024, 0
    units = ["KiB", "MiB", "GiB", "TiB"]
    while value >= 1024 and unit + 1 < len(units):
        value, unit = value / 1024, unit + 1
    return f"{value:.1f} {units[unit]}"


# A notebook as a user would write it: an OMMX Artifact's profile (what OMMX
# users mostly hold) and a Diff as cells' last expressions.
NOTEBOOK_CELLS = [
    "import ommx_memprof\n"
    "from ommx.artifact import Artifact\n"
    f"artifact = Artifact.load_archive({str(ORACLE / 'multi.ommx')!r})",
    "ommx_memprof.profile(artifact)",
    f"ommx_memprof.profile({str(ORACLE / 'obj_linear.pb')!r}).diff({str(ORACLE / 'obj_linear_constant.pb')!r})",
]


class Executed:
    """A notebook executed by nbconvert (as CI runs one: its outputs are not
    trusted), the folder it was run in, and the Jupyter path holding the
    kernel it ran on."""

    def __init__(self, notebook, dir: Path, jupyter_path: Path):
        self.notebook, self.dir, self.jupyter_path = notebook, dir, jupyter_path


@pytest.fixture(scope="session")
def executed_notebook(tmp_path_factory) -> Executed:
    import sys

    import nbformat
    from nbconvert.preprocessors import ExecutePreprocessor

    d = tmp_path_factory.mktemp("notebook")
    # A kernel of this very interpreter (which has the wheel), whatever
    # kernels the machine has.
    spec = d / "jupyter" / "kernels" / "memprof-tests"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "memprof tests", "language": "python"}))
    os.environ["JUPYTER_PATH"] = str(d / "jupyter")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in NOTEBOOK_CELLS]
    ExecutePreprocessor(timeout=120, kernel_name="memprof-tests").preprocess(nb, {"metadata": {"path": str(d)}})
    return Executed(nb, d, d / "jupyter")
