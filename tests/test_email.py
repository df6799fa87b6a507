"""E-mail and account recovery: an address confirmed by a link, "Forgot your password?" and
the reset link, over a real SMTP server in this process (aiosmtpd). The pages queue the mail
and the worker sends it (work.run_pending here, as `manage.py work` would). Each test
follows the link from the mail it received and asserts the pages and the resulting Redis
state."""

from __future__ import annotations

import email
import json
import re
import time
from email.message import EmailMessage
from email.policy import default

import pytest
from aiosmtpd.controller import Controller
from django.contrib.auth.hashers import check_password
from django.test import Client

from social import keys, work
from social.repository.clients.oauth import digest
from tests.conftest import PASSWORD, login, make_user
from tests.redis_server import free_port

NEW_PASSWORD = "a perfectly fine passphrase"
LINK_RE = re.compile(r"http://testserver(/\S+)")


class Inbox:
    """What the SMTP server received, parsed. `to` and `link` read what the worker has
    delivered by then: they run the due mail jobs first, as a worker would have."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.port = 0

    async def handle_DATA(self, server, session, envelope) -> str:
        message = email.message_from_bytes(envelope.content, policy=default)
        self.messages.append(message)  # type: ignore[arg-type]
        return "250 OK"

    def deliver(self) -> int:
        """Run the due mail jobs; return how many ran."""
        return work.run_pending("mail")

    def to(self, address: str) -> list[EmailMessage]:
        self.deliver()
        return [m for m in self.messages if m["To"] == address]

    def link(self, address: str) -> str:
        """Return the path of the link in the last mail to address."""
        body = self.to(address)[-1].get_body(("plain",)).get_content()
        return LINK_RE.search(body).group(1)


@pytest.fixture
def inbox(settings):
    """A real SMTP server on a free port, and the site's mail sent to it."""
    received = Inbox()
    controller = Controller(received, hostname="127.0.0.1", port=free_port())
    controller.start()
    received.port = controller.port
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    settings.EMAIL_TIMEOUT = 2
    yield received
    controller.stop()


