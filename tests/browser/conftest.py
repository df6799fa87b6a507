"""Browser tests: Debian's Chromium driven by Playwright against the site on a free port.

The site runs the production way, through the launcher (`scripts/launch.py --no-seed`, what
`scripts/run-site` runs): DEBUG off, collectstatic, Granian's WSGI workers and WhiteNoise, on
the suite's own redis-server. So the browser sees exactly what a person would: real HTTP,
cookies, CSRF, the hashed stylesheet. Never `playwright install` (it downloads a browser): the
tests launch /usr/bin/chromium.
"""

from __future__ import annotations

import secrets
import shutil
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.api import OOB
from tests.served_site import served_site

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip

if CHROMIUM is None:
    pytest.skip(
        "browser tests need Chromium: apt-get install chromium (CI installs it)",
        allow_module_level=True,
    )


@pytest.fixture(scope="session")
def live_media(tmp_path_factory):
    """Where the served site keeps pictures (the tour's repository stores them there too)."""
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="package")
def live_url(redis_server, tmp_path_factory, live_media):
    """Run the site (the launcher, as `scripts/run-site --no-seed`) on the suite's Redis; yield
    its base URL. At the end SIGTERM must stop it cleanly: exit code 0. Stopped when the
    browser tests end: its worker would otherwise take the jobs later tests queue."""
    settings = {
        "REDIS_URL": redis_server.url,
        "SECRET_KEY": "browser-tests-only-" + "x" * 50,
        "WEB_WORKERS": "2",
        # Two blocking threads per worker, not production's one (scripts/launch.py says why):
        # Chromium's parallel requests (a page, its stylesheet, a second user's page) get a
        # thread each instead of queueing behind one another, and the site's per-process
        # caches are exercised by more than one thread at a time, as with a remote Redis.
        "WEB_THREADS": "2",
        "MEDIA_ROOT": str(live_media),
    }
    with served_site(tmp_path_factory.mktemp("site"), settings) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def new_page(browser, request):
    """Return a function making a fresh page (own cookies) at the given width; JavaScript off
    for a test marked without_script (the forms as they work with no script: every action a
    POST and a redirect; tests/browser/test_live.py has the same actions with it)."""
    contexts = []
    script = request.node.get_closest_marker("without_script") is None

    def make(width: int = 1280):
        context = browser.new_context(
            viewport={"width": width, "height": 900}, java_script_enabled=script
        )
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def person(repo):
    """Return a function creating a user (by name) the live site can log in with PASSWORD.

    The live site accepts PBKDF2 only, not the tests' MD5; few iterations keep it fast (the
    site upgrades the hash at the first login).
    """
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    from tests.conftest import PASSWORD

    def make(name: str):
        hashed = PBKDF2PasswordHasher().encode(PASSWORD, "browsersalt", 1000)
        return repo.users.create_user(name, hashed)

    return make


@pytest.fixture
def page_as(new_page, repo, live_url):
    """Return a function making a fresh page logged in as a user: it holds the `auth` cookie
    a login through the form would have set (repo.users.record_login's secret)."""

    def make(user, width: int = 1280):
        page = new_page(width)
        secret = repo.users.record_login(user.id, "127.0.0.1")
        cookie = {"name": "auth", "value": secret, "url": live_url, "httpOnly": True}
        page.context.add_cookies([{**cookie, "sameSite": "Lax"}])
        return page

    return make


def open_nav_menu(page) -> None:
    """Open the header's Menu: on a phone a reader's links past Home and Notifications (the
    search box, Settings, Log out...) are in it. Nothing to do where they stand in the row."""
    summary = page.locator("header details.nav-menu > summary")
    if summary.is_visible() and page.locator("header details.nav-menu[open]").count() == 0:
        summary.click()


# The site tour (issue 11): every page of the site, as each audience sees it, on a small world
# seeded through the repository. tests/browser/test_accessibility.py runs axe-core over it,
# tests/browser/test_phone.py checks it at a phone's width.

LONG_WORD = "Pneumonoultramicroscopicsilicovolcanoconiosis" * 6  # 270 letters, no break


def register_with_errors(page, base: str) -> None:
    """The sign-up form sent back with an error on every field."""
    page.goto(base + "/register/")
    page.fill("#id_username", "no spaces allowed")
    page.fill("#id_password", "short")
    with page.expect_navigation():
        page.click("main form button[type=submit]")
    assert page.locator(".has-error").count() >= 2


