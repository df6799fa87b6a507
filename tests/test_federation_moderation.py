"""Minimum moderation across servers (issue 35, part 7), on real Redis: staff block a server
(repository/federation/domains.py: nothing in or out, its accounts suspended, follows with
it cut by the worker's job) and suspend one remote account; a person here blocking a remote
account refuses its follows, stops what is sent to it and tells its server; the staff page
/staff/domains/ (social/staff/domain_views.py).

Remote accounts are stored as the resolver stores them (Mastodon's actor document); incoming
activities are signed and POSTed as in tests/test_federation_inbox.py, whose helpers this
reuses; jobs run in this process (work.run_pending), and a fan-out job is run by its handler
so the deliveries it queues are read from the deliver queue, not sent.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from social import keys, work
from social.federation import documents
from social.federation.actor_documents import parse_actor
from social.federation.resolve import ResolveError, Resolver
from social.repository import HOME, PROCESS_CACHE, HomeFeed, NotAllowed, Repository, User, Viewer
from social.repository.federation.actors import RemoteActor
from social.repository.federation.deliveries import UNAVAILABLE_AFTER_DAYS
from social.repository.moderation.actions import SYSTEM_ACTOR
from social.text import encode_mentions
from social.work_handlers.fanout import fan_out
from tests.conftest import CLUSTER, login, make_user
from tests.federation_actors import mastodon_actor
from tests.test_federation_inbox import follow_of, ours, signed_post, store_zed

DELIVER_READY = "jobs:{deliver}:ready"
INBOX_READY = "jobs:{inbox}:ready"
REMOTE = "remote.test"


def remote(repo: Repository, name: str, host: str = REMOTE, **changes) -> RemoteActor:
    """A remote account stored as the resolver stores one (https, a shared inbox)."""
    document = mastodon_actor(name, host, **changes)
    return repo.remote_actors.upsert(parse_actor(document, fetched_from=document["id"]))


def queued(r, stream: str) -> list[dict]:
    """The jobs on a queue's ready stream: kind, destination and payload."""
    return [json.loads(fields["job"]) for _, fields in r.xrange(stream)]


def deliveries(r) -> list[dict]:
    """The deliver queue's activity jobs: inbox, signer and the activity decoded."""
    found = []
    for job in queued(r, DELIVER_READY):
        if job["kind"] == "activity":
            payload = job["payload"]
            found.append({**payload, "activity": json.loads(payload["activity"])})
    return found


def audit(r, action: str) -> list[dict]:
    return [fields for _, fields in r.xrange(keys.audit_log()) if fields["action"] == action]


def home_ids(repo: Repository, user: User) -> list[int]:
    read = repo.reader.page(HomeFeed(user.id), Viewer(user.id), 1, 20, shows=HOME)
    return [post.id for post in read.page.items]


@pytest.fixture
def inbox_site(settings):
    """The inbox tests' site: remote.test reached over plain http on loopback."""
    settings.FEDERATION_ALLOW_HTTP = True
    settings.FEDERATION_ALLOW_ADDRESSES = ["127.0.0.0/8"]
    settings.SITE_URL = "http://testserver"


@pytest.fixture
def federating(settings):
    """A site that tells other servers what its people do (outgoing.federating)."""
    settings.FEDERATION_HOSTS = {REMOTE: ("127.0.0.1", 1)}  # never reached: jobs are read


# --- Where remote accounts are --------------------------------------------------------------


def test_the_index_keys_are_spelled_as_documented():
    assert keys.remote_domain_accounts("a.test:8443") == "ap:domain:a.test:8443:accounts"
    assert keys.remote_domains() == "ap:domains:known"
    assert keys.blocked_domain_details() == "ap:domains:blocked:details"
    for bad in ["", "A.test", "a b", "evil}{x", "x" * 261]:
        with pytest.raises(ValueError):
            keys.remote_domain_accounts(bad)


