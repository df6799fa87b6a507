"""The activities our accounts send, as Mastodon shapes them (its
app/serializers/activitypub/*: LikeSerializer, UndoLikeSerializer, FollowSerializer,
UndoFollowSerializer, BlockSerializer, UndoBlockSerializer, DeleteSerializer,
UpdateSerializer, UndoAnnounceSerializer). Create and Announce are documents.py's.

Pure functions of ids and documents: no Redis, no request. Ids of activities that may be
undone carry the time of the action (`at`, ms), so a like, follow or block made again
after an Undo is a new activity (a receiver that drops an id it has seen, as ours does
for a week, still takes it), and the Undo names the same id as what it undoes (some
servers, GoToSocial among them, find what to undo by that id).

documents.py names every account and post by its address here, which for a remote account
or post (stored here under an id of ours) is not its identity: `with_ids` swaps those for
the ids their servers gave them before an activity leaves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import escape

from . import documents as doc

Document = dict[str, Any]


def rebuilt(kind: str, activity_id: str, actor: str, obj: Any, **more: Any) -> Document:
    """An activity of ours as it was sent: kind, its id, actor and object (an Undo embeds
    what it undoes: rebuilt from the id remembered when it was sent)."""
    return {"@context": doc.AS_PROFILE, "id": activity_id, "type": kind, "actor": actor,
            "object": obj, **more}  # fmt: skip


def embedded(activity: Mapping[str, Any]) -> Document:
    """The activity without its @context: as the object of another (an Undo's)."""
    return {name: value for name, value in activity.items() if name != "@context"}


def like(actor: str, object_id: str, *, post: int, at: int) -> Document:
    """actor likes the post object_id (ours numbered post)."""
    return rebuilt("Like", f"{actor}#likes/{int(post)}/{int(at)}", actor, object_id)


def follow(actor: str, target: str, *, target_id: int, at: int) -> Document:
    """actor follows the account target (ours numbered target_id)."""
    return rebuilt("Follow", f"{actor}#follows/{int(target_id)}/{int(at)}", actor, target)


def block(actor: str, target: str, *, target_id: int, at: int) -> Document:
    """actor blocks the account target (ours numbered target_id)."""
    return rebuilt("Block", f"{actor}#blocks/{int(target_id)}/{int(at)}", actor, target)


def undo(activity: Mapping[str, Any]) -> Document:
    """The Undo of one of our activities (a Like, Follow, Block or Announce), embedding
    it, addressed as it was (an Announce's `to` and `cc`)."""
    addressed = {name: activity[name] for name in ("to", "cc") if name in activity}
    return rebuilt(
        "Undo", f"{activity['id']}/undo", activity["actor"], embedded(activity), **addressed
    )


def delete_note(actor: str, object_id: str) -> Document:
    """actor deletes its post object_id: a Delete of its Tombstone, to everyone."""
    tombstone = {"id": object_id, "type": "Tombstone"}
    return rebuilt("Delete", f"{object_id}#delete", actor, tombstone, to=[doc.PUBLIC])


def update_person(person: Mapping[str, Any], *, at: int) -> Document:
    """An Update of an account's Person (documents.person), to everyone."""
    actor = person["id"]
    return {
        "@context": person.get("@context", doc.AS_PROFILE),
        "id": f"{actor}#updates/{int(at)}",
        "type": "Update",
        "actor": actor,
        "to": [doc.PUBLIC],
        "object": embedded(person),
    }


def with_ids(document: Any, ids: Mapping[str, str]) -> Any:
    """Return document with every string equal to a key of ids replaced by its value
    (our addresses of remote accounts and posts swapped for their own ids), at any depth.
    Strings are compared whole: a URL that merely starts with one is left alone."""
    if not ids:
        return document
    if isinstance(document, str):
        return ids.get(document, document)
    if isinstance(document, list):
        return [with_ids(item, ids) for item in document]
    if isinstance(document, dict):
        return {name: with_ids(value, ids) for name, value in document.items()}
    return document


def with_links(html: str, links: Mapping[str, str]) -> str:
    """Return html (a Note's content, as the site renders a post) with each link to a key
    of links made a link to its value (our page of a remote account it mentions -> its
    page on its server). Whole addresses only: the href must be the key, escaped as
    templates escape it."""
    for ours, theirs in links.items():
        html = html.replace(f'href="{escape(ours)}"', f'href="{escape(theirs)}"')
    return html
