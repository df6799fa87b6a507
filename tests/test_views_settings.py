"""The settings hub (issue 27): a Settings link in every reader's navigation, /settings/
listing every setting by group, the side list on each settings page, the language as a
setting; login required; nothing written by looking."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from social import keys
from tests.conftest import login, make_user

# Every settings page and the entry of the side list it marks as current.
SETTINGS_PAGES = {
    "/settings/profile/": "Edit profile",
    "/settings/email/": "E-mail",
    "/settings/password/": "Password",
    "/settings/delete/": "Delete account",
    "/settings/blocks/": "Blocked accounts",
    "/settings/mutes/": "Muted accounts",
    "/settings/filters/": "Word filters",
    "/settings/apps/": "Authorised apps",
    "/settings/language/": "Language",
}


def everything(r) -> dict:
    """Every key and its serialised value: what a page that only shows must not change."""
    return {key: r.dump(key) for key in r.scan_iter(count=1000)}


def header(html: str) -> str:
    return html.split("</header>")[0]


def main(html: str) -> str:
    return html.split("<main")[1].split("</main>")[0]


def side_list(html: str) -> str:
    found = re.search(r'<nav class="settings-nav"[^>]*>(.*?)</nav>', html, re.S)
    assert found, "no side list"
    return found.group(1)


@pytest.mark.parametrize("url", ["/settings/", "/settings/language/"])
def test_the_hub_and_the_language_page_need_a_login(client, r, url):
    response = client.get(url)

    assert response.status_code == 302 and response["Location"] == f"/login/?next={url}"
    assert r.dbsize() == 0


def test_every_page_of_a_reader_links_the_hub_from_the_navigation(alice_client, client, r):
    for path in ("/", "/timeline/", "/u/alice/", "/search/?q=x"):
        nav = header(alice_client.get(path).content.decode())
        assert '<a href="/settings/">Settings</a>' in nav, path
    assert 'href="/settings/"' not in client.get("/timeline/").content.decode()  # a visitor


def test_the_navigation_marks_settings_current_on_every_settings_page(alice_client):
    for path in ["/settings/", *SETTINGS_PAGES]:
        nav = header(alice_client.get(path).content.decode())
        assert '<a href="/settings/" aria-current="page">Settings</a>' in nav, path
    assert 'aria-current="page">Settings' not in alice_client.get("/").content.decode()


def test_the_hub_lists_every_setting_in_its_group(repo, r, alice, alice_client):
    before = everything(r)

    response = alice_client.get("/settings/")

    html = main(response.content.decode())
    assert response.status_code == 200
    titles = re.findall(r'<h2 id="settings-[a-z]+">([^<]+)</h2>', html)
    assert titles == ["Profile", "Account", "Privacy and safety", "Apps", "Language"]
    groups = dict(zip(titles, re.split(r'<h2 id="settings-[a-z]+">', html)[1:], strict=True))
    links = {t: re.findall(r'<a href="([^"]+)">', group) for t, group in groups.items()}
    assert links == {
        "Profile": ["/settings/profile/", "/u/alice/"],
        "Account": ["/settings/email/", "/settings/password/", "/settings/delete/"],
        "Privacy and safety": ["/settings/blocks/", "/settings/mutes/", "/settings/filters/"],
        "Apps": ["/settings/apps/"],
        "Language": ["/settings/language/"],
    }
    assert "English" in groups["Language"]  # the language in use, named
    assert everything(r) == before  # looking writes nothing


def test_a_name_no_url_can_hold_has_no_profile_entry_rather_than_a_dead_link(repo, r):
    legacy = r.incr(keys.next_user_id())  # the reference Retwis allowed a "/" in a name
    r.hset(keys.users(), "ab/cd", legacy)
    r.hset(keys.user(legacy), mapping={"username": "ab/cd", "password": "x"})
    client = login(Client(), repo, repo.users.get_user(legacy))

    html = main(client.get("/settings/").content.decode())

    assert 'href="/u/' not in html and 'href="/settings/profile/"' in html
    assert 'href="/settings/password/"' in html


@pytest.mark.parametrize("path", SETTINGS_PAGES)
def test_each_settings_page_has_the_side_list_with_its_own_entry_current(alice_client, r, path):
    before = everything(r)

    html = alice_client.get(path).content.decode()

    listed = side_list(html)
    current = re.findall(r'aria-current="page">([^<]+)</a>', listed)
    assert current == [SETTINGS_PAGES[path]]
    for other in SETTINGS_PAGES:
        assert f'href="{other}"' in listed
    assert 'href="/u/alice/"' in listed and 'href="/settings/"' in listed
    assert everything(r) == before


def test_the_home_sidebar_links_the_hub(alice_client):
    aside = alice_client.get("/").content.decode().split('<aside class="card stats">')[1]

    assert '<a href="/settings/">Settings</a>' in aside.split("</aside>")[0]


def test_the_language_page_switches_by_the_footers_post_and_cookie(alice_client, r):
    page = main(alice_client.get("/settings/language/").content.decode())
    form = re.search(r'<form method="post" action="/i18n/setlang/">(.*?)</form>', page, re.S)
    assert form, "the setting posts to Django's set_language"
    assert 'name="csrfmiddlewaretoken"' in form.group(1)
    assert '<input type="hidden" name="next" value="/settings/language/">' in form.group(1)
    assert re.search(r'value="en"[^>]* checked', form.group(1))
    before = everything(r)

    response = alice_client.post(
        "/i18n/setlang/", {"language": "zh-hans", "next": "/settings/language/"}
    )

    assert response.status_code == 302 and response["Location"] == "/settings/language/"
    assert response.cookies["django_language"].value == "zh-hans"
    chinese = alice_client.get("/settings/language/").content.decode()
    assert '<html lang="zh-hans">' in chinese
    assert re.search(r'value="zh-hans"[^>]* checked', main(chinese))
    assert everything(r) == before  # a cookie, nothing in Redis


def test_a_get_or_an_unknown_language_switches_nothing(alice_client):
    by_get = alice_client.get("/i18n/setlang/", {"language": "zh-hans", "next": "/settings/"})
    unknown = alice_client.post("/i18n/setlang/", {"language": "xx", "next": "/settings/"})

    assert "django_language" not in by_get.cookies and "django_language" not in unknown.cookies
    assert '<html lang="en">' in alice_client.get("/settings/language/").content.decode()


def test_an_off_site_next_is_not_followed(alice_client):
    response = alice_client.post(
        "/i18n/setlang/", {"language": "zh-hans", "next": "https://evil.example/"}
    )

    assert not response.get("Location", "").startswith("https://evil.example")


def test_a_new_account_sees_the_same_hub(repo):
    newcomer = make_user(repo, "newcomer")
    html = login(Client(), repo, newcomer).get("/settings/").content.decode()

    assert 'href="/u/newcomer/"' in html and 'href="/settings/filters/"' in html
