"""axe-core over every page of the site (issue 11): logged out, logged in and as staff, in the
light and the dark colour scheme. Any violation of impact moderate or above fails, listed
with its rule, impact, the elements' selectors and axe's help text.

axe-core comes from the npm registry (package.json, pinned in package-lock.json), installed
into node_modules/ by `scripts/run-tests` and `.ci/run` (`npm ci`), and injected into the
page from that file: nothing is loaded from a CDN. Without it the tests are skipped locally
and fail in CI (CI=true), where .ci/run must have installed it.
"""

from __future__ import annotations

import pytest

from tests.browser.conftest import ROOT, register_with_errors
from tests.served_site import need_npm

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("moderate", "serious", "critical")

need_npm(AXE.is_file(), "the accessibility tests need axe-core")


def axe_violations(page) -> list[dict]:
    """Run axe-core (every rule of its default set) over the page; return the violations
    of impact moderate or above."""
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [v for v in result["violations"] if v["impact"] in SERIOUS]


def describe(label: str, violation: dict) -> str:
    targets = ", ".join(" ".join(node["target"]) for node in violation["nodes"][:5])
    more = len(violation["nodes"]) - 5
    if more > 0:
        targets += f" (and {more} more)"
    return f"{label}: {violation['id']} ({violation['impact']}) at {targets}: {violation['help']}"


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("audience", ["visitor", "reader", "staff"])
def test_axe_finds_nothing_moderate_or_worse(site_tour, audience, scheme):
    page = site_tour.open(audience, scheme=scheme, bypass_csp=True)
    found, visited = [], []
    for label, step in site_tour.pages(audience):
        site_tour.visit(page, step)
        assert page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") == (
            scheme == "dark"
        )
        visited.append(label)
        found += [describe(label, v) for v in axe_violations(page)]
    assert len(visited) == len(site_tour.pages(audience))
    assert not found, f"{audience}, {scheme}:\n" + "\n".join(found)


def test_axe_reports_a_violation_it_is_shown(site_tour):
    """The check itself can fail: a page given an image without alt text and a field
    without a label is reported, with the rule ids."""
    page = site_tour.open("visitor", bypass_csp=True)
    site_tour.visit(page, "/login/")
    page.evaluate(
        """() => {
          const main = document.querySelector('main');
          main.insertAdjacentHTML('beforeend',
            '<img src="/static/favicon.svg"><input type="text" id="unlabelled">');
        }"""
    )
    ids = {v["id"] for v in axe_violations(page)}
    assert {"image-alt", "label"} <= ids


# Forms sent back with errors: each error is named by its field's aria-describedby (Django's
# widget names <id>_error; social/_field.html's field_errors gives the errors that id), and
# axe finds nothing there either.
DESCRIBED_BY_MISSING = """
() => [...document.querySelectorAll('[aria-describedby]')].flatMap((el) =>
  el.getAttribute('aria-describedby').split(/\\s+/)
    .filter((id) => !document.getElementById(id)).map((id) => `${el.name} -> #${id}`))
"""


def send(page, field: str, value: str, button: str) -> None:
    page.fill(field, value)
    with page.expect_navigation():
        page.locator("main form", has=page.locator(field)).locator(button).click()


def test_forms_with_errors_point_at_their_errors(site_tour, r):
    tour, base = site_tour, site_tour.live_url
    bad_name = "a%21" * 15
    forms = {
        "visitor": [
            ("register", lambda page: tour.visit(page, register_with_errors)),
            ("login", lambda page: (
                page.goto(base + "/login/"),
                send(page, "#id_username", "ada", "button[type=submit]"),
            )),
            ("forgot password", lambda page: (
                page.goto(base + "/password/forgot/"),
                send(page, "#id_email", "not an address", "button[type=submit]"),
            )),
            ("reset password", lambda page: (
                page.goto(f"{base}/password/reset/{tour.reset_token}/"),
                send(page, "#id_new_password1", "1234", "button[type=submit]"),
            )),
        ],
        "reader": [
            ("password change", lambda page: (
                page.goto(base + "/settings/password/"),
                send(page, "#id_old_password", "wrong", "button[type=submit]"),
            )),
            ("e-mail address", lambda page: (
                page.goto(base + "/settings/email/"),
                send(page, "#id_email", "not an address", "button[type=submit]"),
            )),
        ],
        "staff": [
            ("user search", lambda page: page.goto(
                f"{base}/staff/users/?q={bad_name}&match=nope&status=nope")),
            ("audit log filter", lambda page: page.goto(
                f"{base}/staff/log/?actor={bad_name}&action=nope&target={bad_name}")),
            ("post search", lambda page: page.goto(f"{base}/staff/posts/?tag=%21%21")),
            ("suspend without a reason", lambda page: (
                page.goto(f"{base}/staff/users/carol/"),
                send(page, "#id_suspend-reason", "   ", "button.danger"),
            )),
        ],
    }  # fmt: skip
    problems = []
    for audience, steps in forms.items():
        page = tour.open(audience, bypass_csp=True)
        for label, step in steps:
            step(page)
            assert page.locator("[aria-invalid=true]").count(), label
            problems += [f"{label}: {gap}" for gap in page.evaluate(DESCRIBED_BY_MISSING)]
            problems += [describe(label, v) for v in axe_violations(page)]
    assert not problems, "\n".join(problems)
    # Nothing was changed by the refused forms.
    assert r.hget(f"user:{tour.carol.id}", "status") in (None, "", "active")