@pytest.fixture
def smtp_down(settings):
    """Mail goes to a port nothing listens on."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()
    settings.EMAIL_TIMEOUT = 1


def ask_for(client: Client, address: str, password: str = PASSWORD):
    return client.post("/settings/email/", {"email": address, "password": password})


def confirmed(repo, user, address: str, inbox: Inbox) -> None:
    """Give user the confirmed address, through the pages."""
    client = login(Client(), repo, user)
    assert ask_for(client, address).status_code == 302
    assert client.post(inbox.link(address)).status_code == 302


def later(seconds: int = 24 * 3600) -> int:
    """Return a time (ms) when every retry of a mail job is due."""
    return int((time.time() + seconds) * 1000)


def keys_like(r, pattern: str) -> list[str]:
    return sorted(r.scan_iter(match=pattern))


def shown_message(client: Client, path: str) -> str:
    """Return the text of the message the page at path shows (the one after a redirect)."""
    page = client.get(path).content.decode()
    return re.search(r'<li class="message[^"]*">([^<]*)</li>', page).group(1)


def queued(r) -> list[dict]:
    """The mail jobs waiting in the queue (not yet run), oldest first."""
    return [json.loads(fields["job"]) for _, fields in r.xrange(keys.job_stream("mail"))]


def delayed(r) -> list[dict]:
    """The mail jobs waiting for a retry."""
    return [json.loads(job) for job in r.zrange(keys.job_delayed("mail"), 0, -1)]


# --- An address, confirmed by a link -----------------------------------------------------


def test_it_confirms_an_address_through_the_link_it_mails(alice_client, alice, r, inbox):
    response = ask_for(alice_client, "Alice@Example.org")

    assert response.status_code == 302 and response["Location"] == "/settings/email/"
    assert r.hget(f"user:{alice.id}", "email_pending") == "Alice@Example.org"
    assert not r.hexists(f"user:{alice.id}", "email")  # not before the link is followed
    [job] = queued(r)  # queued, not sent: the link is made by the worker
    assert job["kind"] == "confirm_address" and inbox.messages == []
    assert keys_like(r, "email_confirm:*") == []
    assert inbox.deliver() == 1
    [link_key] = keys_like(r, "email_confirm:*")
    assert 0 < r.ttl(link_key) <= 24 * 3600
    [mail] = inbox.to("Alice@Example.org")
    path = inbox.link("Alice@Example.org")
    assert path.startswith("/settings/email/confirm/")
    assert digest(path.split("/")[-2]) == link_key.split(":")[1]  # stored as its digest

    page = Client().get(path)  # opening it changes nothing: a scanner confirms nothing
    assert page.status_code == 200 and b"Alice@Example.org" in page.content
    assert not r.hexists(f"user:{alice.id}", "email")
    done = Client().post(path)

    assert done.status_code == 302
    assert r.hget(f"user:{alice.id}", "email") == "Alice@Example.org"
    assert r.hget("emails", "alice@example.org") == str(alice.id)
    assert not r.hexists(f"user:{alice.id}", "email_pending")
    assert keys_like(r, "email_confirm:*") == []
    shown = alice_client.get("/settings/email/")
    assert b"Alice@Example.org" in shown.content


def test_a_change_tells_the_old_address_and_frees_it_once_confirmed(repo, alice, r, inbox):
    confirmed(repo, alice, "old@example.org", inbox)
    client = login(Client(), repo, alice)

    ask_for(client, "new@example.org")

    [notice] = inbox.to("old@example.org")[1:]  # the first was the old one's own link
    assert "new@example.org" in notice.get_body(("plain",)).get_content()
    assert r.hget(f"user:{alice.id}", "email") == "old@example.org"  # until confirmed
    client.post(inbox.link("new@example.org"))
    assert r.hget(f"user:{alice.id}", "email") == "new@example.org"
    assert r.hgetall("emails") == {"new@example.org": str(alice.id)}


@pytest.mark.parametrize("typed", ["not-an-email", "a@", "@example.org", "x" * 250 + "@e.org"])
def test_it_refuses_an_address_that_is_not_one(alice_client, alice, r, inbox, typed):
    response = ask_for(alice_client, typed)

    assert response.status_code == 400
    assert b"Enter an e-mail address" in response.content or b"at most" in response.content
    assert r.hget(f"user:{alice.id}", "email_pending") is None
    assert queued(r) == [] and inbox.deliver() == 0
    assert keys_like(r, "email_confirm:*") == [] and inbox.messages == []


def test_an_address_another_account_holds_is_answered_as_a_free_one_and_its_owner_told(
    repo, alice, bob, charlie, r, inbox
):
    confirmed(repo, bob, "shared@example.org", inbox)
    inbox.messages.clear()
    free_client, taken_client = login(Client(), repo, alice), login(Client(), repo, charlie)

    free = ask_for(free_client, "free@example.org")
    taken = ask_for(taken_client, "SHARED@example.org")

    assert free.status_code == taken.status_code == 302
    assert free["Location"] == taken["Location"] == "/settings/email/"
    said = [
        shown_message(c, "/settings/email/").replace(a, "ADDRESS")
        for c, a in ((free_client, "free@example.org"), (taken_client, "SHARED@example.org"))
    ]
    assert said[0] == said[1] and "ADDRESS" in said[0]
    assert [job["kind"] for job in queued(r)] == ["confirm_address"] * 2  # the same work
    assert r.get(f"ratelimit:email_user:{charlie.id}") == "1"  # the taken one is counted
    assert r.hget(f"user:{charlie.id}", "email_pending") == "SHARED@example.org"
    [told] = inbox.to("SHARED@example.org")  # bob's address hears of it; no link in it
    assert told["Subject"] == "Someone tried to use your e-mail address"
    assert "/settings/email/confirm/" not in told.get_body(("plain",)).get_content()
    assert b"charlie" not in told.as_bytes()
    [alices_link] = keys_like(r, "email_confirm:*")  # charlie got none
    assert r.hget(alices_link, "user_id") == str(alice.id)
    assert inbox.link("free@example.org").startswith("/settings/email/confirm/")
    assert r.hget("emails", "shared@example.org") == str(bob.id)
    assert r.hget(f"user:{bob.id}", "email") == "shared@example.org"


def test_a_link_loses_to_another_account_that_confirmed_first(repo, alice, bob, r, inbox):
    ask_for(login(Client(), repo, alice), "race@example.org")
    alice_link = inbox.link("race@example.org")
    confirmed(repo, bob, "race@example.org", inbox)

    response = Client().post(alice_link)

    assert response.status_code == 409 and b"already in use" in response.content
    assert not r.hexists(f"user:{alice.id}", "email")
    assert not r.hexists(f"user:{alice.id}", "email_pending")  # nothing left waiting
    assert r.hget("emails", "race@example.org") == str(bob.id)


def test_it_refuses_the_wrong_password_and_changes_nothing(alice_client, alice, r, inbox):
    response = ask_for(alice_client, "alice@example.org", password="not it at all")

    assert response.status_code == 400
    assert r.hget(f"user:{alice.id}", "email_pending") is None and inbox.messages == []


@pytest.mark.parametrize("which", ["used", "forged", "replaced", "too long"])
def test_a_bad_confirmation_link_says_so_and_changes_nothing(alice_client, alice, r, inbox, which):
    ask_for(alice_client, "first@example.org")
    path = inbox.link("first@example.org")
    if which == "used":
        Client().post(path)
    elif which == "forged":
        path = "/settings/email/confirm/" + "A" * 43 + "/"
    elif which == "replaced":
        ask_for(alice_client, "second@example.org")
    else:
        path = "/settings/email/confirm/" + "A" * 500 + "/"
    before = r.hgetall(f"user:{alice.id}")

    shown, posted = Client().get(path), Client().post(path)

    for response in (shown, posted):
        assert response.status_code == 404 and b"This link does not work" in response.content
    assert r.hgetall(f"user:{alice.id}") == before


def test_the_mail_server_down_changes_no_answer_and_the_link_goes_once_it_is_back(
    alice_client, alice, r, inbox, settings
):
    settings.EMAIL_PORT = free_port()  # nothing listens there: the server is down

    response = ask_for(alice_client, "alice@example.org")

    assert response.status_code == 302  # as when it is up: the page never waits on it
    assert r.hget(f"user:{alice.id}", "email_pending") == "alice@example.org"
    assert inbox.deliver() == 1 and inbox.messages == []
    [job] = delayed(r)  # tried again later, with the mail queue's backoff
    assert job["kind"] == "confirm_address" and job["attempt"] == 1
    assert job["error"].startswith("Retry")
    assert keys_like(r, "email_confirm:*") == []  # the link made for it is dropped
    assert keys_like(r, "mail_sent:*") == []
    settings.EMAIL_PORT = inbox.port  # back up

    assert work.run_pending("mail", now=later()) == 1

    [sent] = inbox.messages
    assert sent["To"] == "alice@example.org" and delayed(r) == [] and queued(r) == []
    assert r.get(f"mail_sent:{job['payload']['mail']}") == "sent"
    assert Client().post(inbox.link("alice@example.org")).status_code == 302
    assert r.hget(f"user:{alice.id}", "email") == "alice@example.org"


def test_a_full_mail_queue_says_to_try_later_and_keeps_nothing(
    alice_client, alice, r, inbox, monkeypatch
):
    def full(*args, **kwargs):
        raise work.QueueFull("mail")

    monkeypatch.setattr(work, "enqueue", full)

    asked = ask_for(alice_client, "alice@example.org")
    reset = forgot(Client(), "alice@example.org")

    for response in (asked, reset):
        assert response.status_code == 503 and b"try again later" in response.content
        assert response["Retry-After"] == "60"
    assert b'value="alice@example.org"' in asked.content  # what was typed stays
    assert r.hget(f"user:{alice.id}", "email_pending") is None
    assert r.get(f"ratelimit:email_user:{alice.id}") == "0"  # given back
    assert alice_client.get("/").status_code == 200  # the site keeps serving


def test_it_removes_the_address_and_tells_it(repo, alice, r, inbox):
    confirmed(repo, alice, "alice@example.org", inbox)
    client = login(Client(), repo, alice)

    response = client.post("/settings/email/remove/", {"remove-password": PASSWORD})

    assert response.status_code == 302
    assert not r.hexists(f"user:{alice.id}", "email") and r.hgetall("emails") == {}
    assert "removed" in inbox.to("alice@example.org")[-1]["Subject"]


def test_the_email_pages_need_a_login(client):
    assert client.get("/settings/email/")["Location"].startswith("/login/?next=")
    assert client.post("/settings/email/remove/")["Location"].startswith("/login/?next=")


def test_deleting_the_account_frees_its_address(repo, alice, r, inbox):
    confirmed(repo, alice, "alice@example.org", inbox)

    login(Client(), repo, alice).post("/settings/delete/", {"password": PASSWORD})

    assert r.hget(f"user:{alice.id}", "status") == "deleted"
    assert r.hgetall("emails") == {} and not r.hexists(f"user:{alice.id}", "email")
    assert repo.emails.account_for("alice@example.org") is None


def test_purging_an_account_lets_go_of_a_claim_its_deletion_left(repo, alice, r, inbox):
    confirmed(repo, alice, "alice@example.org", inbox)
    repo.accounts.delete_account(alice, at=1000)
    r.hset(f"user:{alice.id}", "email", "alice@example.org")  # as if cut short
    r.hset("emails", "alice@example.org", alice.id)

    repo.accounts.purge_deleted_accounts()

    assert r.hgetall("emails") == {}


# --- Forgot your password? ---------------------------------------------------------------


def forgot(client: Client, address: str):
    return client.post("/password/forgot/", {"email": address})


def test_the_login_page_offers_a_reset(client):
    assert b'href="/password/forgot/"' in client.get("/login/").content


def test_it_answers_alike_whether_or_not_an_account_has_the_address(repo, alice, r, inbox):
    confirmed(repo, alice, "alice@example.org", inbox)

    known_client, unknown_client = Client(), Client()
    known = forgot(known_client, "ALICE@example.org")
    unknown = forgot(unknown_client, "nobody@example.org")

    assert known.status_code == unknown.status_code == 302
    assert known["Location"] == unknown["Location"] == "/login/"
    said = [
        re.search(r'<li class="message[^"]*">([^<]*)</li>', c.get("/login/").content.decode())
        .group(1)
        .replace(address, "ADDRESS")
        for c, address in (
            (known_client, "ALICE@example.org"),
            (unknown_client, "nobody@example.org"),
        )
    ]
    assert said[0] == said[1] and "ADDRESS" in said[0]
    assert inbox.to("nobody@example.org") == []
    [reset_key] = keys_like(r, "password_reset:*")
    assert 3500 < r.ttl(reset_key) <= 3600
    assert inbox.link("alice@example.org").startswith("/password/reset/")


def test_a_pending_address_gets_no_reset_link(alice_client, alice, r, inbox):
    ask_for(alice_client, "alice@example.org")  # never confirmed

    forgot(Client(), "alice@example.org")

    assert len(inbox.to("alice@example.org")) == 1 and keys_like(r, "password_reset:*") == []


def test_the_reset_link_sets_a_new_password_and_logs_out_everywhere(repo, alice, r, inbox):
    confirmed(repo, alice, "alice@example.org", inbox)
    app, _ = repo.oauth.register_app("Phone app", ["urn:ietf:wg:oauth:2.0:oob"], ["read"])
    repo.oauth.save_token("t" * 43, app.client_id, alice.id, ["read"])
    device = login(Client(), repo, alice)
    old_secret = r.hget(f"user:{alice.id}", "auth")
    forgot(Client(), "alice@example.org")
    path = inbox.link("alice@example.org")
    browser = Client()

    form = browser.get(path)
    done = browser.post(path, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})

    assert form.status_code == 200 and b"@alice" in form.content
    assert done.status_code == 200
    assert b"every app that uses it will lose its access" in form.content
    assert b"This app lost its access to your account:" in done.content
    assert b"<li>Phone app</li>" in done.content
    assert check_password(NEW_PASSWORD, r.hget(f"user:{alice.id}", "password"))
    assert r.hget(f"user:{alice.id}", "auth") != old_secret
    assert not r.hexists("auths", old_secret)
    assert device.get("/settings/email/").status_code == 302  # logged out
    assert keys_like(r, "password_reset:*") == []
    assert not r.exists(f"oauth:user:{alice.id}")  # revoked, as Mastodon does
    assert not r.exists(f"oauth:token:{digest('t' * 43)}")
    api = Client().get(
        "/api/v1/accounts/verify_credentials", HTTP_AUTHORIZATION="Bearer " + "t" * 43
    )
    assert api.status_code == 401
    assert (
        browser.post("/login/", {"username": "alice", "password": NEW_PASSWORD}).status_code == 302
    )


def test_a_reset_refuses_a_password_the_validators_refuse(repo, alice, r, inbox):
    confirmed(repo, alice, "alice@example.org", inbox)
    forgot(Client(), "alice@example.org")
    path = inbox.link("alice@example.org")
    before = r.hgetall(f"user:{alice.id}")

    weak = Client().post(path, {"new_password1": "12345678", "new_password2": "12345678"})
    unlike = Client().post(path, {"new_password1": NEW_PASSWORD, "new_password2": "other one"})

    assert weak.status_code == 400 and b"too common" in weak.content
    assert unlike.status_code == 400 and b"do not match" in unlike.content
    assert r.hgetall(f"user:{alice.id}") == before
    assert len(keys_like(r, "password_reset:*")) == 1  # the link still works


@pytest.mark.parametrize("which", ["expired", "used", "forged", "deleted", "password changed"])
def test_a_bad_reset_link_says_so_and_changes_nothing(repo, alice, r, inbox, which):
    confirmed(repo, alice, "alice@example.org", inbox)
    forgot(Client(), "alice@example.org")
    path = inbox.link("alice@example.org")
    if which == "expired":
        r.pexpire(keys_like(r, "password_reset:*")[0], 1)
        time.sleep(0.05)
    elif which == "used":
        Client().post(path, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    elif which == "forged":
        path = "/password/reset/" + "B" * 43 + "/"
    elif which == "deleted":
        repo.accounts.delete_account(alice)
    else:
        login(Client(), repo, alice).post(
            "/settings/password/",
            {
                "old_password": PASSWORD,
                "new_password1": "yet another fine passphrase",
                "new_password2": "yet another fine passphrase",
            },
        )
    before = r.hgetall(f"user:{alice.id}")
    other = "and one more passphrase"

    shown = Client().get(path)
    posted = Client().post(path, {"new_password1": other, "new_password2": other})

    for response in (shown, posted):
        assert response.status_code == 404 and b"This link does not work" in response.content
    assert r.hgetall(f"user:{alice.id}") == before


def test_reset_requests_are_limited_per_address_asked_about(client, r, inbox, settings):
    settings.RETWIS_LIMIT_RESET_EMAIL = (2, 3600)

    answers = [forgot(Client(), "Someone@example.org").status_code for _ in range(3)]
    other = forgot(Client(), "else@example.org")

    assert answers == [302, 302, 429] and other.status_code == 302
    assert any(k.startswith("ratelimit:reset_email:") for k in r.scan_iter("ratelimit:*"))


def test_reset_requests_are_limited_per_client_address(client, inbox, settings):
    settings.RETWIS_LIMIT_RESET_ADDRESS = (2, 3600)

    answers = [forgot(client, f"n{i}@example.org").status_code for i in range(3)]

    assert answers == [302, 302, 429]
    assert b"Too many requests" in forgot(client, "x@example.org").content


def test_a_reset_is_answered_alike_with_the_mail_server_down_and_mailed_once_it_is_back(
    repo, alice, r, inbox, settings
):
    confirmed(repo, alice, "alice@example.org", inbox)
    settings.EMAIL_PORT = free_port()

    known, unknown = forgot(Client(), "alice@example.org"), forgot(Client(), "no@example.org")

    assert known.status_code == unknown.status_code == 302
    assert known["Location"] == unknown["Location"] == "/login/"
    assert inbox.deliver() == 2
    [job] = delayed(r)  # alice's, tried again later; nobody's was done: nothing to send
    assert job["payload"]["email"] == "alice@example.org"
    assert keys_like(r, "password_reset:*") == []  # no link left behind
    settings.EMAIL_PORT = inbox.port

    assert work.run_pending("mail", now=later()) == 1

    assert [m["To"] for m in inbox.messages[1:]] == ["alice@example.org"]
    assert inbox.link("alice@example.org").startswith("/password/reset/")
    assert len(keys_like(r, "password_reset:*")) == 1


def test_a_suspended_account_gets_no_reset_link_and_the_others_still_do(
    repo, alice, bob, sam, r, inbox
):
    confirmed(repo, alice, "alice@example.org", inbox)
    confirmed(repo, bob, "bob@example.org", inbox)
    repo.moderation.suspend(alice.id, sam, "spam")

    assert forgot(Client(), "alice@example.org").status_code == 302
    assert forgot(Client(), "bob@example.org").status_code == 302

    assert inbox.deliver() == 2
    assert len(inbox.to("alice@example.org")) == 1  # only its confirmation link, long ago
    assert inbox.link("bob@example.org").startswith("/password/reset/")
    [link_key] = keys_like(r, "password_reset:*")
    assert r.hget(link_key, "user_id") == str(bob.id)


# --- Staff --------------------------------------------------------------------------------


def test_staff_see_whether_an_address_is_confirmed_but_not_the_address(
    repo, alice, sam_client, inbox
):
    assert b"none confirmed" in sam_client.get("/staff/users/alice/").content
    confirmed(repo, alice, "alice@example.org", inbox)

    page = sam_client.get("/staff/users/alice/")

    assert b"none confirmed" not in page.content and b"alice@example.org" not in page.content
    assert b"/staff/users/alice/send_reset/" in page.content


def test_staff_send_a_reset_link_and_the_log_says_so(repo, alice, sam, sam_client, r, inbox):
    confirmed(repo, alice, "alice@example.org", inbox)

    response = sam_client.post("/staff/users/alice/send_reset/", {"send_reset-reason": "asked"})

    assert response.status_code == 302 and response["Location"] == "/staff/users/alice/"
    assert inbox.link("alice@example.org").startswith("/password/reset/")
    [entry] = [e for _, e in r.xrange("audit") if e["action"] == "send_reset"]
    assert entry["actor"] == str(sam.id) and entry["user"] == str(alice.id)
    assert entry["reason"] == "asked"


def test_staff_cannot_send_a_reset_to_an_account_without_an_address(sam_client, alice, r):
    response = sam_client.post("/staff/users/alice/send_reset/", {"send_reset-reason": ""})

    assert response.status_code == 302
    assert keys_like(r, "password_reset:*") == []
    assert not [e for _, e in r.xrange("audit") if e["action"] == "send_reset"]


def test_only_staff_send_reset_links(repo, alice, bob_client, r, inbox):
    confirmed(repo, alice, "alice@example.org", inbox)

    response = bob_client.post("/staff/users/alice/send_reset/", {})

    assert response.status_code == 403
    assert keys_like(r, "password_reset:*") == []


def test_export_and_import_carry_addresses_and_links(repo, alice, r, inbox, tmp_path):
    make_user(repo, "dora")
    confirmed(repo, alice, "alice@example.org", inbox)
    forgot(Client(), "alice@example.org")
    inbox.deliver()
    out = tmp_path / "dump.jsonl"
    from django.core.management import call_command

    call_command("export", str(out))
    saved = {k: r.type(k) for k in r.scan_iter()}
    r.flushall()
    call_command("import", str(out))

    assert r.hget("emails", "alice@example.org") == str(alice.id)
    assert r.hget(f"user:{alice.id}", "email") == "alice@example.org"
    assert keys_like(r, "password_reset:*") and set(saved) == set(r.scan_iter())


# --- Settings -----------------------------------------------------------------------------


def settings_error(**env: str) -> str:
    """Import the site's settings with env set; return what stopped it ("" if nothing)."""
    import os
    import subprocess
    import sys

    base = {"SECRET_KEY": "x" * 50, "ALLOWED_HOSTS": "h", "REDIS_URL": "redis://127.0.0.1:9/0"}
    done = subprocess.run(
        [sys.executable, "-c", "import retwis_site.settings"],
        env={**os.environ, **base, "DEBUG": "false", **env},
        capture_output=True,
        text=True,
    )
    return "" if done.returncode == 0 else done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"EMAIL_PORT": "25x"}, "EMAIL_PORT must be an integer"),
        ({"EMAIL_PORT": "70000"}, "EMAIL_PORT must be a port"),
        ({"EMAIL_USE_TLS": "true", "EMAIL_USE_SSL": "true"}, "not both"),
        ({"EMAIL_USE_TLS": "maybe"}, "EMAIL_USE_TLS must be true or false"),
        ({"EMAIL_TIMEOUT": "0"}, "EMAIL_TIMEOUT must be between"),
        ({"EMAIL_BACKEND": "smtp please"}, "EMAIL_BACKEND must be a dotted class path"),
        ({"DEFAULT_FROM_EMAIL": "Retwis"}, "DEFAULT_FROM_EMAIL must be an address"),
        ({"SITE_URL": "retwis.example.org"}, "SITE_URL must look like"),
        ({"RETWIS_LIMIT_RESET_EMAIL": "3 an hour"}, "RETWIS_LIMIT_RESET_EMAIL must look like"),
    ],
)
def test_malformed_mail_settings_stop_start_up(env, said):
    assert said in settings_error(**env)


