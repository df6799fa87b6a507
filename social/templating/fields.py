"""Forms in templates: a blank form's widgets and rows rendered once per process and
language, ids for two forms on one page, and the one-off submission token."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from django.utils.translation import get_language
from jinja2 import Environment
from markupsafe import Markup

from social.repository.cache import BoundedCache


def with_auto_id(form, auto_id: str):
    """Give form's fields ids of the shape auto_id ("login_%s") and return the form: two
    forms on one page with fields of the same names (the welcome page's sign-up and log-in)
    would otherwise both say id="id_username", and a label would point at the other form's
    input. The labels, help, errors and aria-describedby of _field.html follow the new ids.
    """
    form.auto_id = auto_id
    return form


_blank_fields: BoundedCache[tuple, Markup] = BoundedCache(256)


def widget(bound) -> Markup:
    """Render a form field's widget ({{ widget(form.status) }}), remembering blank ones.

    A field of a form that was not submitted and has no per-request initial data renders
    the same HTML every time (the welcome page's sign-up and log-in forms, the composer),
    so it is rendered once per process and language (labels, placeholders and the
    composer's counter texts are translated); fields with data or errors render as usual.
    """
    return _remembered_blank("widget", bound, lambda: Markup(str(bound)))


def _remembered_blank(kind: str, bound, render: Callable[[], Markup]) -> Markup:
    """Return render(), remembered per process and language when bound's form is blank."""
    form = bound.form
    if form.is_bound or form.initial or form.prefix:
        return render()
    key = (kind, type(form), form.auto_id, bound.name, get_language())
    html = _blank_fields.get(key)
    if html is None:
        html = render()
        _blank_fields.put(key, html)
    return html


class FieldRows:
    """field_row(field): a form field with its label, help and errors (the macro `row` of
    social/_field.html), remembered for a blank form's field as widget() remembers its
    widget: the log-in, sign-up and settings forms render their rows once per language."""

    TEMPLATE, MACRO = "social/_field.html", "row"

    def __init__(self, env: Environment) -> None:
        self.env = env

    def __call__(self, bound) -> Markup:
        def render() -> Markup:
            module = self.env.get_template(self.TEMPLATE).module
            return Markup(getattr(module, self.MACRO)(bound))

        if self.env.auto_reload:
            return render()
        return _remembered_blank("row", bound, render)


# Where a remembered form (the home page's blank composer) takes a fresh submission token.
SUBMISSION_TOKEN_SLOT = Markup("<!--submission-token-->")


def with_submission_token(html: Markup) -> Markup:
    """Return html with a fresh submission_token() in SUBMISSION_TOKEN_SLOT."""
    return Markup(html.replace(SUBMISSION_TOKEN_SLOT, submission_token()))


def submission_token() -> Markup:
    """A hidden input with a one-off token for a form whose submission must take effect
    once: a retried POST (a reload after a timeout or a 503) sends the same token, and the
    repository returns the first result instead of doing it again (PostStore.create_post).
    """
    return Markup('<input type="hidden" name="token" value="%s">') % secrets.token_urlsafe(16)
