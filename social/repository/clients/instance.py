"""The server's own words, as staff write them on /staff/about/: its rules (Mastodon's
/api/v1/instance/rules and the instance's `rules`) and its extended description
(/api/v1/instance/extended_description). One small hash (keys.instance_about), read in one
round trip, written with its audit entry in one pipeline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Unpack

from social import keys

from ..base import Client, RepositoryBase, StoreSettings, as_int, decode_hash
from ..models import User
from ..moderation.audit import AuditDraft, AuditStore
from ..moderation.stats import figures_from, queue_figures

RULES_MAX = 30  # rules a server may state
RULE_MAX = 300  # characters of one rule (Mastodon's)
DESCRIPTION_MAX = 10_000  # characters of the extended description


@dataclass(frozen=True)
class Rule:
    """One rule: its number (its place in the list, from 1) and text."""

    id: int
    text: str


@dataclass(frozen=True)
class About:
    """The rules and the extended description, with when each last changed (0: never)."""

    rules: tuple[Rule, ...] = ()
    description: str = ""
    rules_updated: int = 0
    description_updated: int = 0


def about_from(raw: dict[str, str]) -> About:
    """Decode the hash (fields `rules`: a JSON list of texts, `description`, and the times
    `rules_updated`, `description_updated`); anything malformed reads as absent."""
    try:
        texts = json.loads(raw.get("rules") or "[]")
    except ValueError:
        texts = []
    if not isinstance(texts, list):
        texts = []
    rules = tuple(
        Rule(n, text) for n, text in enumerate((t for t in texts if isinstance(t, str)), 1)
    )
    return About(
        rules=rules[:RULES_MAX],
        description=raw.get("description") or "",
        rules_updated=as_int(raw.get("rules_updated")) or 0,
        description_updated=as_int(raw.get("description_updated")) or 0,
    )


class InstanceStore(RepositoryBase):
    """The server's rules and extended description (see the module docstring)."""

    def __init__(self, client: Client, *, audit: AuditStore, **config: Unpack[StoreSettings]):
        super().__init__(client, **config)
        self.audit = audit

    def about(self) -> About:
        """Return the rules and the description (one round trip)."""
        return about_from(decode_hash(self.r.hgetall(keys.instance_about())))

    def about_with_figures(self) -> tuple[About, int, int]:
        """The rules and description, and the server's accounts and posts (stats.py's
        figures), for /api/v1/instance and /api/v2/instance: one round trip."""
        reads = self.reads()
        reads.hgetall("about", keys.instance_about())
        queue_figures(reads)
        got = reads.execute()
        return (about_from(decode_hash(got.hash("about"))), *figures_from(got))

    def save(self, actor: User, rules: list[str], description: str) -> bool:
        """Store what staff wrote, if it changed anything, with its audit entry in one
        pipeline (the time of each part that changed moves); return whether it changed.
        rules: their texts in order, at most RULES_MAX of RULE_MAX characters (the form
        checks; longer ones are cut here); description: at most DESCRIPTION_MAX."""
        rules = [text[:RULE_MAX] for text in rules[:RULES_MAX]]
        description = description[:DESCRIPTION_MAX]
        before = self.about()
        new_rules = [r.text for r in before.rules] != rules
        new_description = before.description != description
        if not (new_rules or new_description):
            return False

        def write(pipe, ts: int) -> None:
            fields: dict[str, str | int] = {}
            if new_rules:
                fields.update(rules=json.dumps(rules, ensure_ascii=False), rules_updated=ts)
            if new_description:
                fields.update(description=description, description_updated=ts)
            pipe.hset(keys.instance_about(), mapping=fields)

        parts = [
            part
            for part, changed in (("rules", new_rules), ("description", new_description))
            if changed
        ]
        draft = AuditDraft(actor, "edit_about", reason=", ".join(parts))
        self.audit.run_audited([draft], write)
        return True
