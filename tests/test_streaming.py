"""The streaming API served for real (scripts/launch.py starts it beside the site): Mastodon.py's
stream_user and a WebSocket client (the `websockets` library) hear what the bus tells them,
as each reader's read path lets them see it; bad requests are refused with Mastodon's errors.

Events are written through the repository in this process, as the site's workers write
them; the streaming process reads them from the suite's own Redis (or its cluster).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from social import keys
from tests.api import token_for
from tests.conftest import CLUSTER, make_staff, make_user
from tests.served_site import served_site

mastodon = pytest.importorskip("mastodon")
websockets = pytest.importorskip("websockets")

PER_ADDRESS = 6
PER_ACCOUNT = 4
WAIT = 30  # seconds anything expected may take, however busy the machine


@pytest.fixture(scope="module")
def site(redis_server, tmp_path_factory):
    """The site and its streaming API served for real; yields (site URL, streaming URL)."""
    settings = {
        "REDIS_URL": redis_server.url,
        "REDIS_CLUSTER": "true" if CLUSTER else "false",
        "SECRET_KEY": "streaming-tests-only-" + "x" * 50,
        "WEB_WORKERS": "1",
        "RETWIS_STREAMING_HEARTBEAT": "0.3",
        "RETWIS_STREAMING_PER_ADDRESS": str(PER_ADDRESS),
        "RETWIS_STREAMING_PER_ACCOUNT": str(PER_ACCOUNT),
    }
    with served_site(tmp_path_factory.mktemp("streaming"), settings, start_within=90) as url:
        with urllib.request.urlopen(url + "/api/v1/instance", timeout=5) as answer:
            streaming = json.load(answer)["urls"]["streaming_api"]
        yield url, streaming.replace("ws://", "http://")


def in_new_loop(coroutine):
    """Run coroutine to its end on an event loop of its own, in a thread of its own (the
    browser tests' Playwright keeps a loop running in the suite's main thread)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def get(url: str, token: str | None = None) -> tuple[int, str]:
    """GET url (a Bearer token if given); return the status and the start of the body."""
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as answer:
            return answer.status, answer.read(200 if "health" in url else 3).decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def until(found, what: str):
    """Wait for found() to be truthy (WAIT s at most)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.05)  # polling a deadline
    raise AssertionError(f"never arrived: {what}")


def test_health_answers_ok_and_the_instance_names_the_streaming_api(site):
    url, streaming = site
    assert get(streaming + "/api/v1/streaming/health") == (200, "OK")
    with urllib.request.urlopen(url + "/api/v2/instance", timeout=WAIT) as answer:
        named = json.load(answer)["configuration"]["urls"]["streaming"]
    assert named == streaming.replace("http://", "ws://")


class Collected(mastodon.StreamListener):
    """Mastodon.py's listener, keeping what it hears."""

    def __init__(self) -> None:
        self.updates: list = []
        self.notifications: list = []
        self.deletes: list = []
        self.lock = threading.Lock()

    def on_update(self, status) -> None:
        self.updates.append(status)

    def on_notification(self, notification) -> None:
        self.notifications.append(notification)

    def on_delete(self, status_id) -> None:
        self.deletes.append(int(status_id))


def test_mastodon_py_stream_user_hears_a_post_a_notification_and_a_delete(site, repo, r):
    url, _ = site
    alice, bob, charlie = (make_user(repo, n) for n in ("alice", "bob", "charlie"))
    repo.graph.follow(alice.id, bob.id)
    client = mastodon.Mastodon(access_token=token_for(repo, alice), api_base_url=url)
    heard = Collected()
    handle = client.stream_user(heard, run_async=True)
    try:
        # Connected means answered, and the app subscribes before it answers (app.http).
        until(lambda: handle.is_receiving(), "the stream opening")
        repo.posts.create_post(charlie.id, "not followed: not in alice's home")
        post_id = repo.posts.create_post(bob.id, "hello #redis")
        status = until(lambda: heard.updates, "bob's post")[0]
        assert int(status.id) == post_id and status.account.username == "bob"
        assert "hello" in status.content and [t.name for t in status.tags] == ["redis"]

        mine = repo.posts.create_post(alice.id, "like this")
        repo.likes.like(bob.id, mine)
        note = until(lambda: heard.notifications, "the like's notification")[0]
        assert note.type == "favourite" and note.account.username == "bob"
        assert int(note.status.id) == mine

        repo.posts.delete_own_post(bob.id, post_id)
        assert until(lambda: heard.deletes, "the delete") == [post_id]
        assert [int(s.id) for s in heard.updates] == [post_id, mine]  # never charlie's
        # One event a write, not one a listener: the follow's notification, three posts, the
        # like's notification, the delete.
        assert r.xlen(keys.live_events()) == 6
    finally:
        handle.close()


