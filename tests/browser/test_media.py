"""Pictures in posts in a real browser (issue 26): posting one with its description through
the composer (the site's worker processes it and writes the post: issue 33), the card's
grid (loaded, sized, described), a content warning opened by a click; and the pages with
pictures at a desktop's and a phone's width, light and dark, in English and Chinese, laid
out without overflow (screenshots kept in RETWIS_SCREENSHOTS when set, to look at)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from social import keys
from tests.test_images import picture


def test_posting_a_picture_with_its_description(page_as, person, live_url, r, tmp_path):
    ada = person("ada")
    photo = tmp_path / "harbour.jpg"
    photo.write_bytes(picture("JPEG", (1800, 1200), (40, 110, 170)))
    page = page_as(ada)
    page.goto(live_url + "/")
    page.locator("details.compose-extra > summary").click()
    page.fill("#id_status", "The harbour this morning")
    page.set_input_files("#id_picture_1", str(photo))
    page.fill("#id_alt_1", "Boats moored in a calm blue harbour")
    page.fill("#id_spoiler_text", "Harbour photos")
    with page.expect_navigation():
        page.click("form.compose button[type=submit]")
    told = "Your post will appear once its pictures are ready."
    assert told in page.locator("main").inner_text()
    deadline = time.monotonic() + 60  # the site's worker processes the picture, then posts
    while not (posted := r.lrange(keys.own_posts(ada.id), 0, -1)):
        assert time.monotonic() < deadline, "the post was not written in time"
        time.sleep(0.05)
    (post_id,) = posted
    page.reload()
    card = page.locator(f"#post-{post_id}")
    image = card.locator("img[alt='Boats moored in a calm blue harbour']")
    assert not image.is_visible()  # folded behind the warning
    card.locator("details.cw > summary").click()
    assert image.is_visible()
    assert image.get_attribute("loading") == "lazy"
    assert (image.get_attribute("width"), image.get_attribute("height")) == ("640", "427")
    image.scroll_into_view_if_needed()
    page.wait_for_function(
        "img => img.complete && img.naturalWidth === 640", arg=image.element_handle()
    )
    full = card.locator("a.media-item").get_attribute("href")
    assert full.endswith("-1600.webp")
    assert page.request.get(live_url + full).headers["content-type"] == "image/webp"
    token = full.rsplit("/", 1)[1].split("-")[0]
    assert r.hget(keys.image(token), "state") == "attached"
    assert r.hget(keys.image(token), "alt") == "Boats moored in a calm blue harbour"


def test_a_refused_picture_keeps_the_rest_of_the_form(page_as, person, live_url, r, tmp_path):
    ada = person("ada")
    fake = tmp_path / "fake.png"
    fake.write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'><script>1</script></svg>")
    page = page_as(ada)
    page.goto(live_url + "/")
    page.locator("details.compose-extra > summary").click()
    page.fill("#id_status", "Words to keep")
    page.set_input_files("#id_picture_1", str(fake))
    page.fill("#id_alt_1", "A description to keep")
    with page.expect_navigation():
        page.click("form.compose button[type=submit]")
    assert (
        "This is not a PNG, JPEG, WebP or GIF picture." in page.locator("form.compose").inner_text()
    )
    assert page.input_value("#id_status") == "Words to keep"
    assert page.input_value("#id_alt_1") == "A description to keep"
    assert r.llen(keys.own_posts(ada.id)) == 0 and not r.keys("image:*")


@pytest.mark.parametrize("locale", ["en-GB", "zh-Hans"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_pictures_fit_every_width_scheme_and_language(site_tour, width, scheme, locale):
    context = site_tour.browser.new_context(
        viewport={"width": width, "height": 900}, color_scheme=scheme, locale=locale
    )
    site_tour.contexts.append(context)
    secret = site_tour.repo.users.record_login(site_tour.ada.id, "127.0.0.1")
    context.add_cookies([{"name": "auth", "value": secret, "url": site_tour.live_url}])
    page = context.new_page()
    shots = os.environ.get("RETWIS_SCREENSHOTS")
    pages = (("home", "/"), ("timeline", "/timeline/"), ("permalink", f"/p/{site_tour.pictured}/"))
    for name, path in pages:
        page.goto(site_tour.live_url + path)
        if name == "timeline":
            page.locator(f"#post-{site_tour.warned} details.cw > summary").click()
        if name == "home":
            page.locator("details.compose-extra > summary").click()
        page.wait_for_load_state("networkidle")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, (name, width, overflow)
        if name != "home":
            box = page.locator(f"#post-{site_tour.pictured} .media-grid").bounding_box()
            assert box and box["width"] <= width and box["height"] > 50
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=f"{shots}/{name}-{width}-{scheme}-{locale}.png", full_page=False)