def test_an_account_is_filed_under_its_address_and_its_actor_ids_domains(repo, r):
    document = mastodon_actor("ann", "social.remote.test")
    ann = repo.remote_actors.upsert(
        parse_actor(document, fetched_from=document["id"], domain=REMOTE)
    )
    bob = remote(repo, "bob", "other.test:8443")

    assert ann.username == "ann@remote.test"
    assert r.smembers(keys.remote_domain_accounts(REMOTE)) == {str(ann.id)}
    assert r.smembers(keys.remote_domain_accounts("social.remote.test")) == {str(ann.id)}
    assert r.smembers(keys.remote_domain_accounts("other.test:8443")) == {str(bob.id)}
    assert r.zrange(keys.remote_domains(), 0, -1, withscores=True) == [
        ("test.other.:8443", 0.0),
        ("test.remote.", 0.0),
        ("test.remote.social.", 0.0),
    ]
    repo.remote_actors.upsert(parse_actor(document, fetched_from=document["id"], domain=REMOTE))
    assert r.zcard(keys.remote_domains()) == 3


# --- Staff block a server --------------------------------------------------------------------


def test_a_block_suspends_the_servers_accounts_and_those_under_it_hiding_their_posts(
    repo, r, sam, alice
):
    zed, yan = remote(repo, "zed"), remote(repo, "yan", "social.remote.test:8443")
    other = remote(repo, "oli", "notremote.test")
    repo.graph.follow(alice.id, zed.id)
    repo.graph.follow(alice.id, other.id)
    from_zed = repo.posts.create_post(zed.id, "from the blocked server")
    from_other = repo.posts.create_post(other.id, "from elsewhere")
    assert home_ids(repo, alice) == [from_other, from_zed]
    version = r.get(keys.visibility_version())

    assert repo.federation_domains.block("Remote.Test", sam, "spam wave")

    for account in (zed, yan):
        stored = r.hgetall(keys.user(account.id))
        assert stored["status"] == "suspended"
        assert stored["suspended_reason"] == "remote.test: spam wave"
        assert stored["suspended_by"] == str(sam.id)
        assert stored["domain_block"] == f"remote.test {stored['suspended_at']}"
        assert "auth" not in stored  # a remote account never logs in: no secret written
    assert r.hget(keys.user(other.id), "status") is None
    assert set(r.zrange(keys.suspended_users(), 0, -1)) == {zed.username, yan.username}
    assert r.get(keys.visibility_version()) != version
    assert home_ids(repo, alice) == [from_other]  # the follow stands until the job runs
    [entry] = audit(r, "block_domain")
    assert (entry["user_name"], entry["reason"], entry["actor"]) == (
        "remote.test",
        "spam wave",
        str(sam.id),
    )
    details = json.loads(r.hget(keys.blocked_domain_details(), "remote.test"))
    assert details == {"by": sam.id, "by_name": "sam", "reason": "spam wave"}


def test_the_job_cuts_the_follows_both_ways_with_the_blocked_servers_accounts(
    repo, r, sam, alice, bob, charlie
):
    zed, yan = remote(repo, "zed"), remote(repo, "yan", "social.remote.test")
    oli = remote(repo, "oli", "other.test")
    for follower, followee in [
        (alice, zed), (alice, yan), (charlie, yan), (zed, alice), (zed, bob), (alice, oli),
        (oli, alice), (alice, bob),
    ]:  # fmt: skip
        repo.graph.follow(follower.id, followee.id)
    zeds = repo.posts.create_post(zed.id, "from zed")
    bobs = repo.posts.create_post(bob.id, "from bob")
    total = int(r.get(keys.follows_total()))

    repo.federation_domains.block(REMOTE, sam, "spam")
    work.enqueue("inbox", "domain_block", {"domain": REMOTE})
    assert work.run_pending("inbox") == 1

    for account in (zed, yan):
        assert r.zcard(keys.followers(account.id)) == 0
        assert r.zcard(keys.following(account.id)) == 0
    assert set(r.zrange(keys.following(alice.id), 0, -1)) == {str(oli.id), str(bob.id)}
    assert r.zrange(keys.followers(alice.id), 0, -1) == [str(oli.id)]
    assert r.zrange(keys.followers(bob.id), 0, -1) == [str(alice.id)]
    assert r.zcard(keys.following(charlie.id)) == 0
    assert int(r.get(keys.follows_total())) == total - 5
    feed = [int(i) for i in r.lrange(keys.home_feed(alice.id), 0, -1)]
    assert zeds not in feed and bobs in feed  # the unfollow steps took its posts out
    assert r.xlen(INBOX_READY) == 0


