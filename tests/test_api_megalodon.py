"""megalodon (npm), the library several desktop and phone apps are built on, detects which
server it talks to before it logs in: its detector reads NodeInfo and refuses software it
does not know unless `metadata.upstream` names Mastodon. Run here with Node against the
site served for real (tests/served_site.py).

megalodon comes from the npm registry (package.json, pinned in package-lock.json), installed
into node_modules/ by `scripts/run-tests` and `.ci/run` (`npm ci`), as axe-core is. Without
Node or the module the test is skipped locally; CI fails instead.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import CLUSTER
from tests.served_site import need_npm, served_site

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node") or shutil.which("nodejs")
MODULE = ROOT / "node_modules" / "megalodon" / "package.json"

need_npm(NODE is not None and MODULE.is_file(), "the megalodon test needs Node and megalodon")

DETECT = """
const { detector } = require("megalodon");
detector(process.argv[1]).then(
  (sns) => console.log(JSON.stringify({ sns })),
  (error) => console.log(JSON.stringify({ error: String(error) })),
);
"""


@pytest.fixture(scope="module")
def site(redis_server, tmp_path_factory):
    settings = {
        "REDIS_URL": redis_server.url,
        "REDIS_CLUSTER": "true" if CLUSTER else "false",
        "SECRET_KEY": "megalodon-tests-only-" + "x" * 50,
        "WEB_WORKERS": "1",
        "MEDIA_ROOT": str(tmp_path_factory.mktemp("media")),
    }
    with served_site(tmp_path_factory.mktemp("site"), settings, start_within=90) as url:
        yield url


def detect(url: str) -> dict:
    done = subprocess.run(
        [NODE, "-e", DETECT, url], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_megalodons_detector_takes_the_site_for_mastodon(site):
    assert detect(site) == {"sns": "mastodon"}
