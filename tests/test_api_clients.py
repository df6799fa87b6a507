"""Real clients no one here wrote, against the site served for real: Mastodon.py drives the
client API end to end (app, password and code logins, PKCE, posting, timelines paged with
fetch_next, favourites, reblogs, follows, blocks, notifications, search, word filters made
in the app and on the site, revoking), and
the `toot` command line logs in and posts. The Redis state is checked after each step.

The site runs as `scripts/run-site --no-seed` serves it (scripts/launch.py: DEBUG off,
Granian, WhiteNoise), on the suite's own redis-server (under RETWIS_TEST_CLUSTER=1, its
Redis Cluster), with a posting limit high enough for the paging steps.
"""

from __future__ import annotations

import base64
import hashlib
import html
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from social import keys
from social.repository.clients.oauth import digest
from tests.conftest import CLUSTER, PASSWORD
from tests.served_site import served_site

mastodon = pytest.importorskip("mastodon")
T = TypeVar("T")
Mastodon = mastodon.Mastodon

ROOT = Path(__file__).resolve().parent.parent
OOB = "urn:ietf:wg:oauth:2.0:oob"
SCOPES = ["read", "write", "follow"]


@pytest.fixture(scope="module")
def site(redis_server, tmp_path_factory):
    """The site served for real on a free port; yields its base URL."""
    settings = {
        "REDIS_URL": redis_server.url,
        "REDIS_CLUSTER": "true" if CLUSTER else "false",
        "SECRET_KEY": "api-client-tests-only-" + "x" * 50,
        "WEB_WORKERS": "1",
        "WEB_THREADS": "2",
        "RETWIS_LIMIT_POSTS": "500/10m",
        "MEDIA_ROOT": str(tmp_path_factory.mktemp("media")),
    }
    with served_site(tmp_path_factory.mktemp("site"), settings, start_within=90) as url:
        yield url


@pytest.fixture
def person(repo):
    """Make an account the served site logs in with PASSWORD (a cheap PBKDF2 hash)."""

    def make(name: str):
        hashed = PBKDF2PasswordHasher().encode(PASSWORD, "clientsalt", 1000)
        return repo.users.create_user(name, hashed)

    return make


def within(found: Callable[[], T | None], seconds: float = 60) -> T:
    """Return what found() returns once it is something (the site's worker processing a
    picture), asking until a deadline."""
    deadline = time.monotonic() + seconds
    while (value := found()) is None or value == "":
        assert time.monotonic() < deadline, "not ready in time"
        time.sleep(0.05)
    return value


def app_and_login(site: str, username: str) -> Mastodon:
    """Register an app with Mastodon.py and log in by password."""
    client_id, client_secret = Mastodon.create_app(
        "e2e", scopes=SCOPES, redirect_uris=OOB, api_base_url=site
    )
    client = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=site)
    client.log_in(username, PASSWORD, scopes=SCOPES, allow_http=True)
    return client


