"""The production serving path: hashed, compressed static files from WhiteNoise."""

from __future__ import annotations

import re
import urllib.error
import urllib.request

from playwright.sync_api import expect


def fetch(url: str, **headers: str):
    """GET url; return (status, headers, body) whatever the status."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def stylesheet_path(html: bytes) -> str:
    match = re.search(rb'<link rel="stylesheet" href="(/static/css/site\.[0-9a-f]{12}\.css)"', html)
    assert match, "the page links no hashed site stylesheet"
    return match.group(1).decode()


def test_the_stylesheet_is_hashed_cached_forever_and_gzipped(live_url):
    status, headers, html = fetch(live_url + "/")
    assert status == 200
    css = stylesheet_path(html)

    status, headers, body = fetch(live_url + css)
    assert status == 200
    assert headers["Content-Type"].startswith("text/css")
    assert "immutable" in headers["Cache-Control"]
    assert int(re.search(r"max-age=(\d+)", headers["Cache-Control"]).group(1)) >= 31536000
    assert b"{" in body

    status, gz_headers, gz_body = fetch(live_url + css, **{"Accept-Encoding": "gzip"})
    assert status == 200
    assert gz_headers["Content-Encoding"] == "gzip"
    assert gz_headers["Vary"] == "Accept-Encoding"
    assert len(gz_body) < len(body)


def test_no_debug_pages_and_the_404_page_is_styled(live_url, new_page):
    status, headers, html = fetch(live_url + "/no/such/page/")
    assert status == 404
    assert b"Traceback" not in html and b"DEBUG = True" not in html
    css = stylesheet_path(html)
    assert fetch(live_url + css)[0] == 200

    page = new_page()
    response = page.goto(live_url + "/no/such/page/")
    assert response.status == 404
    # The stylesheet applied: not the browser's default serif font.
    expect(page.locator("body")).to_have_css("font-family", re.compile(r"^system-ui"))
    assert page.evaluate("document.styleSheets[0].cssRules.length") > 0
