"""Accounts without an uploaded picture (issue 37): the API names a generated picture of
the coloured initial the pages draw (its hue by the account's id, its letter by the display
name or username), served as a PNG that never changes, made once per process and never
reading Redis."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from PIL import Image

from social.api import avatars
from social.templating.faces import HUES
from tests.api import Api, token_for

ROOT = Path(__file__).resolve().parent.parent


def test_the_palette_is_the_pages_own():
    css = (ROOT / "static" / "css" / "site.css").read_text()
    found = dict(re.findall(r"\.hue-(\d+) \{ background: (#[0-9a-f]{6}); \}", css))
    assert [found[str(n)] for n in range(HUES)] == list(avatars.PALETTE)


def test_accounts_without_a_picture_get_their_coloured_initial(repo, alice, bob, client):
    repo.profiles.update(alice.id, display_name="Zoë Adams")
    accounts = {
        a["username"]: a
        for a in Api(token_for(repo, alice))
        .get("/api/v1/accounts", {"id[]": [str(alice.id), str(bob.id)]})
        .json()
    }

    for user, letter in ((alice, "Z"), (bob, "B")):
        url = accounts[user.username]["avatar"]
        path = f"/avatars/initial/{user.id % HUES}-{ord(letter):x}.png"
        assert url == "http://testserver" + path
        assert accounts[user.username]["avatar_static"] == url
    assert accounts["alice"]["avatar"] != accounts["bob"]["avatar"]  # neighbours differ


def test_the_picture_is_the_letter_in_white_on_the_accounts_colour(client, round_trips):
    round_trips.reset()

    answer = client.get(f"/avatars/initial/4-{ord('Z'):x}.png")

    assert answer.status_code == 200
    assert answer["Content-Type"] == "image/png"
    assert answer["Cache-Control"] == "public, max-age=31536000, immutable"
    assert answer["Access-Control-Allow-Origin"] == "*"
    assert answer["Cross-Origin-Resource-Policy"] == "cross-origin"
    assert round_trips.count == 0
    image = Image.open(io.BytesIO(answer.content)).convert("RGB")
    assert image.size == (400, 400)
    blue = tuple(int(avatars.PALETTE[4][i : i + 2], 16) for i in (1, 3, 5))
    assert image.getpixel((5, 5)) == blue == image.getpixel((394, 394))
    centre = image.crop((140, 140, 260, 260)).getcolors(maxcolors=100_000)
    assert any(colour == (255, 255, 255) for _, colour in centre)  # the letter
    assert len(answer.content) < 20_000


def test_a_picture_is_made_once_per_process():
    assert avatars.picture(3, "Q") is avatars.picture(3, "Q")


@pytest.mark.parametrize(
    ("shown", "username", "wanted"),
    [("", "bob", "B"), ("Émile", "emile", "É"), ("", "9lives", "9"), ("ß", "x", "S")],
)
def test_the_letter_is_the_pages_initial_when_a_font_has_it(shown, username, wanted):
    letter = avatars.drawn_letter(shown, username)
    if avatars.font_for(wanted) is None:  # only Pillow's own font here: its base letter
        wanted = wanted.encode("ascii", "ignore").decode() or username[0].upper()
    assert letter == wanted
    assert avatars.font_for(letter) is not None


def test_a_letter_no_font_has_falls_back_to_the_usernames(monkeypatch):
    monkeypatch.setattr(avatars, "font_for", lambda letter: 0 if letter.isascii() else None)
    assert avatars.drawn_letter("爱达", "kai") == "K"
    assert avatars.drawn_letter("Ωmega", "") == "?"


@pytest.mark.parametrize(
    "path",
    [
        "/avatars/initial/12-41.png",  # past the hues
        "/avatars/initial/99-41.png",
        "/avatars/initial/0-d800.png",  # a surrogate
        "/avatars/initial/0-110000.png",  # past Unicode
        "/avatars/initial/0-0.png",
        "/avatars/initial/0-20.png",  # a space: no one's initial
        "/avatars/initial/0-2d.png",  # "-"
        "/avatars/initial/0-41.PNG",
        "/avatars/initial/%C2%B2-41.png",
        "/avatars/initial/0-0041x.png",
    ],
)
def test_a_picture_no_account_shows_is_not_found(client, path):
    assert client.get(path).status_code == 404


def test_only_reading_is_allowed(client):
    assert client.post(f"/avatars/initial/0-{ord('A'):x}.png").status_code == 405
    assert client.head(f"/avatars/initial/0-{ord('A'):x}.png").status_code == 200
