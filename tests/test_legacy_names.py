"""Usernames the reference Retwis allowed and our sign-up refuses: every page renders them.

The reference took any name: one with a "/", an empty one, "..". No URL path segment can
carry those, so the pages show them as plain text (`@a/b`, no link), and staff open such an
account by its id (/staff/users/id/<id>/). `manage.py repair` lists them. Legacy data is
written with raw commands, as tests/test_legacy_layout.py does.
"""

from __future__ import annotations

import html
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from social.repository import UsernameTaken
from social.repository.accounts.users import name_has_url
from tests.conftest import login, make_user

T0 = 1_300_000_000


def php_register(r, name: str, password: str = "plain-pw") -> int:
    """register.php's writes for an account called name (any name the reference took)."""
    user_id = r.incr("next_user_id")
    secret = f"{user_id:040d}"
    r.hset("users", name, user_id)
    r.hset(f"user:{user_id}", mapping={"username": name, "password": password, "auth": secret})
    r.hset("auths", secret, user_id)
    r.zadd("users_by_time", {name: T0 + user_id})
    return user_id


def php_post(r, author: int, body: str) -> int:
    """post.php's writes (the author's followers' feeds, their own, the timeline)."""
    post_id = r.incr("next_post_id")
    r.hset(f"post:{post_id}", mapping={"user_id": author, "time": T0 + 100, "body": body})
    for follower in [*r.zrange(f"followers:{author}", 0, -1), author]:
        r.lpush(f"posts:{follower}", post_id)
    r.lpush("timeline", post_id)
    return post_id


@pytest.fixture
def odd(r):
    """Accounts called "a/b", "" and ".." (ids 1-3) written by the reference; "a/b" posted."""
    ids = {name: php_register(r, name) for name in ("a/b", "", "..")}
    ids["post"] = php_post(r, ids["a/b"], "slash in my name")
    return ids


@pytest.fixture
def follower(repo, r, odd):
    """bob (ours) follows "a/b" (follow.php's writes), which then posts to him."""
    bob = make_user(repo, "bob")
    r.zadd(f"followers:{odd['a/b']}", {bob.id: T0 + 50})
    r.zadd(f"following:{bob.id}", {odd["a/b"]: T0 + 50})
    php_post(r, odd["a/b"], "to my followers")
    return bob


@pytest.mark.parametrize(
    ("name", "has_url"),
    [("bob", True), ("Bob_1", True), ("a b", True), ("é", True), ("a/b", False), ("", False),
     (".", False), ("..", False), ("x" * 64, True), ("x" * 65, False)],
)  # fmt: skip
def test_a_name_has_a_url_when_a_path_segment_leads_back_to_it(name, has_url):
    assert name_has_url(name) is has_url


def test_the_welcome_page_shows_a_legacy_name_unlinked(client, odd):
    response = client.get("/")

    page = response.content.decode()
    assert response.status_code == 200
    assert "slash in my name" in page
    assert '<span class="author">@a/b</span>' in page
    assert "/u/a/b/" not in page


def test_the_timeline_shows_legacy_names_unlinked(client, odd):
    response = client.get("/timeline/")

    page = response.content.decode()
    assert response.status_code == 200
    assert '<span class="author">@a/b</span>' in page
    assert "<li><span>@a/b</span></li>" in page  # "New here"
    assert "<li><span>@..</span></li>" in page
    assert 'href="/u/../"' not in page and 'href="/u//"' not in page


def test_the_permalink_of_a_legacy_authors_post_renders(client, odd):
    response = client.get(f"/p/{odd['post']}/")

    assert response.status_code == 200
    assert b'<span class="author">@a/b</span>' in response.content


def test_a_followers_home_feed_shows_the_legacy_author(repo, r, follower):
    response = login(Client(), repo, follower).get("/")

    assert response.status_code == 200
    assert b'<span class="author">@a/b</span>' in response.content
    assert b"to my followers" in response.content
    assert r.lrange(f"posts:{follower.id}", 0, -1) == ["2"]


def test_a_legacy_user_with_such_a_name_can_use_the_site(r, odd):
    client = Client()

    logged_in = client.post("/login/", {"username": "a/b", "password": "plain-pw"})
    home = client.get("/")
    posted = client.post("/post/", {"status": "still here"})

    assert logged_in.status_code == 302 and home.status_code == 200
    assert b"What are you doing, a/b?" in home.content
    assert b"<span>@a/b</span>" in home.content  # the nav: no profile URL to link
    assert posted.status_code == 302
    assert r.lrange(f"user_posts:{odd['a/b']}", 0, -1) == ["2"]


def test_a_staff_member_sees_a_legacy_authors_post_with_a_link_by_id(repo, odd, sam_client):
    page = sam_client.get(f"/p/{odd['post']}/").content.decode()

    assert 'href="/staff/users/id/1/">@a/b’s account</a>' in html.unescape(page)


@pytest.mark.parametrize("url", ["/staff/", "/staff/posts/", "/staff/users/"])
def test_the_staff_pages_render_legacy_names(odd, sam_client, url):
    response = sam_client.get(url)

    assert response.status_code == 200
    assert b"@a/b" in response.content


def test_the_staff_lists_link_a_legacy_account_by_id(odd, sam_client):
    posts = sam_client.get("/staff/posts/").content.decode()
    users = sam_client.get("/staff/users/").content.decode()

    assert '<a href="/staff/users/id/1/">@a/b</a>' in posts
    assert '<a href="/staff/users/id/1/"><strong>@a/b</strong></a>' in users
    assert '<a href="/staff/users/id/3/"><strong>@..</strong></a>' in users


