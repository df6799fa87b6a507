"""Every query parameter of the staff pages is validated: junk gets a 400 or is ignored
sensibly, never a 500, and reading a page with junk in it writes nothing to Redis."""

from __future__ import annotations

import pytest

JUNK = [
    "0-0",
    "00-000",
    "-1",
    "0",
    "1e3",
    "nan",
    "١٢-٣",  # digits of another script: Python's int() and \d take them, Redis does not
    "١٢",
    "²",  # str.isdigit() takes it, int() does not
    "1_0",  # int() takes it
    "9" * 19,  # above Redis's integer range
    "18446744073709551616-0",
    "9" * 30,
    "9" * 5000,
    "a\x00b",
    "%00",
    "' OR 1=1 --",
    "<script>x</script>",
    "[alice",
    "(1-0",
    "+",
    "-",
    "*",
    " ",
    "ä" * 300,
]

# Every staff page that reads the query string, and the parameters it reads.
PAGES = {
    "/staff/users/": ["q", "status", "page"],
    "/staff/posts/": ["page"],
    "/staff/posts/delete/": ["id", "next"],
    "/staff/reports/": ["page"],
    "/staff/reports/resolved/": ["page"],
    "/staff/log/": ["actor", "action", "target", "before", "page"],
    "/staff/users/alice/": ["page"],
    "/staff/": ["page"],
}


@pytest.fixture
def staff_data(repo, sam, alice, bob):
    """A little of everything the staff pages list: posts, a report, log entries."""
    post_id = repo.posts.create_post(alice.id, "hello")
    repo.reports.report_post(bob, post_id, "spam")
    repo.moderation.add_note(alice.id, sam, "first note")
    repo.moderation.add_note(bob.id, sam, "second note")
    return post_id


def snapshot(r) -> dict:
    """Every key and its serialized value: what a read-only page must leave untouched.

    HyperLogLogs are compared by count: the dashboard's PFCOUNT caches its estimate inside
    the value, which changes the bytes and nothing else.
    """
    return {
        key: r.pfcount(key) if key.startswith("stats:active:") else r.dump(key)
        for key in r.scan_iter()
    }


def answer(url: str, param: str, value: str) -> int:
    """What a staff page answers to junk in param: the delete page, without a valid list
    of ids (none is: `next` is not one), goes back to the posts with the form's message;
    the log refuses a cursor it cannot read (blank is none); the rest reads past it."""
    if url == "/staff/posts/delete/":
        return 302
    if (url, param) == ("/staff/log/", "before") and value.strip():
        return 400
    return 200


@pytest.mark.parametrize("value", JUNK)
@pytest.mark.parametrize(
    ("url", "param"), [(url, param) for url, params in PAGES.items() for param in params]
)
def test_no_junk_in_a_staff_query_parameter_gives_a_500(
    sam_client, staff_data, r, url, param, value
):
    before = snapshot(r)

    response = sam_client.get(url, {param: value})

    assert response.status_code == answer(url, param, value), response.content[:500]
    assert b"<script>x</script>" not in response.content
    assert snapshot(r) == before


@pytest.mark.parametrize("value", ["0-0", "00-000", "١٢-٣", "x-1", "1-", "1234567890123456-0"])
def test_a_bad_log_cursor_is_a_400_that_says_so(sam_client, staff_data, r, value):
    entries = r.xlen("audit")

    response = sam_client.get("/staff/log/", {"before": value})

    assert response.status_code == 400
    assert b"That is not a position in the log." in response.content
    assert b'class="brand"' in response.content  # in the site's look
    assert r.xlen("audit") == entries


def test_a_good_log_cursor_pages_older_entries(repo, sam_client, staff_data, r):
    newest, older = (entry_id for entry_id, _ in r.xrevrange("audit", count=2))

    response = sam_client.get("/staff/log/", {"before": newest})

    assert response.status_code == 200
    html = response.content.decode()
    assert "first note" in html and "second note" not in html
    assert r.xrevrange("audit", max=f"({newest}", count=1)[0][0] == older


def test_the_cursor_just_above_the_first_possible_id_is_accepted(sam_client, staff_data):
    response = sam_client.get("/staff/log/", {"before": "0-1"})

    assert response.status_code == 200
    assert "No entries match." in response.content.decode()


@pytest.mark.parametrize("value", ["-1", "1e3", "9" * 5000, "x"])
def test_a_bad_post_id_for_bulk_delete_goes_back_with_a_message(sam_client, staff_data, value):
    response = sam_client.get("/staff/posts/delete/", {"id": value}, follow=True)

    assert response.redirect_chain == [("/staff/posts/", 302)]
    assert b"Post ids are" in response.content


def test_an_unknown_user_status_filter_says_so(sam_client, staff_data):
    response = sam_client.get("/staff/users/", {"status": "explode"})

    assert response.status_code == 200
    assert b'class="error"' in response.content
