"""The one pager: links keep the list's filters and point at the list's own URL."""


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
