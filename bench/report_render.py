#!/usr/bin/env python3
"""How large `memprof report` pages are and how fast Chromium draws them.

A benchmark, not a test: issue 28's targets (a page under 5 MB, drawn in
under 2 s) are measured here; the browser tests only check that a large page
is drawn at all. For each input it writes the report page with the release
binary, opens it in Debian's headless chromium (selenium, offline) at 1280
pixels, and records when every frame of the graph has its width, in
milliseconds since navigation began (the best of --runs loads, as noise only
ever slows). Prints a markdown table.

    python3 -m venv /tmp/sel && /tmp/sel/bin/pip install 'selenium>=4.20,<5'
    cargo build --release --bins
    /tmp/sel/bin/python bench/report_render.py [--runs 5]

Inputs (generated into target/bench/ by memprof-gen unless already there):
lp-200000x50-of-1000000.pb (1.2 million entities, 198 MB), an archive of
2,000 instance layers (62,000 paths before folding) and the moderate fixture.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "target" / "bench"
RELEASE = REPO / "target" / "release"

# The same readiness signal as tests/browser/conftest.py: the page's script
# has run and every frame of the graph has its width.
DRAWN = """
const done = arguments[arguments.length - 1];
(function poll() {
  const rects = [...document.querySelectorAll('#chart g.frame rect')];
  if (window.memprofReady && rects.length && rects.every(r => r.getAttribute('width'))) done(performance.now());
  else requestAnimationFrame(poll);
})();
"""

INPUTS = [
    ("LP, 1M variables, 200k × 50 (1.2M entities)", "lp-200000x50-of-1000000.pb",
     ["lp", "--constraints", "200000", "--terms", "50", "--variables", "1000000"]),
    ("archive of 2,000 instance layers", "archive-2000.ommx", ["archive", "--instances", "2000"]),
    ("moderate fixture", None, None),
]


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 f"--user-data-dir={tempfile.mkdtemp(prefix='memprof-bench-')}",
                 "--window-size=1280,900", "--host-resolver-rules=MAP * ~NOTFOUND"]:
        options.add_argument(flag)
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(options=options, service=Service(executable_path=driver_path))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    memprof, gen = RELEASE / "memprof", RELEASE / "memprof-gen"
    for tool in (memprof, gen):
        if not tool.exists():
            sys.exit(f"{tool}: build it first (cargo build --release --bins)")
    BENCH.mkdir(parents=True, exist_ok=True)
    driver = browser()
    driver.set_script_timeout(60)
    rows = []
    try:
        for label, name, generate in INPUTS:
            if name is None:
                source = REPO / "fixtures" / "oracle" / "moderate.pb"
            else:
                source = BENCH / name
                if not source.exists():
                    subprocess.run([gen, *generate, "-o", source], check=True, capture_output=True)
            page = BENCH / (source.name + ".html")
            subprocess.run([memprof, "report", source, "-o", page, "-q"], check=True)
            times = []
            for _ in range(args.runs):
                driver.get("about:blank")
                driver.get(page.as_uri())
                times.append(driver.execute_async_script(DRAWN))
            rows.append((label, source.stat().st_size, page.stat().st_size, min(times), sorted(times)[len(times) // 2]))
    finally:
        driver.quit()
    print(f"chromium, 1280 px, best and median of {args.runs} loads; MB = 10^6 bytes\n")
    print("| input | input MB | page MB | drawn, best | drawn, median |")
    print("|---|---:|---:|---:|---:|")
    for label, size, page, best, median in rows:
        print(f"| {label} | {size / 1e6:,.1f} | {page / 1e6:.2f} | {best:,.0f} ms | {median:,.0f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
