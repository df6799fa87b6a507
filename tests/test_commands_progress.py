"""The progress lines export, import and seed share (social/management/progress.py)."""

from __future__ import annotations

import re
from io import StringIO

from django.core.management import call_command
from django.core.management.base import OutputWrapper
from django.core.management.color import color_style

from social import keys
from social.management.progress import Reporter


def reporter(verbosity: int = 1) -> tuple[Reporter, StringIO]:
    out = StringIO()
    return Reporter(OutputWrapper(out), verbosity), out


def test_a_line_each_time_every_more_items_are_done():
    report, out = reporter()
    progress = report.progress(lambda done: f"{done} done", every=10)

    for done in (3, 9, 10, 12, 19, 20, 35):
        progress(done)

    assert out.getvalue().splitlines() == ["10 done", "20 done", "35 done"]


def test_a_line_at_each_call_without_a_threshold_and_none_before_its_time():
    report, out = reporter()
    each, later = report.progress(str), report.progress(str, seconds=3600)

    for done in (1, 2, 3):
        each(done)
        later(done)

    assert out.getvalue().splitlines() == ["1", "2", "3"]


def test_verbosity_zero_says_nothing():
    report, out = reporter(verbosity=0)
    report.say("hello")
    report.progress(str)(5)
    assert out.getvalue() == ""


def test_a_line_on_stderr_is_not_coloured_as_an_error_and_a_style_applies():
    err = StringIO()
    wrapper = OutputWrapper(err)
    wrapper.style_func = color_style(force_color=True).ERROR  # as a command's stderr
    report = Reporter(wrapper, 1)

    report.say("plain")
    report.say("styled", lambda text: f"<{text}>")

    assert err.getvalue() == "plain\n<styled>\n"


def test_seed_at_verbosity_two_reports_every_step_of_a_stage(r):
    out = StringIO()
    call_command("seed", stdout=out, verbosity=2, users=40, follows=300, posts=400, seed=7)

    lines = out.getvalue().splitlines()
    assert [line for line in lines if re.fullmatch(r"  posts: [\d,]+/400", line)]
    assert "  posts: 400/400" in lines
    assert re.search(r"^  posts +400 in +[\d.]+s$", out.getvalue(), re.M)
    assert r.zcard(keys.users_by_time()) == 40
