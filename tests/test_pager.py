"""The one pager: links keep the list's filters and point at the list's own URL."""

import re


def test_the_staff_user_list_keeps_its_filter_on_the_next_page(repo, sam_client):
    for i in range(55):
        repo.users.create_user(f"ann{i:02d}", "x")
    html = sam_client.get("/staff/users/?q=ann").content.decode()
    assert 'href="/staff/users/?q=ann&amp;page=2"' in html


def test_a_rejected_post_re_shows_the_home_pager_pointing_at_home_not_at_post(
    alice_client, repo, alice
):
    for i in range(12):
        repo.posts.create_post(alice.id, f"post {i}")
    response = alice_client.post("/post/", {"status": "   "})
    assert response.status_code == 400
    html = response.content.decode()
    assert 'href="/?page=2"' in html
    assert "/post/?page=" not in html


def test_following_older_links_walks_a_list_to_its_end_and_never_past_it(
    settings, repo, alice, alice_client
):
    settings.RETWIS_FEED_PAGE_SIZE = 3
    for i in range(7):
        repo.posts.create_post(alice.id, f"walk {i}", at=1_700_000_000 + i)
    url, seen = "/u/alice/", []
    while url:
        response = alice_client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        seen.append(url)
        older = re.search(r'<a href="([^"]+)" rel="next">', html)
        url = older.group(1).replace("&amp;", "&") if older else None

    assert seen == ["/u/alice/", "/u/alice/?page=2", "/u/alice/?page=3"]
    assert "Page 3 of 3" in html
    assert alice_client.get("/u/alice/?page=4").status_code == 404


def test_the_remembered_pager_speaks_each_readers_language_and_keeps_the_query(
    repo, alice, alice_client
):
    for i in range(12):
        repo.posts.create_post(alice.id, f"post {i}")
    english = alice_client.get("/u/alice/?page=2&x=1").content.decode()
    chinese = alice_client.get(
        "/u/alice/?page=2&x=1", HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).content.decode()

    assert "Page 2 of 2" in english and "第 2 页，共 2 页" not in english
    assert "第 2 页，共 2 页" in chinese and "Page 2 of 2" not in chinese
    for html in (english, chinese):
        assert 'href="/u/alice/?page=1&amp;x=1" rel="prev"' in html