class SiteTour:
    """The seeded world and the pages to visit: `pages(audience)` lists (label, step), a
    step being a path or a function(page, base_url); `open(audience, ...)` makes a page
    logged in as that audience's persona."""

    AUDIENCES = ("visitor", "reader", "staff")

    def __init__(self, repo, person, browser, live_url):
        from social.repository.moderation.actions import SYSTEM_ACTOR
        from social.repository.relations.filters import FilterDraft

        self.repo, self.browser, self.live_url, self.contexts = repo, browser, live_url, []
        posts = repo.posts
        self.ada = ada = person("ada")  # the reader
        self.bob = bob = person("bob")
        self.carol = carol = person("carol")
        self.newcomer = person("newcomer")  # follows nobody, wrote nothing: an empty home
        self.sam = sam = person("sam")
        repo.moderation.grant_staff(sam.id, SYSTEM_ACTOR)
        self.sam = sam = repo.users.get_user(sam.id)
        for follower, followee in [(ada, bob), (bob, ada), (carol, ada), (carol, bob)]:
            repo.graph.follow(follower.id, followee.id)
        first = posts.create_post(bob.id, "Sorted sets keep the #redis timeline in order @ada")
        self.long_post = posts.create_post(ada.id, f"The longest word: {LONG_WORD}")
        self.thread = posts.create_post(bob.id, "Who else keeps counters in #redis hashes?")
        posts.create_post(ada.id, "Me, with HINCRBY @bob", reply_to=self.thread)
        posts.create_post(carol.id, f"A long reply: {LONG_WORD}", reply_to=self.thread)
        self.spam = posts.create_post(carol.id, "Buy cheap followers now!!! #deals")
        self.own = posts.create_post(ada.id, "A post of my own, to delete #redis")
        repo.likes.like(ada.id, first)
        repo.likes.like(bob.id, self.own)
        repo.reports.report_post(bob, self.spam, "spam", "Posted the same link ten times.")
        repo.moderation.add_note(carol.id, sam, "Watch for more spam.")
        repo.moderation.suspend(self.newcomer.id, sam, "Testing the log")
        repo.moderation.unsuspend(self.newcomer.id, sam, "Back again")
        # ada blocks a troll and mutes dan, whose reply in the thread is folded for her.
        self.troll, dan = person("troll"), person("dan")
        posts.create_post(dan.id, "A reply ada has muted", reply_to=self.thread)
        repo.relations.block(ada.id, self.troll.id)
        repo.relations.mute(ada.id, dan.id)
        repo.filters.add(ada.id, "spoilers", "7d")
        # ... and one made in an app: two words, folding, in two places.
        repo.filters.create(
            ada.id,
            FilterDraft(
                "Finale",
                ("home", "public"),
                "warn",
                None,
                False,
                (("finale", True), ("season ending", False)),
            ),  # fmt: skip
        )
        # Reposts: bob's repost of a carol post is in ada's home "reposted by @bob" and on his
        # profile; ada's own repost shows her "Reposted" button pressed; carol's repost of the
        # long post puts its 270-letter word on carol's profile and "reposted your post" in
        # ada's notifications.
        self.shared = posts.create_post(carol.id, "Streams are a log you can read twice")
        repo.reposts.repost(bob.id, self.shared)
        repo.reposts.repost(ada.id, first)
        repo.reposts.repost(carol.id, self.long_post)
        # A client app ada authorised (/settings/apps/, the staff's account page) and one
        # asking her consent (/oauth/authorize).
        app, _ = repo.oauth.register_app("Tusky on ada's phone", [OOB], ["read", "write"])
        repo.oauth.save_token(secrets.token_urlsafe(32), app.client_id, ada.id, ["read"])
        self.asking, _ = repo.oauth.register_app("A new client", [OOB], ["read", "write"])
        # E-mail: ada and carol have confirmed addresses; ada asked for another (its link is
        # waiting) and for a password reset link.
        for who in (ada, carol):
            repo.emails.confirm(repo.emails.request_change(who.id, f"{who.username}@example.org"))
        self.confirm_token = repo.emails.request_change(ada.id, "ada.elsewhere@example.org")
        self.reset_token = repo.emails.make_reset(ada.id).token
        # Faces (issue 26): bob has a name, a bio, an avatar and a header; ada a name; the
        # others their generated initials.
        from social.images import AVATAR_SIZES, HEADER_SIZES, process
        from social.repository.accounts.profiles import Picture
        from tests.test_images import picture

        repo.profiles.update(
            bob.id,
            display_name="Bob the Builder 🔧",
            note="Counters in #redis hashes.\nAsk @ada about sorted sets.",
            pictures=[
                Picture("avatar", process(picture("PNG", (300, 300), (30, 90, 160)), AVATAR_SIZES)),
                Picture(
                    "header", process(picture("PNG", (900, 300), (200, 120, 40)), HEADER_SIZES)
                ),
            ],
        )
        repo.profiles.update(ada.id, display_name="Ada 爱达")
        # Pictures in posts (issue 26): bob's two described pictures, carol's one behind a
        # content warning, and a sensitive one carol did not describe.
        from social.images import POST_SIZES, process_with_blurhash

        def uploads(owner, *looks):
            made = []
            for size, colour, alt in looks:
                variants, blurhash = process_with_blurhash(picture("PNG", size, colour), POST_SIZES)
                made.append(
                    repo.attachments.upload(owner.id, variants, alt=alt, blurhash=blurhash).id
                )
            return made

        self.pictured = posts.create_post(
            bob.id, "Two views of the harbour",
            media=uploads(bob, ((900, 600), (40, 110, 170), "Boats in a blue harbour"),
                          ((600, 900), (200, 150, 60), "A lighthouse at dusk")),
        )  # fmt: skip
        self.warned = posts.create_post(
            carol.id, "The encore, from the balcony",
            media=uploads(carol, ((800, 500), (120, 40, 90), "A stage in purple light")),
            spoiler_text="Concert photos, loud colours",
        )  # fmt: skip
        self.sensitive = posts.create_post(
            carol.id, "Marked sensitive", media=uploads(carol, ((500, 500), (180, 30, 30), "")),
            sensitive=True,
        )  # fmt: skip

    def pages(self, audience: str) -> list[tuple[str, object]]:
        if audience == "visitor":
            return [
                ("welcome", "/"),
                ("login", "/login/"),
                ("register with errors", register_with_errors),
                ("timeline", "/timeline/"),
                ("profile", "/u/bob/"),
                ("permalink", f"/p/{self.thread}/"),
                ("tag", "/tag/redis/"),
                ("followers", "/u/ada/followers/"),
                ("a reposter's profile", "/u/carol/"),
                ("404", "/u/nobody_here/"),
                ("search", "/search/?q=redis"),
                ("forgot password", "/password/forgot/"),
                ("reset link", f"/password/reset/{self.reset_token}/"),
                ("reset link that does not work", "/password/reset/" + "x" * 43 + "/"),
                ("confirmation link", f"/settings/email/confirm/{self.confirm_token}/"),
                ("confirmation link that does not work", "/settings/email/confirm/x/"),
            ]
        if audience == "reader":
            return [
                ("home with posts and a repost", self.home_with_a_repost),
                ("home with the composer's pictures opened", self.home_opened),
                ("timeline with a warning and a sensitive picture opened", self.timeline_opened),
                ("timeline", "/timeline/"),
                ("own profile", "/u/ada/"),
                ("other profile, with a repost", "/u/bob/"),
                ("a reposter's profile", "/u/carol/"),
                ("permalink with replies", f"/p/{self.thread}/"),
                ("permalink of a long word", f"/p/{self.long_post}/"),
                ("report form", f"/p/{self.spam}/report/"),
                ("mentions", "/mentions/"),
                ("notifications, a repost among them", self.notifications_with_a_repost),
                ("likes tab", "/u/ada/likes/"),
                ("following", "/u/carol/following/"),
                ("tag", "/tag/redis/"),
                ("settings", "/settings/"),
                ("settings: profile", "/settings/profile/"),
                ("settings: password", "/settings/password/"),
                ("settings: e-mail", "/settings/email/"),
                ("settings: blocks", "/settings/blocks/"),
                ("settings: mutes", "/settings/mutes/"),
                ("settings: filters", "/settings/filters/"),
                ("search", "/search/?q=bo"),
                ("a blocked profile", "/u/troll/"),
                ("settings: delete", "/settings/delete/"),
                ("settings: apps", "/settings/apps/"),
                ("settings: language", "/settings/language/"),
                ("an app asking consent", self.consent_page),
                ("delete-post confirmation", f"/p/{self.own}/delete/"),
                ("block confirmation", "/u/carol/block/"),
                ("followers the reader follows", "/u/ada/followers/you-follow/"),
                ("a muted account's profile, Unmute on its cards", "/u/dan/"),
                ("the picture viewer open on a post's second picture", self.viewer_opened),
                ("a sensitive picture shown, with its Hide", self.sensitive_opened),
            ]
        return [
            ("dashboard", "/staff/"),
            ("users", "/staff/users/"),
            ("user detail", "/staff/users/carol/"),
            ("user detail with an app", "/staff/users/ada/"),
            ("posts", "/staff/posts/"),
            ("reports", "/staff/reports/"),
            ("audit log", "/staff/log/"),
        ]

    def home_with_a_repost(self, page, base: str) -> None:
        """The reader's home, holding bob's repost of carol's post."""
        assert page.goto(base + "/").status == 200
        card = page.locator(f"#post-{self.shared}")
        line = card.locator(".reposted-by")
        assert "reposted by @bob · " in line.inner_text()  # and when (issue 27)
        assert line.locator("time[datetime]").count() == 1

    def home_opened(self, page, base: str) -> None:
        """The reader's home with the composer's pictures and warning open, bob's pictures
        in his card."""
        assert page.goto(base + "/").status == 200
        page.locator("details.compose-extra > summary").click()
        assert page.locator("#id_alt_4").is_visible()
        assert page.locator(f"#post-{self.pictured} img[alt='A lighthouse at dusk']").count()

    def timeline_opened(self, page, base: str) -> None:
        """The timeline with carol's content warning and sensitive picture opened."""
        assert page.goto(base + "/timeline/").status == 200
        page.locator(f"#post-{self.warned} details.cw > summary").click()
        page.locator(f"#post-{self.sensitive} details.sensitive-media > summary").click()
        assert page.locator(f"#post-{self.warned} img[alt='A stage in purple light']").is_visible()

    def viewer_opened(self, page, base: str) -> None:
        """The timeline with bob's second picture in the picture viewer (issue 37)."""
        assert page.goto(base + "/timeline/").status == 200
        page.locator(f"#post-{self.pictured} a.media-item").nth(1).click()
        dialog = page.get_by_role("dialog", name="Picture viewer")
        assert dialog.is_visible()
        assert dialog.locator(".viewer-alt").inner_text() == "A lighthouse at dusk"

    def sensitive_opened(self, page, base: str) -> None:
        """The timeline with carol's sensitive picture shown and its Hide control."""
        assert page.goto(base + "/timeline/").status == 200
        page.locator(f"#post-{self.sensitive} details.sensitive-media > summary").click()
        assert page.locator(f"#post-{self.sensitive} .sensitive-hide").is_visible()

    def consent_page(self, page, base: str) -> None:
        """The consent page of an app asking to read and write for the reader."""
        query = urlencode(
            {"client_id": self.asking.client_id, "redirect_uri": OOB, "response_type": "code",
             "scope": "read write"}
        )  # fmt: skip
        assert page.goto(f"{base}/oauth/authorize?{query}").status == 200
        assert "A new client" in page.locator("main").inner_text()

    def notifications_with_a_repost(self, page, base: str) -> None:
        """The reader's notifications, carol's repost of the long post among them, and
        the three newest unread (marked "New": as if never seen, on every visit)."""
        from social import keys

        self.repo.r.delete(keys.markers(self.ada.id))
        self.repo.r.hdel(keys.user(self.ada.id), "mentions_seen_at")  # the Mentions tab's
        self.repo.r.hset(keys.user(self.ada.id), "unread_notifications", 3)
        assert page.goto(base + "/notifications/").status == 200
        assert page.locator("li.notification.unread .new-badge").count() == 3
        assert "@carol reposted your post." in page.locator("li.notification.repost").inner_text()

    def open(self, audience: str, *, width=1280, height=900, scheme="light", bypass_csp=False):
        """A fresh page in its own context, logged in as the audience's persona. bypass_csp:
        let Playwright inject a script (axe-core) past the site's `script-src 'self'`."""
        context = self.browser.new_context(
            viewport={"width": width, "height": height}, color_scheme=scheme, bypass_csp=bypass_csp
        )
        context.set_default_timeout(10_000)
        self.contexts.append(context)
        who = {"visitor": None, "reader": self.ada, "staff": self.sam}[audience]
        if who is not None:
            secret = self.repo.users.record_login(who.id, "127.0.0.1")
            context.add_cookies([{"name": "auth", "value": secret, "url": self.live_url}])
        return context.new_page()

    def visit(self, page, step) -> None:
        """Go to a step's page; a 404 only where the step says so."""
        if callable(step):
            step(page, self.live_url)
            return
        response = page.goto(self.live_url + step)
        dead = step == "/u/nobody_here/" or "/xxxx" in step or step.endswith("/x/")
        expected = 404 if dead else 200  # no such page, or a link that does not work
        assert response.status == expected, (step, response.status)

    def close(self) -> None:
        for context in self.contexts:
            context.close()


@pytest.fixture
def site_tour(repo, person, browser, live_url, live_media, settings):
    """The seeded world of SiteTour (a new one for each test: the suite empties Redis)."""
    settings.MEDIA_ROOT = live_media  # pictures where the served site finds them
    tour = SiteTour(repo, person, browser, live_url)
    yield tour
    tour.close()
