"""The search page in real headless Chromium (Debian's `chromium`, driven by Playwright): type a query,
see results with the matching panel outlined, open a figure; paper text is shown escaped."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = next((p for p in (shutil.which("chromium"), "/usr/bin/chromium", shutil.which("chromium-browser"))
                 if p and Path(p).exists()), None)
if CHROMIUM is None:
    pytest.skip("Debian chromium is not installed (`make test` installs it with apt-get; run "
                "`apt-get install -y chromium` as root)", allow_module_level=True)
playwright = pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage"]


@pytest.fixture(scope="module")
def base_url(corpus_dir, searcher):
    import uvicorn

    from figlink.server import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(corpus_dir, searcher), host="127.0.0.1", port=port,
                                           log_level="warning"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    t.join(10)


@pytest.fixture(scope="module")
def page(base_url):
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        pg = browser.new_page()
        pg.set_default_timeout(20_000)
        yield pg
        browser.close()


def test_search_outline_and_detail(page, base_url):
    page.goto(base_url + "/")
    page.fill("#q", "sample recordings from strain IN63")
    page.select_option("#level", "panel")
    page.press("#q", "Enter")
    page.wait_for_selector(".card")
    first = page.locator(".card").first
    assert "Figure 2" in first.locator("h3").inner_text() and "panel a" in first.inner_text()
    first.locator(".outline").wait_for()  # the matching panel is outlined on its figure
    mark = first.locator("mark").first.inner_text()
    assert mark.startswith("Sample recordings from strain IN63")
    # markup in the caption is text, not HTML
    assert "<img src=x" in first.locator(".caption").inner_text()
    assert page.evaluate("window.__xss === undefined") and first.locator(".caption img").count() == 0
    first.click()
    detail = page.locator("#detail")
    detail.wait_for(state="visible")
    assert "Citing sentences" in detail.inner_text() and not page.locator("#results").is_visible()
    assert detail.locator(".refs li").count() >= 1
    assert detail.locator(".outline").count() == 2  # both panels drawn, the chosen one emphasised
    page.click("button.back")
    page.locator("#results").wait_for(state="visible")


def test_figure_search_without_images(page, base_url):
    page.goto(base_url + "/")
    page.fill("#q", "holin hole formation")
    page.select_option("#level", "figure")
    page.click("button[type=submit]")
    page.wait_for_selector(".card")
    first = page.locator(".card").first
    assert "Figure 1" in first.inner_text() and first.locator(".noimg").count() == 1
    first.click()
    page.locator("#detail").wait_for(state="visible")
    assert "Schematic presentation" in page.locator("#detail .caption").inner_text()


def test_error_is_shown_not_crashing(page, base_url):
    page.goto(base_url + "/")
    page.evaluate("document.querySelector('#q').removeAttribute('maxlength')")
    page.fill("#q", "x" * 1500)
    page.press("#q", "Enter")
    page.wait_for_function("document.querySelector('#status').textContent.startsWith('Error')")