def test_cutting_follows_reads_a_crowd_of_followers_in_rounds(repo, r, sam, monkeypatch):
    from social.repository.federation import domains

    monkeypatch.setattr(domains, "FOLLOWS_READ", 2)
    zed = remote(repo, "zed")
    fans = [make_user(repo, f"fan{i}") for i in range(5)]
    for fan in fans:
        repo.graph.follow(fan.id, zed.id)
    r.hset(keys.blocked_domains(), REMOTE, 1)  # blocked by another process

    assert repo.federation_domains.settle(REMOTE) == (1, 5)
    assert r.zcard(keys.followers(zed.id)) == 0
    assert all(r.zcard(keys.following(fan.id)) == 0 for fan in fans)


def test_settling_is_idempotent_and_finishes_a_block_cut_short(repo, r, sam, alice):
    zed = remote(repo, "zed")
    repo.graph.follow(alice.id, zed.id)
    r.hset(keys.blocked_domains(), REMOTE, 1)  # the entry written, then the process died

    assert repo.federation_domains.settle(REMOTE) == (1, 1)
    assert repo.federation_domains.settle(REMOTE) == (0, 0)
    assert r.hget(keys.user(zed.id), "status") == "suspended"
    assert r.zcard(keys.following(alice.id)) == 0


def test_a_job_that_runs_after_the_unblock_cuts_nothing(repo, r, sam, alice):
    zed = remote(repo, "zed")
    repo.graph.follow(alice.id, zed.id)
    repo.graph.follow(zed.id, alice.id)

    repo.federation_domains.block(REMOTE, sam, "mistake")
    work.enqueue("inbox", "domain_block", {"domain": REMOTE})
    repo.federation_domains.unblock(REMOTE, sam, "it was a mistake")
    work.run_pending("inbox")

    assert r.hget(keys.user(zed.id), "status") is None
    assert r.zscore(keys.following(alice.id), zed.id) is not None
    assert r.zscore(keys.followers(alice.id), zed.id) is not None


def test_unblocking_lifts_only_the_suspensions_the_block_made(repo, r, sam, olga):
    zed, yan, xia = remote(repo, "zed"), remote(repo, "yan"), remote(repo, "xia")
    repo.moderation.suspend(zed.id, sam, "suspended on its own")
    repo.federation_domains.block(REMOTE, sam, "spam")
    assert not repo.moderation.suspend(yan.id, sam, "again")  # suspended already
    repo.moderation.unsuspend(xia.id, olga, "this one is fine")
    repo.moderation.suspend(xia.id, olga, "no, it is not")  # a suspension of staff's own

    assert repo.federation_domains.unblock(REMOTE, sam, "over")

    stored = {a.username: r.hgetall(keys.user(a.id)) for a in (zed, yan, xia)}
    assert stored[zed.username]["suspended_reason"] == "suspended on its own"
    assert stored[xia.username]["suspended_reason"] == "no, it is not"
    assert "status" not in stored[yan.username] and "domain_block" not in stored[yan.username]
    assert set(r.zrange(keys.suspended_users(), 0, -1)) == {zed.username, xia.username}
    assert not r.exists(keys.blocked_domains(), keys.blocked_domain_details())
    [entry] = audit(r, "unblock_domain")
    assert (entry["user_name"], entry["reason"]) == ("remote.test", "over")
    assert not repo.federation_domains.unblock(REMOTE, sam)  # not blocked: nothing logged
    assert len(audit(r, "unblock_domain")) == 1


def test_a_server_under_another_block_stays_suspended_when_its_parent_is_unblocked(repo, r, sam):
    zed, yan = remote(repo, "zed"), remote(repo, "yan", "social.remote.test")
    repo.federation_domains.block(REMOTE, sam, "spam")
    repo.federation_domains.block("social.remote.test", sam, "worse")

    repo.federation_domains.unblock(REMOTE, sam)

    assert r.hget(keys.user(zed.id), "status") is None
    kept = r.hgetall(keys.user(yan.id))
    assert kept["status"] == "suspended"
    assert kept["domain_block"] == f"social.remote.test {kept['suspended_at']}"
    repo.federation_domains.unblock("social.remote.test", sam)
    assert r.hget(keys.user(yan.id), "status") is None


def test_a_block_of_a_port_covers_that_port_alone(repo, r, sam):
    on_port, plain = remote(repo, "zed", "remote.test:8443"), remote(repo, "yan")

    repo.federation_domains.block("remote.test:8443", sam)

    assert r.hget(keys.user(on_port.id), "status") == "suspended"
    assert r.hget(keys.user(plain.id), "status") is None


