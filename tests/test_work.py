"""The worker tier (social/work/, repository/work/jobs.py) on the suite's real Redis (and the
cluster in CI): jobs run once each, failures come back on the queue's schedule and end as
dead letters staff can send back, destinations back off and are limited, a queue is
bounded, and a worker killed in the middle of a job loses nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from social import keys, work
from social.repository.work.jobs import GROUP, Job, QueueFull, now_ms
from social.work.runner import consumer_name, run_job
from tests import job_handlers  # noqa: F401  (registers the test_* handlers)

ROOT = Path(__file__).resolve().parent.parent
DEADLINE = 60  # seconds a subprocess may take to do what a test waits for


def lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def dead(r, queue: str = "mail") -> list[dict]:
    return [json.loads(item) for item in r.lrange(keys.job_dead(queue), 0, -1)]


def delayed(r, queue: str = "mail") -> list[tuple[dict, float]]:
    got = r.zrange(keys.job_delayed(queue), 0, -1, withscores=True)
    return [(json.loads(member), score) for member, score in got]


@pytest.fixture
def log(tmp_path) -> Path:
    return tmp_path / "runs"


def test_a_job_runs_once_and_leaves_nothing_but_its_count(repo, r, log):
    job_id = work.enqueue("mail", "test_record", {"log": str(log)})

    assert r.xlen(keys.job_stream("mail")) == 1
    entry = r.xrange(keys.job_stream("mail"))[0][1]
    assert json.loads(entry["job"])["id"] == job_id
    assert json.loads(entry["job"])["payload"] == {"log": str(log)}

    assert work.run_pending("mail") == 1
    assert work.run_pending("mail") == 0

    assert lines(log) == ["ran"]
    assert r.xlen(keys.job_stream("mail")) == 0
    assert r.xpending(keys.job_stream("mail"), GROUP)["pending"] == 0
    assert r.hgetall(keys.job_totals("mail")) == {"done": "1"}
    assert r.zcard(keys.job_delayed("mail")) == 0


def test_a_failing_job_comes_back_on_the_schedule_then_becomes_a_dead_letter(repo, r, log):
    work.enqueue("mail", "test_fail", {"log": str(log)})
    attempts = work.QUEUES["mail"].attempts
    before = now_ms()

    work.run_pending("mail")

    [(job, due)] = delayed(r)
    assert job["attempt"] == 1 and job["error"] == "Retry: the server said 503"
    first_wait = work.QUEUES["mail"].backoff(0)
    assert before + 30_000 <= due <= now_ms() + first_wait + first_wait // 10
    assert work.run_pending("mail") == 0  # not due yet
    for _ in range(attempts - 1):
        work.run_pending("mail", now=int(due) + 1)
        if r.zcard(keys.job_delayed("mail")):
            [(_, due)] = delayed(r)

    assert lines(log) == ["failed"] * attempts
    [letter] = dead(r)
    assert letter["attempt"] == attempts - 1 and letter["kind"] == "test_fail"
    assert letter["error"] == "Retry: the server said 503" and letter["died"] > 0
    assert r.zcard(keys.job_delayed("mail")) == 0 and r.xlen(keys.job_stream("mail")) == 0
    assert r.hgetall(keys.job_totals("mail")) == {"retried": str(attempts - 1), "dead": "1"}


def test_a_permanent_failure_and_an_unknown_kind_are_dead_letters_at_once(repo, r, log):
    work.enqueue("mail", "test_permanent", {"log": str(log)})
    work.enqueue("mail", "no_such_kind", {"log": str(log)})

    work.run_pending("mail")

    assert lines(log) == ["refused"]
    errors = sorted(letter["error"] for letter in dead(r))
    assert errors == [
        "Permanent: the address does not exist",
        "no handler for mail/no_such_kind",
    ]
    assert r.zcard(keys.job_delayed("mail")) == 0


def test_a_bug_in_a_handler_is_retried_like_a_failure(repo, r, log):
    work.enqueue("mail", "test_crash", {"log": str(log)})

    work.run_pending("mail")

    [(job, _)] = delayed(r)
    assert job["error"] == "RuntimeError: a bug" and job["attempt"] == 1


def test_staff_send_a_dead_letter_back_once(repo, r, log):
    work.enqueue("mail", "test_permanent", {"log": str(log)})
    work.run_pending("mail")
    [letter] = repo.jobs.dead_letters("mail")

    assert repo.jobs.retry_dead("mail", letter.id) is True
    assert repo.jobs.retry_dead("mail", letter.id) is False  # a second click: gone already

    assert r.llen(keys.job_dead("mail")) == 0
    [(_, fields)] = r.xrange(keys.job_stream("mail"))
    again = json.loads(fields["job"])
    assert again["id"] == letter.id and again["attempt"] == 0 and again["error"] == ""
    work.run_pending("mail")
    assert lines(log) == ["refused", "refused"]
    assert repo.jobs.discard_dead("mail", letter.id) is True
    assert repo.jobs.discard_dead("mail", letter.id) is False
    assert r.llen(keys.job_dead("mail")) == 0


def test_a_full_queue_refuses_and_writes_nothing(repo, r, log):
    repo.jobs.enqueue("mail", "test_record", {"log": str(log)}, limit=2)
    repo.jobs.enqueue("mail", "test_record", {"log": str(log)}, limit=2, delay_ms=60_000)

    with pytest.raises(QueueFull):
        repo.jobs.enqueue("mail", "test_record", {"log": str(log)}, limit=2)

    assert r.xlen(keys.job_stream("mail")) == 1
    assert r.zcard(keys.job_delayed("mail")) == 1


def test_a_failing_destination_backs_off_and_any_success_ends_it(repo, r, log):
    work.enqueue("mail", "test_fail", {"log": str(log)}, destination="down.example")
    work.run_pending("mail")
    backoff = r.hgetall(keys.job_destination("mail", "down.example"))
    assert backoff["failures"] == "1"
    until = int(backoff["until"])
    assert until > now_ms()
    assert r.zscore(keys.job_destinations("mail"), "down.example") == until
    [(failed, _)] = delayed(r)
    r.zrem(keys.job_delayed("mail"), json.dumps(failed, separators=(",", ":"), sort_keys=True))

    # Another job for the same destination waits for the backoff without using an attempt.
    other = log.with_name("other")
    work.enqueue("mail", "test_record", {"log": str(other)}, destination="down.example")
    work.run_pending("mail")
    assert lines(other) == []
    waiting = [job for job, due in delayed(r) if job["kind"] == "test_record"]
    assert [(job["attempt"], job["error"]) for job in waiting] == [(0, "")]
    assert max(due for job, due in delayed(r) if job["kind"] == "test_record") == until

    work.run_pending("mail", now=until + 1)
    assert lines(other) == ["ran"]
    assert r.exists(keys.job_destination("mail", "down.example")) == 0
    assert r.zscore(keys.job_destinations("mail"), "down.example") is None


def test_a_destination_runs_at_most_its_limit_of_jobs_at_once(repo, r, log):
    shape = work.QUEUES["mail"]
    for token in range(shape.per_destination):
        assert repo.jobs.lease("mail", "busy.example", f"t{token}", most=shape.per_destination,
                               lease_ms=60_000)  # fmt: skip
    work.enqueue("mail", "test_record", {"log": str(log)}, destination="busy.example")

    work.run_pending("mail")

    assert lines(log) == []
    [(job, due)] = delayed(r)
    assert job["attempt"] == 0 and due > now_ms()
    repo.jobs.release("mail", "busy.example", "t0")
    work.run_pending("mail", now=int(due) + 1)
    assert lines(log) == ["ran"]
    assert r.zcard(keys.job_leases("mail", "busy.example")) == shape.per_destination - 1


def test_a_job_whose_worker_went_silent_is_taken_over(repo, r, log):
    work.enqueue("mail", "test_record", {"log": str(log)})
    repo.jobs.ensure_group("mail")
    taken = repo.jobs.take("mail", "a-worker-that-dies")
    assert taken is not None and lines(log) == []

    assert work.run_pending("mail") == 0  # its lease has not run out
    assert work.run_pending("mail", reclaim_idle_ms=0) == 1

    assert lines(log) == ["ran"]
    assert r.xlen(keys.job_stream("mail")) == 0
    assert r.xpending(keys.job_stream("mail"), GROUP)["pending"] == 0


def test_a_job_that_keeps_killing_its_worker_becomes_a_dead_letter(repo, r, log):
    work.enqueue("mail", "test_record", {"log": str(log)})
    repo.jobs.ensure_group("mail")
    for number in range(work.QUEUES["mail"].attempts + 1):
        [job] = repo.jobs.reclaim("mail", f"dying-{number}", idle_ms=0) or [
            repo.jobs.take("mail", f"dying-{number}")
        ]
    assert job.delivered == work.QUEUES["mail"].attempts + 1

    assert run_job(repo.jobs, job, consumer_name("mail", 0)) == "dead"

    assert lines(log) == []
    [letter] = dead(r)
    assert "its worker stopped" in letter["error"]
    assert r.xlen(keys.job_stream("mail")) == 0


def test_a_running_job_keeps_its_claim(repo, r, log):
    def idle_ms() -> int:
        [pending] = r.xpending_range(keys.job_stream("mail"), GROUP, "-", "+", 1)
        assert pending["consumer"] == "alive"
        return int(pending["time_since_delivered"])

    work.enqueue("mail", "test_record", {"log": str(log)})
    repo.jobs.ensure_group("mail")
    job = repo.jobs.take("mail", "alive")
    assert job is not None
    time.sleep(1.5)  # let idle time build up (a floor, not a wait for something)
    before = idle_ms()
    repo.jobs.touch(job, "alive")

    assert before >= 1500 and idle_ms() < before  # renewed: idle counts from the touch
    assert repo.jobs.reclaim("mail", "thief", idle_ms=before) == []
    assert idle_ms() < before  # still the living worker's


def test_the_worker_command_runs_jobs_in_threads_and_stops_cleanly(repo, r, log):
    worker = work.Worker({"mail": 2}, block_ms=100)
    worker.start()
    try:
        for _ in range(5):
            work.enqueue("mail", "test_record", {"log": str(log)})
        deadline = time.monotonic() + DEADLINE
        while len(lines(log)) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        worker.stop()
        worker.join(DEADLINE)

    assert not worker.alive()
    assert lines(log) == ["ran"] * 5
    assert worker.counts == {"done": 5}
    assert r.xlen(keys.job_stream("mail")) == 0


def test_work_once_runs_what_is_due(repo, r, log, capsys):
    work.enqueue("mail", "test_record", {"log": str(log)})

    call_command("work", queues="mail", once=True)

    assert "Ran 1 jobs." in capsys.readouterr().out
    assert lines(log) == ["ran"]


def test_a_worker_killed_in_the_middle_of_a_job_loses_it_not(repo, r, log, redis_url):
    """A real `manage.py work` process is killed (SIGKILL) while its job runs; the job runs
    again from the start in another worker, and its effect happens once."""
    work.enqueue("mail", "test_slow", {"log": str(log)})
    # The site's own settings, as `manage.py work` runs (tests.settings points elsewhere).
    env = {**os.environ, "REDIS_URL": redis_url, "DEBUG": "true",
           "DJANGO_SETTINGS_MODULE": "retwis_site.settings"}  # fmt: skip
    if os.environ.get("RETWIS_TEST_CLUSTER") == "1":
        env["REDIS_CLUSTER"] = "true"
    script = (
        "import django; django.setup(); import tests.job_handlers; "
        "from django.core.management import call_command; "
        "call_command('work', queues='mail', verbosity=0)"
    )
    child = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + DEADLINE
        while lines(log) != ["started"] and time.monotonic() < deadline:
            assert child.poll() is None, "the worker exited"
            time.sleep(0.05)
        assert lines(log) == ["started"]
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(DEADLINE)
    assert r.xpending(keys.job_stream("mail"), GROUP)["pending"] == 1  # still its, unacked
    Path(str(log) + ".quick").touch()

    assert work.run_pending("mail", reclaim_idle_ms=0) == 1

    assert lines(log) == ["started", "started", "ran"]
    assert Path(str(log) + ".effect").exists()
    assert r.xlen(keys.job_stream("mail")) == 0
    assert r.xpending(keys.job_stream("mail"), GROUP)["pending"] == 0
    assert r.hgetall(keys.job_totals("mail")) == {"done": "1"}


def test_queue_stats_show_depth_oldest_and_failures(repo, r, log):
    first = now_ms()
    work.enqueue("mail", "test_record", {"log": str(log)})
    work.enqueue("mail", "test_permanent", {"log": str(log)})
    work.enqueue("mail", "test_fail", {"log": str(log)}, destination="down.example")
    repo.jobs.ensure_group("mail")
    taken = [repo.jobs.take("mail", "c") for _ in range(3)]
    by_kind = {job.kind: job for job in taken if job}
    run_job(repo.jobs, by_kind["test_permanent"], "c")
    run_job(repo.jobs, by_kind["test_fail"], "c")

    [stats] = repo.jobs.stats(["mail"])

    assert stats.ready == 1 and stats.running == 1  # test_record: taken, not yet done
    assert stats.delayed == 1 and stats.dead == 1
    assert stats.oldest_ms is not None and first <= stats.oldest_ms <= now_ms()
    assert (stats.retried, stats.died, stats.done) == (1, 1, 0)
    assert [d for d, _ in stats.backoff] == ["down.example"]
    assert isinstance(repo.jobs.dead_letters("mail")[0], Job)


def test_a_dead_letter_tells_whoever_waits_once(repo, r, log):
    work.enqueue("mail", "test_told", {"log": str(log)})

    work.run_pending("mail")

    assert lines(log) == ["refused", "told:Permanent:_no_such_address"]
    assert len(dead(r)) == 1
    [letter] = repo.jobs.dead_letters("mail")
    repo.jobs.retry_dead("mail", letter.id)
    work.run_pending("mail")
    assert lines(log)[-2:] == ["refused", "told:Permanent:_no_such_address"]


def test_an_idle_worker_on_an_empty_database_writes_nothing_and_does_not_spin(repo, r):
    def commands() -> int:
        if hasattr(r, "get_primaries"):  # a cluster: every primary's
            return sum(n.redis_connection.info("stats")["total_commands_processed"]
                       for n in r.get_primaries())  # fmt: skip
        return int(r.info("stats")["total_commands_processed"])

    before = commands()
    worker = work.Worker({"mail": 1, "media": 1}, block_ms=200)
    worker.start()
    try:
        time.sleep(2)  # what must not happen takes a while to not happen
    finally:
        worker.stop()
        worker.join(DEADLINE)

    assert r.dbsize() == 0
    # Two threads for 2 s, a take (and, for the first, a promote) every 200 ms at most.
    assert commands() - before < 150