def test_good_mail_settings_start(settings):
    assert settings_error(
        EMAIL_HOST="smtp.example.org", EMAIL_PORT="587", EMAIL_USE_TLS="true",
        SITE_URL="https://retwis.example.org/", DEFAULT_FROM_EMAIL="Retwis <hi@example.org>",
    ) == ""  # fmt: skip


def test_site_url_is_required_when_debug_is_off():
    said = "Set SITE_URL, the site's address for links in mail"
    assert said in settings_error(SITE_URL="")
    assert said in settings_error(SITE_URL="  ")
    assert settings_error(SITE_URL="", DEBUG="true") == ""


def test_run_site_gives_the_site_its_own_address_for_links(monkeypatch):
    from tests.test_launch import launch

    monkeypatch.setenv("SECRET_KEY", "x" * 50)  # none made under var/
    monkeypatch.delenv("SITE_URL", raising=False)
    assert launch.site_env(dev=False, port=8123)["SITE_URL"] == "http://127.0.0.1:8123"
    monkeypatch.setenv("SITE_URL", "https://retwis.example.org")
    assert launch.site_env(dev=False, port=8123)["SITE_URL"] == "https://retwis.example.org"


def test_links_in_mail_are_under_site_url_whatever_host_the_request_named(
    repo, alice, r, inbox, settings
):
    confirmed(repo, alice, "alice@example.org", inbox)

    response = Client().post(
        "/password/forgot/", {"email": "alice@example.org"}, HTTP_HOST="127.0.0.1:1337"
    )
    settings.SITE_URL = "https://retwis.example.org"  # when the worker writes the mail
    Client().post("/password/forgot/", {"email": "alice@example.org"}, HTTP_HOST="localhost")

    assert response.status_code == 302
    links = [
        re.search(r"\S+/password/reset/\S+", m.get_body(("plain",)).get_content()).group()
        for m in inbox.to("alice@example.org")[1:]
    ]
    assert [link.split("/password/reset/")[0] for link in links] == [settings.SITE_URL] * 2
    assert settings.SITE_URL == "https://retwis.example.org"
    assert len(keys_like(r, "password_reset:*")) == 2