def test_nothing_is_queued_for_a_blocked_server_and_its_followers_there_hear_nothing(
    repo, r, sam, alice
):
    zed, oli = remote(repo, "zed"), remote(repo, "oli", "other.test")
    for follower in (zed, oli):
        repo.graph.follow(follower.id, alice.id)
    repo.federation_domains.block(REMOTE, sam, "spam")
    post = repo.posts.create_post(alice.id, "hello, neighbours")

    fan_out({"action": "create", "actor": str(alice.id), "object": str(post), "at": "1"})

    assert [d["inbox"] for d in deliveries(r)] == ["https://other.test/inbox"]
    assert repo.federation_deliveries.follower_inboxes(alice.id) == {"https://other.test/inbox"}
    assert all(job["dest"] != REMOTE for job in queued(r, DELIVER_READY))


def test_the_inbox_refuses_a_blocked_server_at_the_door_and_in_the_job(
    repo, r, inbox_site, alice, sam
):
    zed = store_zed(repo)
    assert signed_post(follow_of(ours(f"users/{alice.id}"), 1)).status_code == 202
    repo.federation_domains.block(REMOTE, sam, "spam")  # after its accept

    assert signed_post(follow_of(ours(f"users/{alice.id}"), 2)).status_code == 403
    work.run_pending("inbox")

    assert r.zscore(keys.followers(alice.id), zed.id) is None
    assert repo.federation_inbox.totals() == {"dropped:blocked": 1}
    assert deliveries(r) == []  # no Accept goes back


def test_nothing_is_fetched_from_a_blocked_server(repo, sam):
    repo.federation_domains.block(REMOTE, sam)

    with pytest.raises(ResolveError, match="remote.test is blocked here"):
        Resolver(repo).address("zed@social.remote.test")
    with pytest.raises(ResolveError, match="blocked here"):
        Resolver(repo).actor("https://remote.test/users/zed")


# --- Staff suspend one remote account --------------------------------------------------------