def consent(site: str, repo, user, authorize_url: str) -> str:
    """Approve an authorization request as user (their `auth` cookie, as after a login
    through the form) and return the code the out-of-band page shows."""
    browser = requests.Session()
    browser.cookies.set("auth", repo.users.record_login(user.id, "127.0.0.1"))
    page = browser.get(authorize_url, timeout=10)
    assert page.status_code == 200, page.text
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
    answer = browser.post(
        site + "/oauth/authorize",
        data={**fields, "decision": "allow"},
        headers={"Referer": authorize_url},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    return re.search(r'id="oauth-code" type="text" readonly value="([^"]+)"', answer.text)[1]


def test_mastodon_py_end_to_end(site, repo, r, person):
    alice, bob, charlie = person("alice"), person("bob"), person("charlie")
    ma = app_and_login(site, "alice")
    me = ma.account_verify_credentials()
    assert me.username == "alice" and int(me.id) == alice.id
    assert r.zcard(keys.oauth_user_tokens(alice.id)) == 1

    # bob logs in by code, out of band, as a browser user would.
    client_id, client_secret = Mastodon.create_app(
        "e2e code", scopes=SCOPES, redirect_uris=OOB, api_base_url=site
    )
    mb = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=site)
    url = mb.auth_request_url(redirect_uris=OOB, scopes=SCOPES, allow_http=True)
    mb.log_in(code=consent(site, repo, bob, url), scopes=SCOPES, allow_http=True)
    assert mb.me().username == "bob"

    # Post, reply, follow.
    first = ma.status_post("Hello from Mastodon.py #e2e")
    assert r.hget(keys.post(int(first.id)), "body") == "Hello from Mastodon.py #e2e"
    reply = mb.status_post("@alice welcome!", in_reply_to_id=first.id)
    assert reply.in_reply_to_id == first.id
    assert r.lrange(keys.replies(int(first.id)), 0, -1) == [str(reply.id)]
    assert mb.account_follow(alice.id).following
    assert r.zscore(keys.followers(alice.id), bob.id) is not None
    context = ma.status_context(first.id)
    assert [s.id for s in context.descendants] == [reply.id]

    # Home and public timelines, paged with fetch_next.
    for i in range(23):
        repo.posts.create_post(alice.id, f"post number {i}")
    expected = [int(i) for i in r.lrange(keys.home_feed(bob.id), 0, -1)]
    seen, page = [], mb.timeline_home(limit=10)
    while page:
        seen += [int(s.id) for s in page]
        page = mb.fetch_next(page)
    assert seen == expected and len(seen) == 25
    public, page = [], ma.timeline_public(limit=7)
    while page:
        public += [int(s.id) for s in page]
        page = ma.fetch_next(page)
    assert public == [int(i) for i in r.lrange(keys.timeline(), 0, -1)]
    newer = ma.fetch_previous(ma.timeline_public(limit=5, max_id=public[10]))
    assert [int(s.id) for s in newer] == public[6:11]  # the five just above public[11]

    # Favourite and reblog.
    liked = mb.status_favourite(first.id)
    assert liked.favourited and liked.favourites_count == 1
    assert r.zscore(keys.likes(int(first.id)), bob.id) is not None
    boosted = mb.status_reblog(first.id)
    assert boosted.reblog.id == first.id and boosted.reblog.reblogged
    assert r.zscore(keys.reposts(int(first.id)), bob.id) is not None
    assert [a.username for a in ma.status_reblogged_by(first.id)] == ["bob"]

    # Notifications: bob's reblog, favourite, follow and reply (it names alice: a
    # mention, as Mastodon has it), newest first.
    kinds = [n.type for n in ma.notifications()]
    assert kinds == ["reblog", "favourite", "follow", "mention"]

    # Block: charlie is kept out of alice's world.
    mc = app_and_login(site, "charlie")
    blocked = ma.account_block(charlie.id)
    assert blocked.blocking
    assert r.zscore(keys.blocks(alice.id), charlie.id) is not None
    hidden = mc.status_post("charlie was here")
    assert hidden.id not in [s.id for s in ma.timeline_public(limit=40)]
    with pytest.raises(mastodon.MastodonAPIError):
        mc.account_follow(alice.id)

    # Search.
    found = ma.search_v2("bo")
    assert [a.username for a in found.accounts] == ["bob"]
    assert ma.search_v2("#e2")["hashtags"][0]["name"] == "e2e"

    # Revoke: the token stops working at once.
    token = ma.access_token
    ma.revoke_access_token(allow_http=True)
    assert not r.exists(keys.oauth_token(digest(token)))
    with pytest.raises(mastodon.MastodonUnauthorizedError):
        Mastodon(access_token=token, api_base_url=site).account_verify_credentials()


