"""A profile's head on a phone (issue 37): the avatar and the actions share the first row,
the name and the bio have the card's whole width below them (they were squeezed into
half of it beside the avatar)."""

from __future__ import annotations

import pytest

PHONE = 390


# --- The profile head on a phone ----------------------------------------------------------


@pytest.mark.parametrize("who", ["other", "self"])
def test_on_a_phone_the_name_and_bio_have_the_cards_whole_width(
    page_as, person, repo, live_url, who
):
    reader, dee = person("cy"), person("dee")
    repo.profiles.update(
        dee.id, display_name="Dee Longname-Smithson",
        note="Writes about sorted sets, streams and the quiet joys of HyperLogLog.",
    )  # fmt: skip
    page = page_as(dee if who == "self" else reader, PHONE)
    page.goto(live_url + "/u/dee/")

    card = page.locator(".profile-head").bounding_box()
    for part in (".profile-head h1", ".profile-head .bio"):
        box = page.locator(part).bounding_box()
        assert box["width"] > 0.8 * (card["width"] - 40), (part, box, card)
    actions = page.locator(".profile-actions").bounding_box()
    avatar = page.locator(".profile-head .avatar").bounding_box()
    assert abs(actions["y"] - avatar["y"]) < avatar["height"]  # beside the avatar, above
    assert actions["x"] + actions["width"] <= PHONE