async def ws_connect(streaming: str, token: str, address: str = "127.0.0.1", **kwargs):
    """Open a WebSocket with token, from address (any of 127.0.0.0/8: each test that counts
    connections has addresses of its own, whatever earlier tests left open)."""
    return await websockets.connect(
        streaming.replace("http://", "ws://") + "/api/v1/streaming",
        additional_headers={"Authorization": f"Bearer {token}"},
        open_timeout=WAIT,
        local_addr=(address, 0),
        **kwargs,
    )


async def next_message(ws) -> dict:
    return json.loads(await asyncio.wait_for(ws.recv(), WAIT))


async def settled(ws) -> None:
    """Wait until the server has handled every message sent before: it answers a message
    it cannot parse, and handles a connection's messages in order."""
    await ws.send("{settled?")
    assert await next_message(ws) == {"error": "Error parsing message", "status": 400}


def refused_status(error: Exception) -> int | None:
    """The HTTP status of a refused handshake, or the 4000 + status close code's status."""
    status = getattr(getattr(error, "response", None), "status_code", None)
    code = getattr(getattr(error, "rcvd", None), "code", None)
    return status or (code - 4000 if code else None)


def test_a_websocket_subscribes_to_user_and_hashtag_and_hears_both(site, repo):
    _, streaming = site
    alice, bob, dave = (make_user(repo, n) for n in ("alice", "bob", "dave"))
    repo.graph.follow(alice.id, bob.id)
    token = token_for(repo, alice, "read")

    async def run() -> list[dict]:
        ws = await ws_connect(streaming, token)
        await ws.send(json.dumps({"type": "subscribe", "stream": "user"}))
        await ws.send(json.dumps({"type": "subscribe", "stream": "hashtag", "tag": "Redis"}))
        await settled(ws)
        await asyncio.to_thread(repo.posts.create_post, bob.id, "followed, untagged")
        await asyncio.to_thread(repo.posts.create_post, dave.id, "about #redis")
        got = [await next_message(ws), await next_message(ws)]
        await ws.close()
        return got

    first, second = in_new_loop(run())
    assert first["stream"] == ["user"] and first["event"] == "update"
    assert json.loads(first["payload"])["account"]["username"] == "bob"
    assert second["stream"] == ["hashtag", "Redis"] and second["event"] == "update"
    assert json.loads(second["payload"])["account"]["username"] == "dave"


def test_a_blocked_muted_or_filtered_authors_post_never_arrives(site, repo):
    _, streaming = site
    alice, bob, mo, bea, fil = (make_user(repo, n) for n in ("alice", "bob", "mo", "bea", "fil"))
    for followed in (bob, mo, bea, fil):
        repo.graph.follow(alice.id, followed.id)
    repo.relations.mute(alice.id, mo.id)
    repo.relations.block(bea.id, alice.id)  # bea blocks alice (and so unfollows)
    repo.filters.add(alice.id, "spoilers", "never")
    token = token_for(repo, alice, "read")

    async def run() -> list[dict]:
        ws = await ws_connect(streaming, token)
        for stream in ("user", "public"):
            await ws.send(json.dumps({"type": "subscribe", "stream": stream}))
        await settled(ws)
        for author, text in ((mo, "muted"), (bea, "blocking"), (fil, "big spoilers")):
            await asyncio.to_thread(repo.posts.create_post, author.id, text)
        await asyncio.to_thread(repo.posts.create_post, bob.id, "the last one")
        got = [await next_message(ws), await next_message(ws)]  # on user and public
        await ws.close()
        return got

    got = in_new_loop(run())
    texts = {json.loads(m["payload"])["content"] for m in got}
    assert len(texts) == 1 and "the last one" in texts.pop()  # bob's came; nothing before it
    assert sorted(m["stream"][0] for m in got) == ["public", "user"]