def test_mastodon_py_reads_grouped_notifications_counts_and_sets_the_shared_marker(
    site, repo, r, person
):
    erin, fay, gus = person("erin"), person("fay"), person("gus")
    post = repo.posts.create_post(erin.id, "grouped, please")
    repo.likes.like(fay.id, post)
    repo.likes.like(gus.id, post)
    reply = repo.posts.create_post(gus.id, "@erin a reply", reply_to=post)
    me = app_and_login(site, "erin")

    one_by_one = me.notifications()
    assert [n.type for n in one_by_one] == ["mention", "favourite", "favourite"]
    assert str(one_by_one[0].status.id) == str(reply)
    grouped = me.grouped_notifications()
    assert [(g.type, g.notifications_count) for g in grouped.notification_groups] == [
        ("mention", 1), ("favourite", 2)
    ]  # fmt: skip
    assert grouped.notification_groups[1].sample_account_ids == [str(gus.id), str(fay.id)]
    assert {a.username for a in grouped.accounts} == {"fay", "gus"}
    key = grouped.notification_groups[1].group_key
    assert me.grouped_notification(key).notification_groups[0].notifications_count == 2
    assert me.notifications_unread_count().count == 3
    assert me.unread_grouped_notifications_count() == 2

    assert me.markers_get(["home", "notifications"]) == {}
    saved = me.markers_set(["notifications"], [one_by_one[1].id])
    assert saved.notifications.last_read_id == str(one_by_one[1].id)
    assert r.hget(keys.markers(erin.id), "notifications") == str(one_by_one[1].id)
    assert me.notifications_unread_count().count == 1  # the reply, newer than the marker
    assert r.hget(keys.user(erin.id), "unread_notifications") == "1"  # the site's badge
    browser = requests.Session()
    browser.cookies.set("auth", repo.users.record_login(erin.id, "127.0.0.1"))
    page = browser.get(site + "/notifications/", timeout=10).text
    assert page.count('<span class="new-badge">New</span>') == 1
    marker = me.markers_get(["home", "notifications"]).notifications
    assert int(marker.last_read_id) == int(one_by_one[0].id) and marker.version == 2
    assert me.notifications_unread_count().count == 0


