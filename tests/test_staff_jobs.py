"""/staff/jobs/ and the dashboard's queues: staff see each queue's state and its failed
jobs, and send one back to its queue or discard it (POST only, logged, once)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from social import keys, work
from tests import job_handlers  # noqa: F401  (registers the test_* handlers)


def job_entries(r) -> list[dict]:
    """The audit log's entries about jobs."""
    return [f for _, f in r.xrange(keys.audit_log()) if f["action"].endswith("_job")]


@pytest.fixture
def failed(repo, tmp_path):
    """One failed mail job (a dead letter) and one waiting; returns the failed job's id."""
    work.enqueue("mail", "test_permanent", {"log": str(tmp_path / "log")})
    work.run_pending("mail")
    work.enqueue("mail", "test_record", {"log": str(tmp_path / "log")})
    [letter] = repo.jobs.dead_letters("mail")
    return letter.id


def test_the_dashboard_shows_each_queue(sam_client, failed):
    page = sam_client.get("/staff/").content.decode()

    assert "Background jobs" in page
    row = page[page.index('href="/staff/jobs/#queue-mail"') :].split("</tr>")[0]
    cells = [c.split("</td>")[0] for c in row.split('<td class="num">')[1:]]
    assert cells[0] == "1"  # waiting
    assert cells[3] == '<span class="badge">1</span>'  # failed


def test_the_jobs_page_lists_failed_jobs_with_their_error(sam_client, failed):
    response = sam_client.get("/staff/jobs/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "test_permanent" in page and failed in page
    assert "Permanent: the address does not exist" in page
    assert f'action="/staff/jobs/mail/{failed}/retry/"' in page
    assert f'action="/staff/jobs/mail/{failed}/discard/"' in page


def test_staff_send_a_failed_job_back_once_and_it_is_logged(sam_client, sam, r, failed):
    response = sam_client.post(f"/staff/jobs/mail/{failed}/retry/", follow=True)

    assert response.redirect_chain == [("/staff/jobs/", 302)]
    assert "The job is back in its queue." in response.content.decode()
    assert r.llen(keys.job_dead("mail")) == 0
    queued = [json.loads(f["job"]) for _, f in r.xrange(keys.job_stream("mail"))]
    assert [(j["id"], j["attempt"]) for j in queued if j["kind"] == "test_permanent"] == [
        (failed, 0)
    ]
    [entry] = job_entries(r)
    assert entry["action"] == "retry_job" and entry["actor"] == str(sam.id)
    assert entry["reason"].startswith(f"mail/test_permanent {failed}: Permanent:")

    again = sam_client.post(f"/staff/jobs/mail/{failed}/retry/", follow=True)
    assert "no longer among the failed ones" in again.content.decode()
    assert len(job_entries(r)) == 1
    assert r.xlen(keys.job_stream("mail")) == 2


def test_staff_discard_a_failed_job(sam_client, r, failed):
    sam_client.post(f"/staff/jobs/mail/{failed}/discard/")

    assert r.llen(keys.job_dead("mail")) == 0
    [entry] = job_entries(r)
    assert entry["action"] == "discard_job"
    assert r.xlen(keys.job_stream("mail")) == 1  # the waiting job only


def test_only_staff_see_or_touch_jobs(alice_client, failed, r):
    assert alice_client.get("/staff/jobs/").status_code == 403
    assert alice_client.post(f"/staff/jobs/mail/{failed}/retry/").status_code == 403
    visitor = Client().get("/staff/jobs/")
    assert visitor.status_code == 302 and visitor["Location"].startswith("/login/")
    assert r.llen(keys.job_dead("mail")) == 1


@pytest.mark.parametrize(
    "path", ["/staff/jobs/nosuch/0123456789abcdef/retry/", "/staff/jobs/mail/XYZ/retry/",
             "/staff/jobs/Mail/0123456789abcdef/discard/"],
)  # fmt: skip
def test_an_unknown_queue_or_a_malformed_id_is_a_404(sam_client, path, failed, r):
    assert sam_client.post(path).status_code == 404
    assert r.llen(keys.job_dead("mail")) == 1


def test_a_get_never_acts(sam_client, failed, r):
    assert sam_client.get(f"/staff/jobs/mail/{failed}/retry/").status_code == 405
    assert r.llen(keys.job_dead("mail")) == 1
