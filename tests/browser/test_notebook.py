"""A notebook executed by nbconvert, exported to HTML and opened in
chromium: `ommx_memprof.profile(artifact)` of an OMMX Artifact (what OMMX
users mostly hold) and a `Diff` as cells' last expressions show the report page at the cell's full width, each in a frame
as tall as its page. Needs the ommx-memprof wheel, ommx, nbconvert and
ipykernel installed beside this pytest."""

import time

import pytest
from selenium.webdriver.common.by import By

from conftest import WIDTH, wait_for

pytest.importorskip("nbformat")
pytest.importorskip("nbconvert")
pytest.importorskip("ommx_memprof")

# The frame's page: its graph's width and its own height.
INSIDE = """
const svg = document.querySelector('#chart svg');
return [window.memprofReady || 0, svg ? svg.getBoundingClientRect().width : 0,
        document.documentElement.scrollHeight];
"""


@pytest.fixture(scope="module")
def notebook_html(executed_notebook):
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(executed_notebook.notebook)
    path = executed_notebook.dir / "notebook.html"
    path.write_text(body, encoding="utf-8")
    return path


def test_the_report_fills_the_cell_width_in_a_1280_pixel_window(browser, notebook_html, shots):
    browser.set_window_size(WIDTH, 1000)
    browser.get(notebook_html.as_uri())
    frames = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "iframe.ommx-memprof-report"))
    assert len(frames) == 2
    kinds = []
    for frame in frames:
        browser.switch_to.frame(frame)
        ready, graph_width, page_height = wait_for(
            lambda: (v := browser.execute_script(INSIDE))[0] and v[1] and v
        )
        assert browser.find_elements(By.CSS_SELECTOR, "#chart g.frame")
        kinds.append(browser.find_element(By.XPATH, "//dt[text()='kind']/following-sibling::dd[1]").text)
        browser.switch_to.default_content()
        # The graph spans the cell; the frame is as tall as its page, so
        # nothing scrolls inside it.
        assert graph_width >= 800, graph_width
        assert frame.rect["width"] >= 800, frame.rect
        time.sleep(0.3)
        assert abs(frame.rect["height"] - page_height) <= 2, (frame.rect, page_height)
        # The static summary beside the frame, for notebooks that run no
        # script, is hidden once the page is drawn.
        summary = frame.find_element(By.XPATH, "preceding-sibling::div[@class='ommx-memprof-summary']")
        assert not summary.is_displayed()
    # The artifact is said to be one, with all three of its instance layers.
    assert kinds[0] == "OMMX artifact (its layers, handed over by OMMX)", kinds
    browser.execute_script("arguments[0].scrollIntoView()", frames[0])
    time.sleep(0.6)
    browser.save_screenshot(str(shots / "notebook.png"))
    browser.execute_script("arguments[0].scrollIntoView()", frames[1])
    time.sleep(0.3)
    browser.save_screenshot(str(shots / "notebook-diff.png"))
