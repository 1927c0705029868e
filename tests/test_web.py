"""The search page in real headless Chromium (Debian's `chromium`, driven by Playwright): type a query, filter,
open a figure, go back and forward, open a deep link, load more; paper text is shown escaped everywhere; the
page runs under its own Content-Security-Policy. Screenshots are saved and listed at the end of the run."""

from __future__ import annotations

import contextlib
import re
import shutil
import socket
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from conftest import ENRICHED, SCREENSHOTS

CHROMIUM = next((p for p in (shutil.which("chromium"), "/usr/bin/chromium", shutil.which("chromium-browser"))
                 if p and Path(p).exists()), None)
if CHROMIUM is None:
    pytest.skip("Debian chromium is not installed (`make test` installs it with apt-get; run "
                "`apt-get install -y chromium` as root)", allow_module_level=True)
playwright = pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")
expect = playwright.expect

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage"]
PAYLOAD = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'


@contextlib.contextmanager
def serving(app):
    """``app`` served by uvicorn on a free loopback port, in a thread; yields its base URL."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        t.join(10)


@pytest.fixture(scope="module")
def base_url(corpus_dir, searcher):
    from figlink.server import create_app

    with serving(create_app(corpus_dir, searcher)) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh page; any script error or CSP violation on it fails the test."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(20_000)
    problems: list[str] = []
    pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    pg.on("console", lambda m: problems.append(f"console: {m.text}")
          if m.type == "error" and "Content Security Policy" in m.text else None)
    yield pg
    ctx.close()
    assert not problems, problems


def shoot(page, folder: Path, name: str, full_page: bool = False) -> Path:
    path = folder / name
    page.screenshot(path=str(path), full_page=full_page)
    SCREENSHOTS.append(path)
    print(f"screenshot: {path}")
    return path


def query_of(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def search(page, base_url: str, q: str, level: str = "figure") -> None:
    page.goto(base_url + "/")
    page.fill("#q", q)
    page.check(f"input[name=level][value={level}]", force=True)
    page.press("#q", "Enter")
    page.wait_for_selector(".card")


def test_type_filter_open_back_forward_reload(page, base_url, screenshot_dir):
    search(page, base_url, "sample recordings from strain IN63", "panel")
    assert query_of(page) == {"q": ["sample recordings from strain IN63"], "level": ["panel"]}
    first = page.locator(".card").first
    assert "Figure 2" in first.locator("h3").inner_text() and "panel a" in first.inner_text()
    first.locator(".box").wait_for()  # the matching panel is outlined on its figure
    assert first.locator("mark").first.inner_text().startswith("Sample recordings from strain IN63")
    assert first.locator("img").get_attribute("alt").startswith("Figure 2, panel a of “Factors influencing lysis")
    # markup in the caption is text, not HTML
    assert "<img src=x" in first.locator(".caption").inner_text()
    assert page.evaluate("window.__xss === undefined") and first.locator(".caption img").count() == 0

    # filter by figure type: the histogram figure (conftest) has exactly the panels a and b
    page.check("#types input[value=histogram]")
    expect(page.locator("#status")).to_have_text(re.compile(r"^2 panels ranked for"))
    assert query_of(page)["type"] == ["histogram"]
    assert page.locator(".card").count() == 2 and page.locator(".card .chip", has_text="histogram").count() == 2
    shoot(page, screenshot_dir, "1-results-filtered.png")

    # open the figure of the first hit: both panels outlined, panel a lit with its subcaption
    page.locator(".card").first.click()
    detail = page.locator("#detail")
    detail.locator(".pbox").first.wait_for()
    assert query_of(page)["paper"] == ["PMC3166277"] and query_of(page)["figure"] == ["F2"]
    assert query_of(page)["panel"] == ["a"] and not page.locator("#results").is_visible()
    assert detail.locator(".pbox").count() == 2
    page.mouse.move(0, 0)  # the pointer left where the card was (it may lie over a panel box now)
    assert detail.locator(".sub.on").first.inner_text().startswith("Sample recordings from strain IN63")
    detail.locator(".pbox[data-label=b]").hover()  # hovering panel b lights b's subcaption instead
    lit = detail.locator(".caption .sub.on").all_inner_texts()
    assert lit and all(not t.startswith("Sample recordings") for t in lit)
    assert detail.locator(".pbox.on").get_attribute("data-label") == "b"
    # citing sentences with their mention marked, OCR text, licence and DOI link
    refs = detail.locator(".refs li")
    assert refs.count() >= 1 and refs.first.locator("mark").inner_text().startswith("Figure 2")
    assert "Frequency" in detail.locator(".ocr").text_content()  # in a closed <details>
    assert detail.locator("a.doi").get_attribute("href") == "https://doi.org/10.1186/1471-2180-11-174"
    assert "CC-BY-2.0" in detail.locator(".licence").inner_text()
    shoot(page, screenshot_dir, "2-figure-detail.png")

    page.go_back()  # the results again, filter still ticked
    page.locator("#results .card").first.wait_for()
    assert not detail.is_visible() and page.is_checked("#types input[value=histogram]")
    assert "paper" not in query_of(page)
    page.go_forward()
    detail.locator(".pbox").first.wait_for()
    page.reload()  # the URL alone brings the same figure back
    detail.locator(".pbox").first.wait_for()
    assert detail.locator(".pbox.on").get_attribute("data-label") == "a"
    page.click("#detail a.back")  # from a reloaded figure, "back" runs the search of the URL
    page.locator("#results .card").first.wait_for()
    assert page.locator(".card").count() == 2


def test_deep_link_to_a_figure_without_image(page, base_url):
    page.goto(base_url + "/?" + urlencode({"q": "holin hole formation", "paper": "PMC3166277", "figure": "F1"}))
    detail = page.locator("#detail")
    detail.locator(".caption").wait_for()
    assert "Schematic presentation" in detail.locator(".caption").inner_text()
    assert detail.locator(".noimg").count() == 1 and page.input_value("#q") == "holin hole formation"
    page.click("#detail a.back")
    page.wait_for_selector(".card")
    assert "Figure 1" in page.locator(".card").first.inner_text()
    assert page.locator(".card").first.locator(".noimg").count() == 1


def test_load_more_continues_the_ranking(page, base_url):
    import httpx

    api = httpx.get(base_url + "/api/search", params={"q": "cell", "level": "panel", "k": 48}).json()
    assert api["total"] > 24  # the sample corpus has more panels than one page
    search(page, base_url, "cell", "panel")
    assert page.locator(".card").count() == 24 and page.is_visible("#more")
    page.click("#more")
    expect(page.locator(".card")).to_have_count(len(api["hits"]))
    shown = page.eval_on_selector_all(".card", "cs => cs.map(c => [c.dataset.paper, c.dataset.figure])")
    assert shown == [[h["paper_id"], h["figure_id"]] for h in api["hits"]]
    assert f"showing {len(api['hits'])}" in page.inner_text("#status")


def test_error_is_shown_not_crashing(page, base_url):
    page.goto(base_url + "/")
    page.evaluate("document.querySelector('#q').removeAttribute('maxlength')")
    page.fill("#q", "x" * 1500)
    page.press("#q", "Enter")
    expect(page.locator("#status")).to_have_text(re.compile(r"^Error: "))


# ---- hostile text in every field, and ids that are not [A-Za-z0-9._-] ------------------------------------

HOSTILE_FIGURE = 'F"><svg onload=window.__xss=5>/../x?y#z'


@pytest.fixture(scope="module")
def hostile_url(corpus_dir, tmp_path_factory, searcher):
    """The sample corpus with script payloads in every text field of one paper, a figure whose id holds
    markup, '/', '?' and '#', a javascript: licence URL; re-indexed."""
    from figlink.corpus import Corpus
    from figlink.index import build_index
    from figlink.model import Box, Figure, InlineRef, OcrText
    from figlink.server import create_app

    d = tmp_path_factory.mktemp("hostile") / "c"
    shutil.copytree(corpus_dir, d)
    with Corpus(d) as c:
        p = c.paper(ENRICHED[0])
        p.title = "Hostile title " + PAYLOAD
        p.journal = PAYLOAD
        p.doi = '10.1/"><img src=x onerror=window.__xss=4>'
        p.license.spdx = PAYLOAD
        p.license.url = "javascript:window.__xss=3"
        src = p.figure(ENRICHED[1])
        f = Figure.from_dict({**src.to_dict(), "figure_id": HOSTILE_FIGURE, "label": "Figure 9 " + PAYLOAD})
        f.inline_refs = [InlineRef(text="As Figure 9a shows " + PAYLOAD, mention="Figure 9a", panels=["a"],
                                   section=PAYLOAD)]
        f.ocr = [OcrText(PAYLOAD, Box.pixels((10, 10, 100, 40)), "legend")]  # a role is one of OcrRole's
        for k, panel in enumerate(f.panels):  # each panel's subcaption: the payload
            f.caption_split.subcaptions[k].text = PAYLOAD
            panel.subcaption_indices = [k]
        p.figures.append(f)
        c.put_paper(p, "hostile", "hostile")
        c.commit()
    build_index(d, searcher._embedder)
    from figlink.index import Searcher

    with serving(create_app(d, Searcher(d, searcher._embedder))) as url:
        yield url


def test_hostile_text_is_shown_as_text(page, hostile_url, screenshot_dir):
    page.goto(hostile_url + "/?" + urlencode({"q": "hostile title lysis", "paper": ENRICHED[0], "figure": HOSTILE_FIGURE,
                                              "panel": "a"}))
    detail = page.locator("#detail")
    detail.locator(".pbox").first.wait_for()
    text = detail.inner_text()
    assert text.count("<img src=x") >= 5 and "<script>" in text  # title, journal, label, licence, refs, OCR …
    assert detail.locator("img").count() == 1 and page.locator("script").count() == 1  # the figure; app.js
    assert page.locator("svg").count() == 0 and page.locator("a[href^='javascript']").count() == 0
    assert detail.locator("a.doi").get_attribute("href") == "https://doi.org/10.1/%22%3E%3Cimg%20src%3Dx%20onerror%3Dwindow.__xss%3D4%3E"
    detail.locator(".ocr-box-wrap summary").click()
    detail.locator(".ocr li").hover()
    assert detail.locator(".ocr-box").count() == 1
    assert page.evaluate("window.__xss === undefined")
    shoot(page, screenshot_dir, "3-hostile-text-escaped.png")
    page.click("#detail a.back")  # the hostile title in the result cards is text as well
    page.wait_for_selector(".card")
    assert "<img src=x" in page.locator(".card .paper").first.inner_text()
    assert page.evaluate("window.__xss === undefined") and page.locator(".card .paper img").count() == 0


# ---- real figures: the sample eLife article with its detected panels ---------------------------------------

@pytest.fixture(scope="module")
def gallery_url(corpus_dir, elife_corpus, tmp_path_factory, searcher):
    """The sample corpus plus the eLife article of conftest's ``elife_corpus`` (real figure images with
    detected panel boxes), indexed."""
    from figlink.corpus import Corpus
    from figlink.index import Searcher, build_index
    from figlink.server import create_app

    d = tmp_path_factory.mktemp("gallery") / "c"
    shutil.copytree(corpus_dir, d)
    src, _ = elife_corpus
    shutil.copytree(src / "images", d / "images", dirs_exist_ok=True)
    with Corpus(src, readonly=True) as a, Corpus(d) as b:
        for p in a.papers():
            b.put_paper(p, "elife-" + p.paper_id, "elife")
        b.commit()
    build_index(d, searcher._embedder)
    with serving(create_app(d, Searcher(d, searcher._embedder))) as url:
        yield url


@pytest.mark.parametrize("width,height,name", [(1280, 900, "desktop"), (390, 844, "phone")])
def test_real_figures_screenshots(browser, gallery_url, screenshot_dir, width, height, name):
    ctx = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    try:
        page.goto(gallery_url + "/?" + urlencode({"q": "raster plots of tectal neurons", "level": "panel"}))
        page.wait_for_selector(".card img")
        page.wait_for_load_state("networkidle")
        cards = page.locator(".card")
        assert cards.first.locator(".box").count() == 1 and "panel" in cards.first.inner_text()
        assert all(page.eval_on_selector_all(".card img", "imgs => imgs.map(i => !!i.alt)"))
        shoot(page, screenshot_dir, f"4-real-figures-{name}.png")
        cards.first.click()
        page.locator("#detail .pbox").first.wait_for()
        page.wait_for_load_state("networkidle")
        assert page.locator("#detail .pbox").count() >= 2
        page.locator("#detail .pbox").nth(1).hover()
        shoot(page, screenshot_dir, f"5-real-figure-detail-{name}.png")
    finally:
        ctx.close()


def test_search_by_image_from_the_page(browser, gallery_url, elife_corpus, screenshot_dir):
    """The page offers search by image when the server has the matcher; choosing a figure of the corpus
    shows that figure among the hits (its own image, with its caption and OCR text, ranks it high)."""
    from figlink.server.image_search import available

    if not available():
        pytest.skip("the image-text matcher's dependencies are not installed")
    src, _ = elife_corpus
    images = sorted((src / "images").rglob("*.png"))
    assert images, "the eLife sample has figure images"
    query = images[0]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(240_000)  # the first image search loads the matcher and embeds the corpus
    try:
        page.goto(gallery_url + "/")
        page.locator("#image-search").wait_for(state="visible")
        page.set_input_files("#image-file", str(query))
        page.wait_for_selector(".card")
        assert "ranked for" in page.locator("#status").inner_text()
        hrefs = page.eval_on_selector_all(".card", "cs => cs.map(c => c.getAttribute('href'))")
        figure_id = query.stem
        assert any(f"figure={figure_id}&" in (h or "") + "&" for h in hrefs[:5]), (figure_id, hrefs[:5])
        shoot(page, screenshot_dir, "6-search-by-image.png")
    finally:
        page.close()