def test_the_token_may_come_as_a_query_parameter_or_the_websocket_protocol(site, repo):
    _, streaming = site
    alice, bob = make_user(repo, "alice"), make_user(repo, "bob")
    token = token_for(repo, alice, "read")
    base = streaming.replace("http://", "ws://") + "/api/v1/streaming"

    async def run() -> tuple[str | None, dict, dict]:
        by_protocol = await websockets.connect(
            base + "?stream=public", subprotocols=[token], open_timeout=WAIT
        )
        by_query = await websockets.connect(
            f"{base}?access_token={token}&stream=public", open_timeout=WAIT
        )
        for ws in (by_protocol, by_query):  # subscribed to ?stream= before any message
            await settled(ws)
        await asyncio.to_thread(repo.posts.create_post, bob.id, "to everyone")
        got = (
            by_protocol.subprotocol,
            await next_message(by_protocol),
            await next_message(by_query),
        )
        await by_protocol.close()
        await by_query.close()
        return got

    protocol, one, other = in_new_loop(run())
    assert protocol == token
    assert one["stream"] == other["stream"] == ["public"]


@pytest.mark.parametrize(
    ("path", "token", "status", "error"),
    [
        ("user", None, 401, "Missing access token"),
        ("user", "no-such-token", 401, "Invalid access token"),
        ("nope", "valid", 400, "Unknown stream type"),
        ("hashtag", "valid", 400, "Missing tag name parameter"),
        ("hashtag?tag=%23%23", "valid", 400, "Missing tag name parameter"),
    ],
)
def test_server_sent_events_refuse_bad_requests_with_mastodons_error(
    site, repo, path, token, status, error
):
    _, streaming = site
    if token == "valid":
        token = token_for(repo, make_user(repo, "alice"), "read")
    got_status, body = get(f"{streaming}/api/v1/streaming/{path}", token)
    assert (got_status, json.loads(body)) == (status, {"error": error})


def test_a_revoked_token_or_suspended_account_is_refused(site, repo):
    _, streaming = site
    alice, spammer = make_user(repo, "alice"), make_user(repo, "spammer")
    revoked, suspended = token_for(repo, alice, "read"), token_for(repo, spammer, "read")
    repo.oauth.revoke(revoked)
    repo.moderation.suspend(spammer.id, make_staff(repo), "spam")

    assert get(f"{streaming}/api/v1/streaming/user", revoked)[0] == 401
    status, body = get(f"{streaming}/api/v1/streaming/user", suspended)
    assert (status, json.loads(body)) == (403, {"error": "Your login is currently disabled"})


def test_a_websocket_with_a_bad_token_is_refused_before_it_opens(site):
    _, streaming = site

    async def run() -> Exception:
        try:
            await ws_connect(streaming, "no-such-token")
        except Exception as error:  # refused handshake or close
            return error
        raise AssertionError("opened")

    error = in_new_loop(run())
    assert refused_status(error) == 401, error


def test_a_websocket_answers_unknown_streams_and_malformed_messages_and_stays_open(site, repo):
    _, streaming = site
    alice, bob = make_user(repo, "alice"), make_user(repo, "bob")
    token = token_for(repo, alice, "read")

    async def run() -> list[dict]:
        ws = await ws_connect(streaming, token)
        got = []
        for sent in (
            json.dumps({"type": "subscribe", "stream": "nope"}),
            "{not json",
            json.dumps([1, 2]),
            "[" * 5000,
            json.dumps({"type": "subscribe", "stream": "hashtag"}),
            json.dumps({"type": "subscribe", "stream": ["public"]}),
        ):
            await ws.send(sent)
        for _ in range(5):
            got.append(await next_message(ws))
        await settled(ws)  # the subscription to public, which is not answered, is made
        await asyncio.to_thread(repo.posts.create_post, bob.id, "still listening")
        got.append(await next_message(ws))
        await ws.close()
        return got

    got = in_new_loop(run())
    assert got[:5] == [
        {"error": "Unknown stream type", "status": 400},
        {"error": "Error parsing message", "status": 400},
        {"error": "Error parsing message", "status": 400},
        {"error": "Error parsing message", "status": 400},
        {"error": "Missing tag name parameter", "status": 400},
    ]
    assert got[5]["stream"] == ["public"] and got[5]["event"] == "update"