def test_a_reset_from_the_accounts_own_browser_logs_it_out_there_too(repo, alice, r, inbox):
    confirmed(repo, alice, "alice@example.org", inbox)
    browser = login(Client(), repo, alice)
    forgot(browser, "alice@example.org")
    path = inbox.link("alice@example.org")

    done = browser.post(path, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})

    assert done.status_code == 200 and done.cookies["auth"].value == ""
    assert b'action="/logout/"' not in done.content  # shown logged out, as it now is
    assert browser.get("/settings/email/").status_code == 302


def test_the_welcome_page_offers_a_reset_too(client):
    assert b'href="/password/forgot/"' in client.get("/").content


def test_confirmation_links_are_limited_per_user(alice_client, alice, r, inbox, settings):
    settings.RETWIS_LIMIT_EMAIL = (2, 3600)

    answers = [ask_for(alice_client, f"a{i}@example.org").status_code for i in range(3)]

    assert answers == [302, 302, 429]
    assert r.hget(f"user:{alice.id}", "email_pending") == "a1@example.org"
    assert [job["payload"]["email"] for job in queued(r)] == ["a0@example.org", "a1@example.org"]
    assert inbox.deliver() == 2
    assert [m["To"] for m in inbox.messages] == ["a1@example.org"]  # a0's was replaced
    assert len(keys_like(r, "email_confirm:*")) == 1
