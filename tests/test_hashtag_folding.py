"""Tags whose case-folded form is not itself a tag ("İstanbul", "Straße" at 50 letters).

Case-folding can add a combining mark ("İ" -> "i" + U+0307) or make a tag longer ("ß" ->
"ss"); either made the tag's key name refused, so posting "#İstanbul" answered 500.
"""

from __future__ import annotations

from social import keys
from social.text import hashtags, normal_tag


def test_folding_keeps_only_what_a_tag_may_hold():
    assert normal_tag("İstanbul") == "istanbul"
    assert normal_tag("Straße") == "strasse"
    assert normal_tag("ß" * 50) == "s" * 50
    assert normal_tag("Redis") == normal_tag("REDIS") == "redis"
    assert normal_tag("日本") == "日本"
    assert normal_tag("ＲＥＤＩＳ") == "redis"  # full-width letters: NFKC


def test_every_folded_tag_is_a_valid_key_name():
    for tag in hashtags("#İstanbul #Straße #" + "ß" * 50 + " #Ǆemal #ﬁle"):
        assert keys.tag_posts(tag).startswith("tag:")  # raises ValueError for a bad tag


def test_posting_a_tag_that_folds_into_another_form_works(repo, r, alice, alice_client):
    response = alice_client.post("/post/", {"status": "Hello #İstanbul"})

    assert response.status_code == 302
    post_id = int(r.lindex(keys.timeline(), 0))
    assert r.lrange("tag:istanbul", 0, -1) == [str(post_id)]
    assert r.hget(keys.post(post_id), "tags") == "istanbul"

    page = alice_client.get("/tag/%C4%B0stanbul/")  # /tag/İstanbul/
    html = page.content.decode()
    assert page.status_code == 200 and "Hello" in html
    assert (
        '<a class="tag" href="/tag/istanbul/">#İstanbul</a>'
        in alice_client.get("/timeline/").content.decode()
    )
