"""The docs' examples run as written: docs/api.md's Mastodon.py script against the site
served for real over plain http (as `scripts/run-site` serves it), its one change the
site's address. It failed before issue 37: Mastodon.py refuses OAuth over http unless
told `allow_http=True`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from social import keys
from tests.served_site import served_site

pytest.importorskip("mastodon")

ROOT = Path(__file__).resolve().parent.parent


def mastodon_py_example() -> str:
    """The first ```python block after docs/api.md's "**Mastodon.py**"."""
    text = (ROOT / "docs" / "api.md").read_text()
    after = text[text.index("**Mastodon.py**") :]
    return re.search(r"```python\n(.*?)```", after, re.S).group(1)


@pytest.fixture(scope="module")
def site(redis_server, tmp_path_factory):
    settings = {
        "REDIS_URL": redis_server.url,
        "SECRET_KEY": "docs-example-tests-only-" + "x" * 50,
        "WEB_WORKERS": "1",
        "WEB_THREADS": "2",
        "MEDIA_ROOT": str(tmp_path_factory.mktemp("media")),
    }
    with served_site(tmp_path_factory.mktemp("site"), settings, start_within=90) as url:
        yield url


def test_the_mastodon_py_example_runs_as_written_over_http(repo, r, site):
    alice = repo.users.create_user(
        "alice", PBKDF2PasswordHasher().encode("her password", "docsalt", 1000)
    )
    code = mastodon_py_example()
    base = 'BASE = "http://127.0.0.1:8000"'  # the example's own, when it names one
    assert site.startswith("http://")

    scope: dict = {"BASE": site}
    exec(compile(code.replace(base, f"BASE = {site!r}"), "docs/api.md", "exec"), scope)

    (post_id,) = r.lrange(keys.own_posts(alice.id), 0, -1)
    assert r.hget(keys.post(int(post_id)), "body") == "Hello from Mastodon.py"
    assert scope["older"] is None or isinstance(scope["older"], list)