def test_code_flow_with_pkce_s256(site, repo, r, person):
    dora = person("dora")
    client_id, client_secret = Mastodon.create_app(
        "pkce", scopes=["read"], redirect_uris=OOB, api_base_url=site
    )
    verifier = base64.urlsafe_b64encode(os.urandom(40)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    query = {
        "client_id": client_id, "redirect_uri": OOB, "response_type": "code", "scope": "read",
        "code_challenge": challenge.rstrip(b"=").decode(), "code_challenge_method": "S256",
    }  # fmt: skip
    url = requests.Request("GET", site + "/oauth/authorize", params=query).prepare().url
    code = consent(site, repo, dora, url)
    exchange = {"grant_type": "authorization_code", "code": code, "client_id": client_id,
                "redirect_uri": OOB}  # fmt: skip
    refused = requests.post(site + "/oauth/token", data={**exchange, "code_verifier": "x" * 43})
    assert refused.status_code == 400
    code = consent(site, repo, dora, url)
    token = requests.post(
        site + "/oauth/token", data={**exchange, "code": code, "code_verifier": verifier}
    ).json()
    assert token["scope"] == "read"
    client = Mastodon(access_token=token["access_token"], api_base_url=site)
    assert client.account_verify_credentials().username == "dora"
    with pytest.raises(mastodon.MastodonAPIError) as refused_post:
        client.status_post("no write scope")
    assert refused_post.value.args[1] == 403
    assert not r.lrange(keys.own_posts(dora.id), 0, -1)
    assert parse_qs(urlsplit(url).query)["code_challenge_method"] == ["S256"]


def test_mastodon_py_filters_act_on_the_site_and_the_sites_show_in_the_app(site, repo, r, person):
    erin, fred = person("erin"), person("fred")
    repo.graph.follow(erin.id, fred.id)
    dragon = repo.posts.create_post(fred.id, "The dragon wins in the end")
    me = app_and_login(site, "erin")

    made = me.create_filter_v2(
        "Spoilers", ["home", "thread"], "warn", expires_in=3600,
        keywords_attributes=[{"keyword": "dragon", "whole_word": True}],
    )  # fmt: skip
    assert made.title == "Spoilers" and made.filter_action == "warn"
    ((member, expires),) = r.zrange(keys.filters(erin.id), 0, -1, withscores=True)
    assert '"title":"Spoilers"' in member and expires > 0
    (status,) = me.timeline_home()
    assert int(status.id) == dragon and status.filtered[0].keyword_matches == ["dragon"]
    browser = requests.Session()
    browser.cookies.set("auth", repo.users.record_login(erin.id, "127.0.0.1"))
    home = browser.get(site + "/", timeout=10).text
    assert "Hidden: it contains “dragon”, which you filter. Show it" in html.unescape(home)

    keyword = me.add_filter_keyword_v2(made, "wyvern", whole_word=False)
    assert [k.keyword for k in me.filter_keywords_v2(made)] == ["dragon", "wyvern"]
    me.delete_filter_keyword_v2(keyword)
    changed = me.update_filter_v2(made, filter_action="hide", context=["home"])
    assert changed.filter_action == "hide" and me.filter_v2(made).context == ["home"]
    assert me.timeline_home() == []
    me.delete_filter_v2(made)
    assert r.exists(keys.filters(erin.id)) == 0
    # 4.3's lookups by id, which the instance's version promises.
    assert [int(s.id) for s in me.statuses([dragon])] == [dragon]
    assert [a.username for a in me.accounts([fred.id, erin.id])] == ["fred", "erin"]

    # A filter made on the site's page is listed by the app, v2 and v1.
    page = browser.get(site + "/settings/filters/", timeout=10).text
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
    added = browser.post(
        site + "/settings/filters/",
        data={
            "csrfmiddlewaretoken": csrf,
            "phrase": "Lunch",
            "action": "warn",
            "context": ["home", "public"],
            "expiry": "7d",
        },  # fmt: skip
        timeout=10,
    )
    assert added.status_code == 200 and "are folded now" in added.text
    (listed,) = me.filters_v2()
    assert (listed.title, listed.filter_action, listed.context) == (
        "lunch",
        "warn",
        ["home", "public"],
    )
    (v1,) = me.filters()
    assert v1.phrase == "lunch" and v1.irreversible is False
    me.filter_delete(v1)
    assert r.exists(keys.filters(erin.id)) == 0


def test_toot_logs_in_and_posts(site, repo, r, person, tmp_path):
    erin = person("erin")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path)}
    toot = [sys.executable, "-m", "toot"]
    login = subprocess.run(
        [*toot, "login_cli", "-i", site, "-e", "erin", "-p", PASSWORD],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert login.returncode == 0, login.stdout + login.stderr
    assert r.zcard(keys.oauth_user_tokens(erin.id)) == 1
    posted = subprocess.run(
        [*toot, "post", "Hello from toot"], env=env, capture_output=True, text=True, timeout=60
    )
    assert posted.returncode == 0, posted.stdout + posted.stderr
    newest = r.lindex(keys.own_posts(erin.id), 0)
    assert r.hget(keys.post(int(newest)), "body") == "Hello from toot"
    timeline = subprocess.run(
        [*toot, "timeline", "--public", "--once"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert timeline.returncode == 0, timeline.stdout + timeline.stderr
    assert "Hello from toot" in timeline.stdout


def test_mastodon_py_updates_the_profile_and_reads_it_back(site, person, repo, r, tmp_path):
    """account_update_credentials with a name, a bio and an avatar file; a bad avatar is
    Mastodon's 422 (MastodonAPIError) and changes nothing."""
    from tests.test_images import picture

    alice = person("alice")
    client = app_and_login(site, "alice")
    face = tmp_path / "face.png"
    face.write_bytes(picture("PNG", (500, 500)))

    client.account_update_credentials(
        display_name="Alice 🌷", note="Reading #books", avatar=str(face)
    )

    token = within(lambda: r.hget(keys.user(alice.id), "avatar"))  # the site's worker's
    account = client.account_verify_credentials()
    assert account["display_name"] == "Alice 🌷"
    assert "#books" in account["note"] and account["source"]["note"] == "Reading #books"
    assert account["avatar"] == f"{site}/media/avatars/{token}-400.webp"
    fetched = requests.get(account["avatar"], timeout=10)
    assert fetched.status_code == 200 and fetched.headers["Content-Type"] == "image/webp"
    assert client.account_verify_credentials()["display_name"] == "Alice 🌷"

    fake = tmp_path / "fake.png"
    fake.write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'><script>1</script></svg>")
    with pytest.raises(mastodon.MastodonAPIError, match="avatar: This is not a PNG"):
        client.account_update_credentials(display_name="Changed", avatar=str(fake))
    assert r.hget(keys.user(alice.id), "display_name") == "Alice 🌷"
    assert r.hget(keys.user(alice.id), "avatar") == token


def test_mastodon_py_posts_pictures_with_alt_text_and_a_warning(site, person, repo, r, tmp_path):
    """media_post (v2), media_update, status_post(media_ids=..., spoiler_text=...), the
    status read back with its media_attachments, the files served; a 5th picture and an
    SVG are Mastodon's 422 and post nothing."""
    from tests.test_images import picture

    alice = person("alice")
    client = app_and_login(site, "alice")
    assert client.instance()["configuration"]["statuses"]["max_media_attachments"] == 4
    photo = tmp_path / "dunes.jpg"
    photo.write_bytes(picture("JPEG", (2400, 1200)))
    first = client.media_post(str(photo), mime_type="image/jpeg", description="Dunes at noon")
    second = client.media_post(str(photo), mime_type="image/jpeg")
    assert first["url"] is None  # 202: the site's worker processes it
    client.media_update(second, description="The same dunes")
    first, second = (within(lambda m=m: client.media(m) if client.media(m)["url"] else None)
                     for m in (first, second))  # fmt: skip
    assert first["meta"]["original"]["width"] == 1600 and first["blurhash"]
    status = client.status_post(
        "Desert walk", media_ids=[first, second], spoiler_text="Very bright"
    )
    assert [m["id"] for m in status["media_attachments"]] == [first["id"], second["id"]]
    assert status["media_attachments"][1]["description"] == "The same dunes"
    assert status["spoiler_text"] == "Very bright" and status["sensitive"] is True
    assert r.hget(keys.image(first["id"]), "post") == str(status["id"])
    fetched = requests.get(status["media_attachments"][0]["url"], timeout=10)
    assert fetched.status_code == 200 and fetched.headers["Content-Type"] == "image/webp"
    (home,) = client.timeline_home()
    assert home["media_attachments"][0]["description"] == "Dunes at noon"

    five = [client.media_post(str(photo), mime_type="image/jpeg") for _ in range(5)]
    with pytest.raises(mastodon.MastodonAPIError, match="Cannot attach more than 4 files"):
        client.status_post("too many", media_ids=five)
    with pytest.raises(mastodon.MastodonAPIError, match="already attached"):
        client.status_post("again", media_ids=[first])
    svg = tmp_path / "x.svg"
    svg.write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'><script>1</script></svg>")
    with pytest.raises(mastodon.MastodonAPIError, match="not a PNG"):
        client.media_post(str(svg), mime_type="image/svg+xml")
    assert r.llen(keys.own_posts(alice.id)) == 1
    assert r.zcard(keys.media_unattached()) == 5


def test_mastodon_py_reads_what_apps_ask_of_a_server(site, person, repo, r):
    """Issue 37 through Mastodon.py: full home pages past hidden posts, a tag, familiar
    followers, the directory, instance rules and activity, people found by
    their display name and the reader's own posts found by their words."""
    ada, bea, cal = person("ada"), person("bea"), person("cal")
    app_and_login(site, "bea").account_update_credentials(display_name="Beatrix Quill")
    for follower, followed in ((ada, bea), (ada, cal), (cal, bea)):
        repo.graph.follow(follower.id, followed.id)
    for number in range(6):
        repo.posts.create_post(bea.id, f"visible {number} #garden")
    for number in range(8):  # the newest posts: all by someone ada mutes
        repo.posts.create_post(cal.id, f"muted {number}")
    repo.posts.create_post(ada.id, "my own words about lanterns")
    client = app_and_login(site, "ada")
    client.account_mute(client.account_lookup("cal"))

    home = client.timeline_home(limit=5)
    assert len(home) == 5 and all("muted" not in s.content for s in home)
    assert client.tag("garden").name == "garden"
    [familiar] = client.account_familiar_followers(client.account_lookup("bea"))
    assert [a.acct for a in familiar.accounts] == ["cal"]
    assert {a.acct for a in client.directory(order="new")} >= {"ada", "bea", "cal"}
    assert isinstance(client.instance_rules(), list)
    assert len(client.instance_activity()) >= 1
    found = client.search_v2("Beatrix", result_type="accounts")
    assert [a.acct for a in found.accounts] == ["bea"]
    mine = client.search_v2("lanterns", result_type="statuses")
    assert [s.content for s in mine.statuses] == ["<p>my own words about lanterns</p>"]
