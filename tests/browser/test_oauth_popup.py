"""A web client's login, in Chromium, as popular web clients do it (issue 37): its page, on
another origin (a small server of our own on a free loopback port), opens the site's consent
page in a popup and waits for the code, either by a message its redirect page posts to
`window.opener` or by reading the popup's location once it is back on the client's origin;
then it exchanges the code at /oauth/token and reads the account, from the browser. Both
need the popup to keep its opener: the consent pages send Cross-Origin-Opener-Policy
`unsafe-none` (tests/test_api_opener_policy.py), the rest of the site `same-origin`."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest
import requests

from social import keys
from tests.api import all_keys
from tests.conftest import PASSWORD

# The client's page: `login(via)` opens the popup and waits; window.outcome says how it
# ended. A popup whose link was cut looks closed to its opener at once: "Failed to log in"
# (after a second's grace: the redirect page posts its message, then closes itself, and on
# a busy machine the opener may see it closed before the message is handed over).
CLIENT_PAGE = """<!doctype html><html><head><title>Web client</title></head><body>
<button id="login">Log in</button><p id="said"></p>
<script>
const cfg = JSON.parse('CONFIG');
window.outcome = null;
let heard = false;  // the redirect page's message came (it closes the popup right after)
async function finish(code, state) {
  const body = new URLSearchParams({grant_type: "authorization_code", code,
    client_id: cfg.client_id, client_secret: cfg.client_secret, redirect_uri: cfg.redirect_uri});
  const token = await (await fetch(cfg.site + "/oauth/token", {method: "POST", body})).json();
  const me = await (await fetch(cfg.site + "/api/v1/accounts/verify_credentials",
    {headers: {Authorization: "Bearer " + token.access_token}})).json();
  window.outcome = {done: true, username: me.username, state};
  document.getElementById("said").textContent = "Logged in as " + me.username;
}
function login(via) {
  const popup = window.open(cfg.consent, "login", "width=500,height=650");
  const watch = setInterval(() => {
    if (window.outcome) return clearInterval(watch);
    if (via === "location") {
      try {  // readable once the popup is back on this origin
        const back = new URL(popup.location.href);
        if (back.pathname === "/callback" && back.searchParams.get("code")) {
          clearInterval(watch);
          popup.close();
          finish(back.searchParams.get("code"), back.searchParams.get("state"));
          return;
        }
      } catch (e) {}
    }
    if (popup.closed) {  // gone: give a message posted just before it closed a moment
      clearInterval(watch);
      setTimeout(() => {
        if (!heard) window.outcome = {done: false, said: "Failed to log in"};
      }, 1000);
    }
  }, 50);
  if (via === "message") {
    window.addEventListener("message", (event) => {
      if (event.origin !== location.origin || !event.data.code) return;
      heard = true;
      clearInterval(watch);
      finish(event.data.code, event.data.state);
    });
  }
}
document.getElementById("login").onclick = () => login(cfg.via);
</script></body></html>"""
# The client's redirect page: hands the code to its opener (via "message"), or waits there
# for the opener to read it (via "location").
CALLBACK_PAGE = """<!doctype html><html><head><title>Signing in</title></head><body><script>
const params = new URLSearchParams(location.search);
if (VIA === "message" && window.opener) {
  window.opener.postMessage({code: params.get("code"), state: params.get("state")},
                            location.origin);
  window.close();
}
</script></body></html>"""


class WebClient:
    """The client's origin: an HTTP server on 127.0.0.1 and a free port (another origin
    than the site's), serving its page at / and its redirect page at /callback."""

    def __init__(self) -> None:
        self.config: dict = {}
        client = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                asked = urlsplit(self.path).path
                if asked == "/":
                    body = CLIENT_PAGE.replace("CONFIG", json.dumps(client.config))
                elif asked == "/callback":
                    body = CALLBACK_PAGE.replace("VIA", json.dumps(client.config["via"]))
                else:
                    self.send_error(404)
                    return
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def web_client():
    serving = WebClient()
    yield serving
    serving.close()


@pytest.mark.parametrize(
    ("via", "logged_in"), [("message", True), ("location", True), ("message", False)]
)
def test_a_web_client_logs_in_through_a_popup(
    live_url, page_as, new_page, person, web_client, r, via, logged_in
):
    ada = person("ada")
    redirect_uri = web_client.origin + "/callback"
    app = requests.post(
        live_url + "/api/v1/apps",
        data={"client_name": "Popup client", "redirect_uris": redirect_uri, "scopes": "read"},
        timeout=10,
    ).json()
    consent = (
        f"{live_url}/oauth/authorize?client_id={app['client_id']}&response_type=code"
        f"&scope=read&state=popup-1&redirect_uri={requests.utils.quote(redirect_uri, safe='')}"
    )
    web_client.config = {
        "site": live_url, "consent": consent, "via": via, "client_id": app["client_id"],
        "client_secret": app["client_secret"], "redirect_uri": redirect_uri,
    }  # fmt: skip
    # Logged in to the site in this browser, or not: then the popup passes the login page.
    page = page_as(ada) if logged_in else new_page()
    page.goto(web_client.origin + "/")

    with page.expect_popup() as opened:
        page.click("#login")
    popup = opened.value
    popup.wait_for_load_state()
    if not logged_in:
        assert popup.url.startswith(live_url + "/login/?next=")
        popup.fill("#id_username", "ada")
        popup.fill("#id_password", PASSWORD)
        with popup.expect_navigation():
            popup.click("main form button[type=submit]")
    assert popup.url.startswith(live_url + "/oauth/authorize?")
    popup.get_by_role("button", name="Authorise", exact=True).click()
    page.wait_for_function("window.outcome !== null")

    outcome = page.evaluate("window.outcome")
    assert outcome == {"done": True, "username": "ada", "state": "popup-1"}
    assert page.locator("#said").inner_text() == "Logged in as ada"
    assert r.zcard(keys.oauth_user_tokens(ada.id)) == 1
    assert not all_keys(r, "oauth:code:*")  # the code was exchanged, once
