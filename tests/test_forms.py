"""Forms: each bad input gets a clear message on the right field; good input is normalised."""

from __future__ import annotations

import pytest

from social.account_forms import LoginForm, RegisterForm
from social.post_forms import PostForm
from tests.conftest import PASSWORD

GOOD_PASSWORD = "correct horse battery"


def register(**fields) -> RegisterForm:
    data = {"username": "alice", "password": GOOD_PASSWORD, "password2": GOOD_PASSWORD}
    return RegisterForm(data={**data, **fields})


def test_it_accepts_a_good_sign_up_and_trims_the_username():
    form = register(username="  Alice_99  ")

    assert form.is_valid(), form.errors
    assert form.cleaned_data["username"] == "Alice_99"


@pytest.mark.parametrize(
    ("username", "message"),
    [
        ("ab", "at least 3 characters"),
        ("a" * 21, "at most 20 characters"),
        ("al ice", "letters, digits and underscores"),
        ("al-ice", "letters, digits and underscores"),
        ("<script>", "letters, digits and underscores"),
        ("ålice", "letters, digits and underscores"),
        ("", "required"),
    ],
)
def test_it_refuses_a_bad_username(username, message):
    form = register(username=username)

    assert not form.is_valid()
    assert list(form.errors) == ["username"]
    assert message in " ".join(form.errors["username"])


@pytest.mark.parametrize("username", ["abc", "a" * 20, "under_score", "ALL_CAPS_123"])
def test_it_accepts_usernames_at_the_limits(username):
    assert register(username=username).is_valid()


def test_it_refuses_passwords_that_do_not_match():
    form = register(password2=GOOD_PASSWORD + "!")

    assert not form.is_valid()
    assert form.errors["password2"] == ["The two passwords do not match."]
    assert "password" not in form.errors


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("sh0rt!", "too short"),
        ("password123", "too common"),
        ("8675309123", "entirely numeric"),
        ("alice_wonderland", "too similar to the username"),
    ],
)
def test_it_refuses_a_weak_password(password, message):
    form = register(username="alice_wonderland", password=password, password2=password)

    assert not form.is_valid()
    assert list(form.errors) == ["password"]
    assert message in " ".join(form.errors["password"])


def test_it_requires_the_repeated_password():
    form = register(password2="")

    assert not form.is_valid()
    assert "password2" in form.errors


def test_it_keeps_spaces_in_passwords():
    form = register(password=" " + GOOD_PASSWORD + " ", password2=" " + GOOD_PASSWORD + " ")

    assert form.is_valid()
    assert form.cleaned_data["password"] == " " + GOOD_PASSWORD + " "


def test_it_requires_both_login_fields():
    form = LoginForm(data={"username": "", "password": ""})

    assert not form.is_valid()
    assert set(form.errors) == {"username", "password"}


def post(status: str) -> PostForm:
    return PostForm(data={"status": status})


@pytest.mark.parametrize("status", ["", "   ", "\n\n", " \r\n\t "])
def test_it_refuses_an_empty_post(status):
    form = post(status)

    assert not form.is_valid()
    assert form.errors["status"] == ["Write something first."]


def test_it_refuses_281_characters_after_trimming():
    form = post("  " + "x" * 281 + "  ")

    assert not form.is_valid()
    assert "Keep it to 280 characters" in form.errors["status"][0]


def test_it_accepts_280_characters_after_trimming():
    form = post("\n  " + "x" * 280 + "  \n")

    assert form.is_valid()
    assert form.cleaned_data["status"] == "x" * 280


def test_it_refuses_a_huge_paste_before_normalising_it():
    form = post("x" * 2001)

    assert not form.is_valid()
    assert "Keep it to 280 characters" in form.errors["status"][0]


def test_it_turns_newlines_into_spaces():
    form = post("line one\nline two\r\nline three\n\nend")

    assert form.is_valid()
    assert form.cleaned_data["status"] == "line one line two line three end"


def test_it_keeps_markup_as_plain_text_for_the_template_to_escape():
    form = post("<script>alert(1)</script>")

    assert form.is_valid()
    assert form.cleaned_data["status"] == "<script>alert(1)</script>"


def test_it_tells_the_browser_the_280_character_limit_without_cutting_a_paste():
    html = str(PostForm()["status"])

    assert 'data-maxchars="280"' in html  # what the page's counter counts down from
    assert "maxlength" not in html  # a browser would silently cut a longer paste


def login_form(repo, username: str, password: str) -> LoginForm:
    return LoginForm(data={"username": username, "password": password}, repo=repo, ip="192.0.2.7")


def test_the_login_form_authenticates_and_gives_the_user(repo, alice):
    form = login_form(repo, "ALICE", PASSWORD)

    assert form.is_valid()
    assert form.get_user().id == alice.id


def test_a_wrong_password_counts_against_the_ip_and_the_name_from_that_ip(repo, alice, r):
    form = login_form(repo, "alice", "not it")

    assert not form.is_valid()
    assert form.non_field_errors() == [LoginForm.INVALID] and form.get_user() is None
    assert r.get("ratelimit:login_ip:192.0.2.7") == "1"
    assert r.get("ratelimit:login_user_ip:192.0.2.7|alice") == "1"
    assert sorted(r.scan_iter(match="ratelimit:login_user:*")) == []  # never the name alone


def test_a_throttled_login_says_so_without_checking_the_password(repo, alice, r):
    r.set("ratelimit:login_user_ip:192.0.2.7|alice", 10, ex=60)

    form = login_form(repo, "alice", PASSWORD)

    assert not form.is_valid() and form.is_throttled()
    assert form.get_user() is None and 0 < form.retry_after <= 60
    assert r.get("ratelimit:login_ip:192.0.2.7") == "0"  # a refused attempt is given back
    assert r.get("ratelimit:login_user_ip:192.0.2.7|alice") == "10"


def test_a_good_login_forgets_the_names_failed_attempts(repo, alice, r):
    r.set("ratelimit:login_user_ip:192.0.2.7|alice", 3, ex=60)
    r.set("ratelimit:login_ip:192.0.2.7", 5, ex=60)

    assert login_form(repo, "alice", PASSWORD).is_valid()
    assert not r.exists("ratelimit:login_user_ip:192.0.2.7|alice")
    assert r.get("ratelimit:login_ip:192.0.2.7") == "5"  # a success is not a failure