@pytest.mark.parametrize("user_id", [1, 2, 3])
def test_staff_open_a_legacy_account_by_id(odd, sam_client, user_id):
    response = sam_client.get(f"/staff/users/id/{user_id}/")

    page = response.content.decode()
    assert response.status_code == 200
    assert f'action="/staff/users/id/{user_id}/suspend/"' in page


def test_staff_open_an_account_by_id_whatever_its_name(repo, sam_client):
    alice = make_user(repo, "alice")

    assert sam_client.get(f"/staff/users/id/{alice.id}/").status_code == 200
    assert sam_client.get("/staff/users/id/999/").status_code == 404


def test_staff_suspend_a_legacy_account_by_id(r, odd, sam, sam_client):
    response = sam_client.post("/staff/users/id/1/suspend/", {"suspend-reason": "spam links"})

    assert response.status_code == 302 and response["Location"] == "/staff/users/id/1/"
    assert r.hget("user:1", "status") == "suspended"
    assert r.zscore("suspended_users", "a/b") is not None
    ((_, entry),) = r.xrevrange("audit", count=1)
    assert (entry["action"], entry["user"], entry["user_name"]) == ("suspend", "1", "a/b")
    page = sam_client.get("/staff/users/id/1/").content.decode()
    assert "a/b is suspended and logged out everywhere." in page


def test_staff_act_on_an_account_with_an_empty_name(r, odd, sam_client):
    response = sam_client.post("/staff/users/id/2/note/", {"note-reason": "no name at all"})

    assert response.status_code == 302 and response["Location"] == "/staff/users/id/2/"
    assert "no name at all" in r.lindex("notes:2", 0)


def test_the_staff_log_links_a_legacy_target_by_id(repo, odd, sam, sam_client):
    repo.moderation.add_note(odd["a/b"], sam, "watch this one")

    page = sam_client.get("/staff/log/").content.decode()

    assert '<a href="/staff/users/id/1/">@a/b</a>' in page


def test_repair_reports_names_without_a_url(r, odd):
    out = StringIO()

    call_command("repair", "--dry-run", "--grace", "0", stdout=out)

    report = out.getvalue()
    assert "user 1: name 'a/b' has no profile URL" in report
    assert "user 2: name '' has no profile URL" in report
    assert "user 3: name '..' has no profile URL" in report
    assert "3 username(s) without a URL" in report
    assert r.hgetall("users") == {"a/b": "1", "": "2", "..": "3"}  # reported, not changed


# --- a mixed-case legacy name is claimed on first sight ------------------------------------


@pytest.fixture
def legacy_bob(r):
    """ "LegacyBob", written by the reference: in `users`, not in users_lower."""
    return php_register(r, "LegacyBob", "plain-bob-pw")


def sign_up(client: Client, name: str):
    password = "a fine passphrase"
    return client.post(
        "/register/", {"username": name, "password": password, "password2": password}
    )


def test_sign_up_refuses_the_lower_cased_twin_of_a_legacy_name(client, r, legacy_bob):
    response = sign_up(client, "legacybob")

    assert b"That username is taken." in response.content
    assert r.hgetall("users") == {"LegacyBob": str(legacy_bob)}
    assert r.hget("users_lower", "legacybob") == str(legacy_bob)  # claimed for LegacyBob
    assert r.zscore("users_lex", "legacybob") == 0
    assert client.get("/u/legacybob/").status_code == 200  # the name now leads to LegacyBob


def test_looking_up_a_legacy_name_claims_it(client, r, legacy_bob):
    assert client.get("/u/LegacyBob/").status_code == 200

    assert r.hget("users_lower", "legacybob") == str(legacy_bob)
    assert r.zscore("users_lex", "legacybob") == 0


def test_logging_in_with_a_legacy_name_claims_it(client, r, legacy_bob):
    client.post("/login/", {"username": "LegacyBob", "password": "plain-bob-pw"})

    assert r.hget("users_lower", "legacybob") == str(legacy_bob)


def test_sign_up_claims_every_legacy_name_written_since_it_last_looked(repo, r, legacy_bob):
    make_user(repo, "alice")
    later = php_register(r, "LaterBob")  # written by the reference after that sign-up

    with pytest.raises(UsernameTaken):
        repo.users.create_user("laterbob", "h")

    assert r.hget("users_lower", "laterbob") == str(later)
    assert r.hget("users_lower", "legacybob") == str(legacy_bob)
    assert r.get("users_lower_checked") == str(later)
    assert r.hgetall("users") == {"LegacyBob": "1", "alice": "2", "LaterBob": "3"}


def test_a_mention_in_any_case_of_a_legacy_name_links_to_its_account(repo, r, legacy_bob):
    # Our users exist (so the claims mark is past them), then the reference writes LegacyLee.
    alice = make_user(repo, "alice")
    repo.users.claim_legacy_names()
    lee = php_register(r, "LegacyLee")
    assert r.hget("users_lower", "legacylee") is None  # never seen here yet

    post_id = repo.posts.create_post(alice.id, "hello @legacylee and @nobody", at=T0)

    assert r.hget(f"post:{post_id}", "mentions") == f"{lee}:legacylee"
    assert r.zscore(f"mentions:{lee}", post_id) is not None
    assert r.hget("users_lower", "legacylee") == str(lee)  # claimed on the way
    html = Client().get(f"/p/{post_id}/").content.decode()
    body = 'hello <a class="mention" href="/u/legacylee/">@legacylee</a> and @nobody</p>'
    assert body in html  # linked; the name no account holds stays text
    assert Client().get("/u/legacylee/").status_code == 200  # and the link leads to Lee
