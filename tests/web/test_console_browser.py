"""The /search console in a real browser: headless Chromium from Debian's
packages (`chromium`, `chromium-driver`; .ci/run installs them) driven by
selenium, against the real server over a real index.

It signs in with a token (kept in an HttpOnly cookie the page's scripts
cannot read), types a question and sees the results grouped by layer with the
query's words marked, opens a result's callers, moves with the keyboard,
follows a deep link, checks that a snippet holding `<script>` and an
`onerror=` attribute is shown as text and runs nothing, and signs out. Skips
without the browser, except under CI."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from web_harness import DEADLINE, WORKSPACE, WebHarness, make_workspace

from codesift.engine.web_tokens import TokenFile

BROWSER = os.environ.get("CODESIFT_CHROMIUM", "/usr/bin/chromium")
DRIVER = os.environ.get("CODESIFT_CHROMEDRIVER", shutil.which("chromedriver") or "")

HOSTILE_PY = '''\
def render_banner(user):
    """<script>window.pwned = "script"</script> <img src=x onerror="window.pwned='img'">"""
    return "<img src=x onerror=alert(1)>" + user
'''


def _browser_or_skip() -> None:
    reason = ""
    if not os.path.exists(BROWSER) or not DRIVER:
        reason = "chromium and chromium-driver are not installed (apt-get install them)"
    else:
        try:
            import selenium  # noqa: F401
        except ImportError:
            reason = "selenium is not installed (pip install '.[test]')"
    if reason:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(f"{reason}; CI is set, so the browser tests must run", pytrace=False)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[WebHarness, str]]:
    _browser_or_skip()
    base = tmp_path_factory.mktemp("browser")
    root = make_workspace(base / "ws", {**WORKSPACE, "banner.py": HOSTILE_PY})
    tokens = TokenFile(base / "tokens.json")
    secret = tokens.add("ana-browser", "ana")
    with WebHarness(root, tokens_file=tokens.path) as web:
        yield web, secret


@pytest.fixture(scope="module")
def browser(served: tuple[WebHarness, str]) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = BROWSER
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(DEADLINE)
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver: Any, condition: Any, what: str) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, DEADLINE, poll_frequency=0.05).until(condition, message=what)


def visible(driver: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By

    def found(d: Any) -> Any:
        elements = [e for e in d.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()]
        return elements[0] if elements else False

    return wait(driver, found, f"{css} to be shown")


def sign_in(driver: Any, web: WebHarness, secret: str) -> None:
    """Open the console signed in (the sign-in form first, when it shows)."""
    driver.get(web.base + "/search")
    shown = visible(driver, "#token, #q")
    if shown.get_attribute("id") == "token":
        shown.send_keys(secret)
        shown.submit()
        visible(driver, "#q")


def test_sign_in_search_callers_keys_and_sign_out(
    served: tuple[WebHarness, str], browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    web, secret = served
    driver = browser
    driver.get(web.base + "/search")
    box = visible(driver, "#token")
    assert not driver.find_element(By.ID, "console").is_displayed()
    box.send_keys("csk_not-a-token")
    box.submit()
    error = wait(driver, lambda d: d.find_element(By.ID, "sign-in-error").text, "the sign-in error")
    assert "not valid" in error
    box.clear()
    box.send_keys(secret)
    box.submit()
    query = visible(driver, "#q")
    assert "ana-browser" in driver.find_element(By.ID, "who").text
    # The token is in an HttpOnly cookie: the page's scripts cannot read it.
    assert "codesift_token" not in driver.execute_script("return document.cookie")
    cookie = driver.get_cookie("codesift_token")
    assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Strict"

    query.send_keys("retry failed charge", Keys.ENTER)
    visible(driver, "#results .layer .result")
    layers = [
        s.get_attribute("data-layer")
        for s in driver.find_elements(By.CSS_SELECTOR, "#results section.layer")
    ]
    assert layers and set(layers) <= {"code", "summary", "doc", "ast"}
    assert layers == sorted(layers, key=["code", "summary", "doc", "ast"].index)
    marks = {m.text.lower() for m in driver.find_elements(By.CSS_SELECTOR, "#results mark")}
    assert {"retry", "charge"} & marks
    streams = driver.find_element(By.CSS_SELECTOR, "#results .result .streams").text
    assert "#1" in streams
    assert "q=retry+failed+charge" in driver.current_url
    timings = driver.execute_script("return window.codesiftTimings")
    assert timings and timings[0]["results"] > 0 and timings[0]["ms"] >= 0

    # The routing panel and the index status fill in.
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#routing-body meter"), "routing")
    assert "ws" in driver.find_element(By.ID, "routing-body").text.split()
    status = driver.find_element(By.ID, "status-body").text
    assert "files" in status and "vectors" in status

    # Callers of retry_failed_charge, on demand.
    target = next(
        item
        for item in driver.find_elements(By.CSS_SELECTOR, "#results .result")
        if item.find_element(By.CSS_SELECTOR, ".name").text.endswith("retry_failed_charge")
    )
    target.find_element(By.CSS_SELECTOR, "button.callers").click()
    wait(
        driver,
        lambda d: "Ledger.record" in target.find_element(By.CSS_SELECTOR, ".graph").text,
        "the callers of retry_failed_charge",
    )
    link = target.find_element(By.CSS_SELECTOR, "a.open").get_attribute("href")
    assert link.startswith("vscode://file/") and "billing.py:" in link

    # Keyboard: leave the box, move down, ask for callees with `e`.
    driver.find_element(By.TAG_NAME, "body").click()
    driver.switch_to.active_element.send_keys("j")
    selected = visible(driver, "#results .result.selected")
    driver.switch_to.active_element.send_keys("j")
    second = visible(driver, "#results .result.selected")
    assert second != selected or len(driver.find_elements(By.CSS_SELECTOR, ".result")) == 1
    driver.switch_to.active_element.send_keys("e")
    wait(
        driver,
        lambda d: d.find_elements(By.CSS_SELECTOR, ".result.selected .graph ul"),
        "callees of the selected result",
    )
    driver.switch_to.active_element.send_keys("/")
    assert driver.switch_to.active_element.get_attribute("id") == "q"

    driver.find_element(By.ID, "sign-out").click()
    visible(driver, "#token")
    assert driver.get_cookie("codesift_token") is None
    status_code = driver.execute_script("return fetch('/api/whoami').then(r => r.status)")
    assert status_code == 401


def test_a_deep_link_shows_hostile_snippets_as_text(
    served: tuple[WebHarness, str], browser: Any
) -> None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    web, secret = served
    driver = browser
    sign_in(driver, web, secret)
    driver.get(web.base + "/search?q=" + quote("render_banner onerror script") + "&layer=code")
    visible(driver, "#results .result")
    assert driver.find_element(By.ID, "q").get_attribute("value") == "render_banner onerror script"
    assert driver.find_element(By.ID, "f-layer").get_attribute("value") == "code"
    snippets = " ".join(
        pre.text for pre in driver.find_elements(By.CSS_SELECTOR, "#results pre.snippet")
    )
    assert "<script>window.pwned" in snippets
    assert "onerror=" in snippets
    # Nothing of it became markup, and nothing ran.
    assert not driver.find_elements(By.CSS_SELECTOR, "#results script, #results img")
    assert driver.execute_script("return window.pwned === undefined")
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018
    # Back and forward follow the searches.
    query = driver.find_element(By.ID, "q")
    query.clear()
    query.send_keys("submit\n")
    wait(driver, lambda d: "q=submit" in d.current_url, "the new deep link")
    driver.back()
    wait(
        driver,
        lambda d: d.find_element(By.ID, "q").get_attribute("value").startswith("render_banner"),
        "the earlier search",
    )


def test_a_results_file_is_shown_on_demand_with_the_query_marked(
    served: tuple[WebHarness, str], browser: Any
) -> None:
    """The `file` button (and the `f` key) shows the file's lines around a
    result from /api/file: the result's own lines set off, the query's words
    marked, a hostile line shown as text; a second press hides them."""
    from selenium.webdriver.common.by import By

    web, secret = served
    driver = browser
    sign_in(driver, web, secret)
    driver.get(web.base + "/search?q=" + quote("retry failed charge") + "&layer=code")
    visible(driver, "#results .result")
    target = next(
        item
        for item in driver.find_elements(By.CSS_SELECTOR, "#results .result")
        if item.find_element(By.CSS_SELECTOR, ".name").text.endswith("retry_failed_charge")
    )
    target.find_element(By.CSS_SELECTOR, "button.show-file").click()
    shown = wait(
        driver,
        lambda d: target.find_elements(By.CSS_SELECTOR, ".file pre.file-lines"),
        "the file's lines",
    )[0]
    heading = target.find_element(By.CSS_SELECTOR, ".file strong").text
    assert heading.startswith("billing.py: lines ")
    own = [row.text for row in shown.find_elements(By.CSS_SELECTOR, ".line.own")]
    assert any("def retry_failed_charge(amount, attempts=3):" in row for row in own)
    # Lines around it too: the file's first definition, before the result.
    assert "def submit(amount):" in shown.text
    assert not any("def submit(amount):" in row for row in own)
    marks = {m.text.lower() for m in shown.find_elements(By.CSS_SELECTOR, "mark")}
    assert {"retry", "failed", "charge"} <= marks
    # The page asked the API for it, for this file.
    asked = driver.execute_script(
        "return performance.getEntriesByType('resource')"
        ".map(e => e.name).filter(n => n.includes('/api/file?'))"
    )
    assert asked and "path=billing.py" in asked[-1]
    target.find_element(By.CSS_SELECTOR, "button.show-file").click()
    wait(driver, lambda d: not target.find_elements(By.CSS_SELECTOR, ".file pre"), "hidden")

    # A hostile file's lines are text as well; nothing runs.
    driver.get(web.base + "/search?q=" + quote("render_banner") + "&layer=code")
    visible(driver, "#results .result")
    driver.find_element(By.TAG_NAME, "body").click()
    driver.switch_to.active_element.send_keys("j")
    visible(driver, "#results .result.selected")
    driver.switch_to.active_element.send_keys("f")
    lines = wait(
        driver,
        lambda d: d.find_elements(By.CSS_SELECTOR, ".result.selected .file pre.file-lines"),
        "the selected result's file",
    )[0]
    assert "<script>window.pwned" in lines.text and "onerror=" in lines.text
    assert not driver.find_elements(By.CSS_SELECTOR, "#results script, #results img")
    assert driver.execute_script("return window.pwned === undefined")


def test_no_request_leaves_the_server(served: tuple[WebHarness, str], browser: Any) -> None:
    """Every file the console loads comes from this server (no CDN)."""
    web, secret = served
    sign_in(browser, web, secret)
    urls = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert urls and all(url.startswith(web.base) for url in urls)
    page = Path(__file__).resolve().parents[2] / "server/codesift/web/static/search.html"
    assert "http" not in page.read_text(encoding="utf-8").replace(web.base, "").split("<body>")[0]


def test_several_roots_show_each_results_root_and_filter_on_the_server(
    browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Two roots: each result shows its root and opens in VS Code under it; the
    repository filter reaches the engine (the page holds only that root's
    results, and the request the page sent names it)."""
    from selenium.webdriver.common.by import By

    base = tmp_path_factory.mktemp("two-roots")
    alpha = make_workspace(base / "alpha", WORKSPACE)
    ledger = (
        "def submit(entry):\n    return post_entry(entry)\n\n\ndef post_entry(e):\n    return e\n"
    )
    quiet = "[embedding]\nenabled = false\n"
    beta = make_workspace(base / "beta", {"ledger.py": ledger, ".codesift.toml": quiet})
    with WebHarness(alpha, more=(beta,), tokens_file=base / "none.json") as web:
        driver = browser
        driver.get(web.base + "/search?q=submit&repo=beta")
        visible(driver, "#results .result")
        wait(driver, lambda d: "beta" in d.find_element(By.ID, "status-body").text, "the roots")
        labels = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#results .root")]
        assert labels and set(labels) == {"[beta]"}
        opened = driver.find_elements(By.CSS_SELECTOR, "#results a.open")
        links = [e.get_attribute("href") for e in opened]
        assert links and all("/beta/ledger.py:" in link for link in links)
        sent = driver.execute_script(
            "return performance.getEntriesByType('resource')"
            ".filter(e => e.name.endsWith('/api/search')).length"
        )
        assert sent >= 1
        # The file around a result comes from its own root.
        first = driver.find_element(By.CSS_SELECTOR, "#results .result")
        first.find_element(By.CSS_SELECTOR, "button.show-file").click()
        lines = wait(
            driver,
            lambda d: first.find_elements(By.CSS_SELECTOR, ".file pre.file-lines"),
            "beta's file",
        )[0]
        assert "def post_entry(e):" in lines.text
        asked = driver.execute_script(
            "return performance.getEntriesByType('resource')"
            ".map(e => e.name).filter(n => n.includes('/api/file?'))"
        )
        assert asked and "root=beta" in asked[-1]
        every = web.post("/api/search", {"query": "submit"}).json()
        assert {r["root"] for r in every["results"]} == {"alpha", "beta"}