def test_one_address_holds_at_most_its_limit_of_connections(site, repo):
    _, streaming = site
    # Two accounts, so the address's limit comes before either account's.
    tokens = [token_for(repo, make_user(repo, name), "read") for name in ("alice", "bob")]
    address = "127.0.0.20"

    async def run() -> tuple[int, int | None, bool]:
        held = [await ws_connect(streaming, tokens[n % 2], address) for n in range(PER_ADDRESS)]
        refused = None
        try:
            extra = await ws_connect(streaming, tokens[0], address)
            await extra.close()
        except Exception as error:
            refused = refused_status(error)
        await held[0].close()
        again = await reconnected(streaming, tokens[0], address)  # the freed place
        opened = again.state.name == "OPEN"
        for ws in [again, *held[1:]]:
            await ws.close()
        return len(held), refused, opened

    assert in_new_loop(run()) == (PER_ADDRESS, 429, True)


async def reconnected(streaming: str, token: str, address: str):
    """Connect once the server has let a closed connection's place go (WAIT at most)."""
    deadline = time.monotonic() + WAIT
    while True:
        try:
            return await ws_connect(streaming, token, address)
        except websockets.InvalidStatus:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)  # polling a deadline


def test_one_account_holds_at_most_its_limit_from_any_address(site, repo):
    _, streaming = site
    alice, bob = make_user(repo, "alice"), make_user(repo, "bob")
    token, other = token_for(repo, alice, "read"), token_for(repo, bob, "read")

    async def run() -> tuple[int | None, dict, bool]:
        held = [await ws_connect(streaming, token, f"127.0.0.{30 + n}") for n in range(PER_ACCOUNT)]
        refused, said = None, {}
        try:
            extra = await ws_connect(streaming, token, "127.0.0.40")
            await extra.close()
        except websockets.InvalidStatus as error:
            refused = error.response.status_code
            said = json.loads(error.response.body)
        bobs = await ws_connect(streaming, other, "127.0.0.40")  # the address has room
        opened = bobs.state.name == "OPEN"
        for ws in [*held, bobs]:
            await ws.close()
        return refused, said, opened

    assert in_new_loop(run()) == (429, {"error": "Too many connections for this account"}, True)


def test_a_message_past_the_limit_is_refused_before_the_app_holds_it(site, repo):
    _, streaming = site
    token = token_for(repo, make_user(repo, "alice"), "read")

    async def run() -> tuple[int | None, dict]:
        big = await ws_connect(streaming, token, max_size=None)
        beside = await ws_connect(streaming, token)
        await big.send("x" * (1024 * 1024))  # one MiB: 64 times what a message may be
        try:
            await asyncio.wait_for(big.recv(), WAIT)
            code = None
        except websockets.ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd else None
        await settled(beside)  # the process serves on
        await beside.send("[" * 5000)  # over 4,096 characters, within the frame limit
        answer = await next_message(beside)
        await beside.close()
        return code, answer

    # 1009: message too big, said by the server from the frame's header (Granian handed
    # the app the whole message, which answered it with a parse error).
    assert in_new_loop(run()) == (1009, {"error": "Error parsing message", "status": 400})


def test_an_open_websocket_closes_once_its_token_is_revoked(site, repo):
    _, streaming = site
    token = token_for(repo, make_user(repo, "alice"), "read")
    kept = token_for(repo, make_user(repo, "bob"), "read")

    async def run() -> int | None:
        ws, beside = await ws_connect(streaming, token), await ws_connect(streaming, kept)
        for each in (ws, beside):
            await each.send(json.dumps({"type": "subscribe", "stream": "user"}))
            await settled(each)
        await asyncio.to_thread(repo.oauth.revoke, token)
        # Checked every four heartbeats (0.3 s here): closed well within WAIT.
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), WAIT)
        await settled(beside)  # the other token's connection stays open
        await beside.close()
        return closed.value.rcvd.code if closed.value.rcvd else None

    assert in_new_loop(run()) == 1000
