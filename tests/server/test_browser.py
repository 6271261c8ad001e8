"""The pages in a real browser: Debian's chromium driven by Selenium through Debian's
chromium-driver (no browser download), against a live server on loopback. Ask -> the
answer with its claims marked -> follow a claim to its highlighted evidence -> open the
run -> replay now -> "everything held".

Skips, saying why, when chromium, chromedriver or selenium is missing (.ci/run installs
the Debian packages). With ``ABORIST_SCREENSHOT_DIR`` set, the screenshots of docs/serve.md
are written there.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FACTS, Corpus
from tests.server.conftest import _record, make_served
from tests.server.live import live_server

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
Q = "How long is the Silverrun River?"

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:  # pragma: no cover - the dev extra installs it
    webdriver = None

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None or webdriver is None,
    reason="needs Debian's chromium and chromium-driver "
    "(apt-get install -y chromium chromium-driver) and selenium (the dev extra)",
)


@pytest.fixture
def browser() -> Iterator[Any]:
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1100,900",
                "--disable-dev-shm-usage", "--no-first-run"):  # fmt: skip
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=opts)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(what: Callable[[], Any], timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            got = what()
            if got:
                return got
        except Exception:  # the page is (re)loading
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting in the browser")
        time.sleep(0.2)


def _shot(driver: Any, name: str) -> None:
    where = os.environ.get("ABORIST_SCREENSHOT_DIR")
    if where:
        driver.save_screenshot(str(Path(where) / name))


def test_ask_marks_evidence_run_replay(browser: Any, ledger_url: str, corpus: Corpus) -> None:
    _record(ledger_url, corpus)
    served = make_served(ledger_url, corpus.shards_dir)
    with live_server(served.client.app) as base:
        browser.get(base + "/")
        browser.find_element(By.ID, "question").send_keys(Q)
        browser.find_element(By.ID, "ask-button").click()
        try:
            mode = _wait(lambda: browser.find_element(By.ID, "audit-mode").text, timeout=60)
        except Exception:  # show the page that came instead
            raise AssertionError(browser.page_source[:2000]) from None
        assert mode == "STRICT"
        claims = browser.find_elements(By.CSS_SELECTOR, "#answer .claim")
        assert claims and {c.get_attribute("data-mark") for c in claims} == {"verified"}
        assert FACTS[Q] in claims[0].text
        _shot(browser, "serve-ask.png")

        link = claims[0].find_element(By.TAG_NAME, "a")
        target = link.get_attribute("href").split("#", 1)[1]
        link.click()
        assert browser.current_url.endswith("#" + target)
        evidence = browser.find_element(By.ID, target)
        outline = browser.execute_script(
            "return getComputedStyle(arguments[0]).outlineStyle", evidence
        )
        assert outline == "solid"  # the :target rule: the evidence block is highlighted
        marks = evidence.find_elements(By.TAG_NAME, "mark")
        assert marks and any("412 kilometres long" in m.text for m in marks)
        assert all(m.is_displayed() for m in marks)

        browser.find_element(By.ID, "run-link").click()
        _wait(lambda: "Audit report" in browser.find_element(By.TAG_NAME, "h1").text)
        assert browser.find_element(By.ID, "audit-mode").text == "STRICT"
        assert "matches" in browser.find_element(By.ID, "dag-state").text
        _shot(browser, "serve-run.png")

        browser.get(base + "/ledger")
        assert int(browser.find_element(By.ID, "head-seq").text) > 0
        browser.find_element(By.ID, "replay-now").click()
        state = _wait(
            lambda: (
                t
                if not (t := browser.find_element(By.ID, "replay-state").text).startswith("running")
                else None
            ),
            timeout=120,
        )
        assert "replay: everything held" in state
        _shot(browser, "serve-replay.png")
        errors = [
            e for e in browser.get_log("browser") if e.get("level") == "SEVERE"
        ]  # a CSP violation would be logged here
        assert errors == []