def test_staff_suspend_a_remote_account_from_its_page_and_it_is_cut_off(
    repo, r, inbox_site, sam_client, sam, alice
):
    zed = store_zed(repo)
    repo.graph.follow(zed.id, alice.id)
    page = sam_client.get(f"/staff/users/{zed.username}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "An account of another server, remote.test." in text
    assert "Log out everywhere" not in text and "Grant staff" not in text
    assert 'href="/staff/domains/?domain=remote.test#block"' in text
    auths = r.hlen(keys.auths())

    answer = sam_client.post(
        f"/staff/users/{zed.username}/suspend/", {"suspend-reason": "spam from afar"}
    )

    assert answer.status_code == 302 and answer["Location"] == f"/staff/users/{zed.username}/"
    stored = r.hgetall(keys.user(zed.id))
    assert (stored["status"], stored["suspended_reason"]) == ("suspended", "spam from afar")
    assert "auth" not in stored and r.hlen(keys.auths()) == auths
    [entry] = audit(r, "suspend")
    assert entry["user_name"] == zed.username
    assert repo.federation_deliveries.follower_inboxes(alice.id) == set()  # nothing to it
    signed_post(follow_of(ours(f"users/{alice.id}")))
    work.run_pending("inbox")
    assert repo.federation_inbox.totals() == {"dropped:suspended": 1}  # nothing from it
    log = sam_client.get("/staff/log/", {"target": zed.username})
    assert log.status_code == 200 and "spam from afar" in log.content.decode()


def test_a_remote_account_cannot_be_made_staff(repo, olga):
    repo.moderation.grant_owner(olga.id, SYSTEM_ACTOR)
    zed = remote(repo, "zed")
    with pytest.raises(NotAllowed):
        repo.moderation.grant_staff(zed.id, olga)
    with pytest.raises(NotAllowed):
        repo.moderation.grant_staff(zed.id, SYSTEM_ACTOR)


# --- A person here blocks a remote account ---------------------------------------------------


def test_a_blocked_remote_accounts_follow_is_rejected_and_not_written(repo, r, inbox_site, alice):
    zed = store_zed(repo)
    repo.relations.block(alice.id, zed.id)

    signed_post(follow_of(ours(f"users/{alice.id}")))
    work.run_pending("inbox")

    assert r.zscore(keys.followers(alice.id), zed.id) is None
    assert r.zscore(keys.following(zed.id), alice.id) is None
    [reject] = deliveries(r)
    assert reject["inbox"] == f"{zed.uri}/inbox" and reject["signer"] == str(alice.id)
    assert reject["activity"]["type"] == "Reject"
    assert reject["activity"]["object"]["actor"] == zed.uri


def test_a_block_ends_the_follow_so_posts_reach_that_server_only_for_its_other_followers(
    repo, r, alice
):
    zed, eve = remote(repo, "zed"), remote(repo, "eve")  # one server, one shared inbox
    for follower in (zed, eve):
        repo.graph.follow(follower.id, alice.id)

    repo.relations.block(alice.id, zed.id)

    assert r.zscore(keys.followers(alice.id), zed.id) is None
    assert r.zscore(keys.following(zed.id), alice.id) is None
    # Mastodon's way: eve still follows, so her server's shared inbox still gets the post.
    assert repo.federation_deliveries.follower_inboxes(alice.id) == {"https://remote.test/inbox"}
    repo.relations.block(alice.id, eve.id)
    post = repo.posts.create_post(alice.id, "for no one there")
    fan_out({"action": "create", "actor": str(alice.id), "object": str(post), "at": "1"})
    assert repo.federation_deliveries.follower_inboxes(alice.id) == set()
    assert deliveries(r) == []


def test_a_post_mentioning_a_blocked_remote_account_is_not_sent_to_it(repo, r, alice):
    zed = remote(repo, "zed", endpoints=None)
    repo.relations.block(alice.id, zed.id)
    post = repo.posts.create_post(alice.id, "about @zed@remote.test")
    r.hset(keys.post(post), "mentions", encode_mentions({"zed@remote.test": zed.id}))

    fan_out({"action": "create", "actor": str(alice.id), "object": str(post), "at": "1"})

    assert deliveries(r) == []


def test_blocking_a_remote_account_on_its_page_sends_it_a_block(
    repo, r, federating, alice, alice_client
):
    zed = remote(repo, "zed")
    repo.graph.follow(alice.id, zed.id)
    fan_out({"action": "follow", "actor": str(alice.id), "object": str(zed.id), "at": "1"})
    r.delete(DELIVER_READY)

    answer = alice_client.post(f"/u/{zed.username}/block/")

    assert answer.status_code == 302
    assert r.zscore(keys.blocks(alice.id), zed.id) is not None
    assert r.zscore(keys.following(alice.id), zed.id) is None
    [job] = queued(r, DELIVER_READY)
    assert (job["kind"], job["payload"]["action"]) == ("fanout", "block")
    r.delete(DELIVER_READY)
    fan_out(job["payload"])
    undo, block = deliveries(r)
    assert undo["activity"]["type"] == "Undo" and undo["activity"]["object"]["type"] == "Follow"
    assert block["inbox"] == f"{zed.uri}/inbox"  # its own inbox, not the shared one
    assert block["activity"]["type"] == "Block"
    assert block["activity"]["actor"] == documents.actor_id(alice.id)
    assert block["activity"]["object"] == zed.uri


# --- The staff page --------------------------------------------------------------------------


def test_the_servers_page_lists_blocked_and_known_servers(repo, r, sam, sam_client):
    remote(repo, "zed"), remote(repo, "yan"), remote(repo, "oli", "other.test")
    remote(repo, "dee", "down.test")
    repo.federation_domains.block(REMOTE, sam, "spam <wave>")
    for day in range(UNAVAILABLE_AFTER_DAYS):
        repo.federation_deliveries.failed("down.test", now=1_700_000_000 + day * 86_400)

    page = sam_client.get("/staff/domains/")

    assert page.status_code == 200
    text = page.content.decode()
    blocked = text[text.index('id="blocked"') :].split("</section>")[0]
    assert "remote.test" in blocked and "spam &lt;wave&gt;" in blocked and "@sam" in blocked
    assert 'action="/staff/domains/remote.test/unblock/"' in blocked
    known = text[text.index('id="known"') :].split("</section>")[0]
    rows = {row.split("</th>")[0].rsplit(">", 1)[-1]: row for row in known.split("<tr>")[2:]}
    assert set(rows) == {"down.test", "other.test", "remote.test"}
    assert 'data-label="Accounts">2</td>' in rows["remote.test"]
    assert "blocked" in rows["remote.test"]
    assert "unavailable" in rows["down.test"]
    assert 'href="/staff/domains/?domain=other.test#block"' in rows["other.test"]
    dashboard = sam_client.get("/staff/").content.decode()
    assert 'href="/staff/domains/"' in dashboard


def test_the_known_servers_are_paged_after_a_domain(repo, sam_client):
    for host in ("a.test", "b.test", "c.test"):
        remote(repo, "zed", host)

    first, more = repo.federation_domains.known(count=2)
    assert ([k.domain for k in first], more) == (["a.test", "b.test"], True)
    rest, more = repo.federation_domains.known(after="b.test", count=2)
    assert ([k.domain for k in rest], more) == (["c.test"], False)
    page = sam_client.get("/staff/domains/", {"after": "b.test"}).content.decode()
    assert "c.test" in page and "a.test" not in page
    bad = sam_client.get("/staff/domains/", {"after": "²" * 400})
    assert bad.status_code == 200 and "a.test" in bad.content.decode()  # the first page


def test_staff_block_a_server_from_the_page(repo, r, sam, sam_client, alice):
    zed = remote(repo, "zed")
    repo.graph.follow(alice.id, zed.id)

    answer = sam_client.post(
        "/staff/domains/block/", {"domain": "https://Remote.Test/@zed", "reason": "  spam  "}
    )

    assert answer.status_code == 302 and answer["Location"] == "/staff/domains/"
    assert r.hkeys(keys.blocked_domains()) == [REMOTE]
    assert r.hget(keys.user(zed.id), "status") == "suspended"
    [entry] = audit(r, "block_domain")
    assert (entry["user_name"], entry["reason"]) == (REMOTE, "spam")
    [job] = queued(r, INBOX_READY)
    assert (job["kind"], job["payload"]) == ("domain_block", {"domain": REMOTE})
    work.run_pending("inbox")
    assert r.zcard(keys.following(alice.id)) == 0
    said = sam_client.get("/staff/domains/").content.decode()
    assert "remote.test is blocked: nothing goes to it or comes from it" in said


def test_blocking_a_server_again_logs_nothing_and_checks_its_accounts_again(
    repo, r, sam, sam_client
):
    repo.federation_domains.block(REMOTE, sam, "spam")
    zed = remote(repo, "zed")  # known since (fetched before a resolve could refuse it)

    answer = sam_client.post(
        "/staff/domains/block/", {"domain": REMOTE, "reason": "again"}, follow=True
    )

    assert "remote.test was blocked already" in answer.content.decode()
    assert len(audit(r, "block_domain")) == 1
    assert r.hget(keys.user(zed.id), "status") == "suspended"


@pytest.mark.parametrize(
    ("spelled", "domain"),
    [
        ("spam.example", "spam.example"),
        ("SPAM.example.", "spam.example"),
        ("*.spam.example", "spam.example"),
        ("@bob@spam.example", "spam.example"),
        ("https://spam.example:8443/users/bob", "spam.example:8443"),
        ("bücher.example", "xn--bcher-kva.example"),
    ],
)
def test_a_server_may_be_named_as_people_paste_it(r, sam_client, spelled, domain):
    answer = sam_client.post("/staff/domains/block/", {"domain": spelled, "reason": "spam"})

    assert answer.status_code == 302
    assert r.hkeys(keys.blocked_domains()) == [domain]


@pytest.mark.parametrize(
    ("domain", "reason", "said"),
    [
        ("", "spam", "Name the server to block."),
        ("²", "spam", "look-alike characters"),
        ("spam².example", "spam", "look-alike characters"),
        ("ｓｐａｍ.example", "spam", "look-alike characters"),
        ("spam.example:²", "spam", "look-alike characters"),
        ("spam.example:99999", "spam", "not a server"),
        ("-spam.example", "spam", "not a server"),
        ("spam example", "spam", "not a server"),
        ("https://", "spam", "not a server"),
        ("example", "spam", "not a top-level domain"),
        ("social.example", "spam", "That is this site."),
        ("x" * 301, "spam", "at most 300 characters"),
        ("a." * 150 + "example", "spam", "at most 300 characters"),
        ("spam.example", "", "Say why"),
        ("spam.example", "no", "at least 3 characters"),
        ("spam.example", "x" * 501, "at most 500 characters"),
    ],
)
def test_a_bad_block_is_refused_400_and_nothing_written(
    r, settings, sam_client, domain, reason, said
):
    settings.SITE_URL = "https://social.example"

    answer = sam_client.post("/staff/domains/block/", {"domain": domain, "reason": reason})

    assert answer.status_code == 400
    assert said in answer.content.decode()
    assert not r.exists(keys.blocked_domains(), INBOX_READY)
    assert audit(r, "block_domain") == []


def test_staff_unblock_a_server_from_the_page(repo, r, sam, sam_client):
    zed = remote(repo, "zed")
    repo.federation_domains.block(REMOTE, sam, "spam")

    answer = sam_client.post("/staff/domains/remote.test/unblock/", follow=True)

    assert answer.redirect_chain == [("/staff/domains/", 302)]
    assert "remote.test is unblocked" in answer.content.decode()
    assert not r.exists(keys.blocked_domains(), keys.blocked_domain_details())
    assert r.hget(keys.user(zed.id), "status") is None
    [entry] = audit(r, "unblock_domain")
    assert (entry["user_name"], entry["actor"]) == (REMOTE, str(sam.id))
    again = sam_client.post("/staff/domains/remote.test/unblock/", follow=True)
    assert "remote.test was not blocked." in again.content.decode()
    assert len(audit(r, "unblock_domain")) == 1


@pytest.mark.parametrize("domain", ["Remote.Test", "a%20b", "-x.test", "%C2%B2", "x" * 300])
def test_unblocking_a_name_not_in_its_one_spelling_is_not_found(repo, r, sam, sam_client, domain):
    repo.federation_domains.block(REMOTE, sam)

    assert sam_client.post(f"/staff/domains/{domain}/unblock/").status_code == 404
    assert r.hkeys(keys.blocked_domains()) == [REMOTE]


def test_only_staff_see_the_page_and_only_staff_block_or_unblock(
    repo, r, client, sam, alice_client
):
    repo.federation_domains.block(REMOTE, sam)
    form = {"domain": "spam.example", "reason": "spam"}

    assert client.get("/staff/domains/")["Location"].startswith("/login/?next=/staff/domains/")
    answer = client.post("/staff/domains/block/", form)
    assert answer.status_code == 302 and "next=/staff/domains/" in answer["Location"]
    assert client.post("/staff/domains/remote.test/unblock/").status_code == 302
    assert alice_client.get("/staff/domains/").status_code == 403
    assert alice_client.post("/staff/domains/block/", form).status_code == 403
    assert alice_client.post("/staff/domains/remote.test/unblock/").status_code == 403
    assert r.hkeys(keys.blocked_domains()) == [REMOTE]
    assert len(audit(r, "block_domain")) == 1 and audit(r, "unblock_domain") == []


def test_get_changes_nothing(repo, r, sam, sam_client):
    repo.federation_domains.block(REMOTE, sam)
    before = sorted(r.keys("*"))

    assert sam_client.get("/staff/domains/block/", {"domain": "spam.example"}).status_code == 405
    assert sam_client.get("/staff/domains/remote.test/unblock/").status_code == 405
    filled = sam_client.get("/staff/domains/", {"domain": "spam.example"})
    assert 'value="spam.example"' in filled.content.decode()

    assert sorted(r.keys("*")) == before
    assert r.hkeys(keys.blocked_domains()) == [REMOTE]


def test_a_block_without_the_csrf_token_is_refused(repo, r, sam):
    browser = login(Client(enforce_csrf_checks=True), repo, sam)

    answer = browser.post("/staff/domains/block/", {"domain": "spam.example", "reason": "spam"})

    assert answer.status_code == 403
    assert not r.exists(keys.blocked_domains())


def test_the_servers_page_costs_the_same_round_trips_with_5_servers_as_with_50(
    repo, r, sam, sam_client, round_trips
):
    def grow(upto: int) -> int:
        for i in range(r.zcard(keys.remote_domains()), upto):
            remote(repo, "zed", f"s{i:02d}.test")
            repo.federation_domains.block(f"b{i:02d}.test", sam, "spam")
            repo.federation_deliveries.failed(f"s{i:02d}.test")
        sam_client.get("/healthz")
        PROCESS_CACHE.clear()  # cold
        round_trips.reset()
        assert sam_client.get("/staff/domains/").status_code == 200
        return round_trips.count

    small, large = grow(5), grow(50)

    # The user (2), the open reports' count, the blocked list, known servers (2), failures
    # (2); on a cluster a pipeline over keys of several nodes counts once a node it reaches.
    assert small == large == (11 if CLUSTER else 8)
