"""The media queue's handler: a picture stored as sent becomes its sizes, off the page
requests (they only read its header: images.inspect).

One job a picture, whatever waits on it: `{"token": <its image:<token>>}`. The hash says
what the picture is (a post's, an avatar, a header), where its bytes as sent are
(`original`) and what waits on it (a composer's draft; a profile's pending field). A
remote picture (federation, later) is the same job: its hash names where to fetch it
instead of `original`, and read_bytes() is the one place that changes.

Idempotent (at least once delivery): every step checks the state it moves from. The sizes
are written over a run's before (the picture is not ready: nothing shows them yet); the
picture is marked ready or refused by a single-key script only while it is processing;
its bytes as sent are deleted after that; what waits on it runs on every run (adopting an
avatar twice adopts it once; a draft's post is written under its one-off token, so a
second run gets the first one's post).
"""

from __future__ import annotations

import logging

from django.utils import translation
from django.utils.translation import gettext_noop

from social import images, media, work
from social.federation import outgoing
from social.repository import (
    MediaNotFound,
    NotAllowed,
    PostNotFound,
    PostPending,
    Repository,
    get_repository,
)
from social.repository.posts.attachments import ATTACHED, UNATTACHED, Draft
from social.repository.posts.media_files import FAILED, LIVE, PROCESSING, Processing

log = logging.getLogger(__name__)

READY = {"post": UNATTACHED, "avatar": LIVE, "header": LIVE}  # the state once processed
LOST = gettext_noop("The picture was lost before it could be processed. Send it again.")
REPLY_GONE = gettext_noop("The post you replied to is gone.")
PICTURES_GONE = gettext_noop("Its pictures were deleted meanwhile.")
GAVE_UP = gettext_noop("The picture could not be processed. Try another one.")


def gave_up(payload: dict[str, str], error: str) -> None:
    """The job became a dead letter (it failed, or killed its worker, every attempt): the
    picture is refused, which tells its owner and frees what waits on it (a draft's text
    comes back in a notice). Staff retrying the letter find it refused: nothing runs twice."""
    repo = get_repository()
    token = payload.get("token", "")
    picture = repo.media_files.processing(token)
    if picture is None or picture.state != PROCESSING:
        return
    repo.media_files.fail(token, GAVE_UP)
    process_picture(payload)


@work.handler("media", "picture", on_dead=gave_up)
def process_picture(payload: dict[str, str]) -> None:
    """Make the sizes of the picture payload["token"] names, mark it ready (or refused,
    saying why), delete its bytes as sent, then do what waits on it."""
    repo = get_repository()
    picture = repo.media_files.processing(payload.get("token", ""))
    if picture is None:
        return  # discarded meanwhile (a refused post, a replaced avatar): nothing to do
    if picture.state == PROCESSING:
        settled = make_sizes(repo, picture)
        if settled is None:
            return
        picture = settled
    if picture.original:
        repo.media_files.drop_original(picture.token, picture.original)
    if picture.kind in media.KINDS:
        settle_profile(repo, picture)
    elif picture.draft:
        settle_draft(repo, picture.draft)


def read_bytes(picture: Processing) -> bytes:
    """Return the picture's bytes as sent; raise FileNotFoundError when they are gone."""
    return media.read_original(picture.original, images.MAX_BYTES)


def make_sizes(repo: Repository, picture: Processing) -> Processing | None:
    """Decode the picture and store its sizes, then mark it ready; or mark it refused
    with images' reason (an English message: pages translate it). Return it as it is
    after, or None when it was deleted meanwhile (its files are then deleted too)."""
    kind, token = picture.kind, picture.token
    try:
        data = read_bytes(picture)
        if kind == "post":
            variants, blurhash = images.process_with_blurhash(data, images.POST_SIZES)
        else:
            variants, blurhash = images.process(data, images.SIZES[kind]), ""
    except (images.ImageRefused, FileNotFoundError) as error:
        with translation.override("en"):
            reason = str(error) if isinstance(error, images.ImageRefused) else LOST
        repo.media_files.fail(token, reason)
        return repo.media_files.processing(token)
    media.save(kind, token, variants, replace=True)
    fields: dict[str, str | int] = {
        "sizes": " ".join(f"{v.name}:{v.width}x{v.height}" for v in variants),
        "bytes": sum(len(v.data) for v in variants),
    }
    if kind == "post":
        fields["blurhash"] = blurhash
        fields["full_bytes"] = len(variants[0].data)  # POST_SIZES: the full size first
    if repo.media_files.finish(token, READY[kind], fields) < 0:
        media.delete(kind, token)  # deleted while it was processed: nothing names these
        return None
    return repo.media_files.processing(token)


def settle_profile(repo: Repository, picture: Processing) -> None:
    """Make a processed avatar or header the profile's (if still the one pending), or
    tell its owner why it was refused."""
    if picture.state == LIVE:
        repo.profiles.adopt(picture.owner, picture.kind, picture.token)
        outgoing.profile_changed(picture.owner)
    elif picture.state == FAILED:
        repo.profiles.give_up(
            picture.owner, picture.kind, picture.token, picture.error, repo.notices
        )


def settle_draft(repo: Repository, draft_id: str) -> None:
    """Write a draft's post once none of its pictures is processing: through
    PostStore.create_post, as any post (fanned out, on the live bus: home's bar shows it).
    A refused picture, or a post that cannot be written (its parent gone, a block), gives
    the draft up and tells its author why, with what they wrote."""
    draft = repo.attachments.draft(draft_id)
    if draft is None:
        return  # written, or given up, by another run
    states = repo.attachments.states(draft.media)
    if PROCESSING in states:
        return  # the last picture's job writes it
    refused = [t for t, state in zip(draft.media, states) if state not in (UNATTACHED, ATTACHED)]
    if refused:
        found = repo.media_files.processing(refused[0])
        repo.attachments.refuse_draft(draft, found.error if found else LOST, repo.notices)
        return
    author = repo.users.get_user(draft.author)
    if author is None or author.is_suspended:
        repo.attachments.drop_draft(draft)  # no one to post as, or to tell
        return
    try:
        write(repo, draft)
    except PostPending:  # a run before this one is writing it right now
        raise work.Retry("the post is being written by another run") from None
    except PostNotFound:
        repo.attachments.refuse_draft(draft, REPLY_GONE, repo.notices)
        return
    except MediaNotFound:
        repo.attachments.refuse_draft(draft, PICTURES_GONE, repo.notices)
        return
    except NotAllowed as error:  # a block between the author and the post replied to
        repo.attachments.refuse_draft(draft, str(error), repo.notices)
        return
    repo.attachments.end_draft(draft.id)


def write(repo: Repository, draft: Draft) -> int:
    """Write a draft's post (create_post under its one-off token); return its id."""
    post_id = repo.posts.create_post(
        draft.author,
        draft.body,
        token=draft.post_token,
        reply_to=draft.reply_to,
        media=draft.media,
        spoiler_text=draft.spoiler_text,
        sensitive=draft.sensitive,
    )
    outgoing.posted(draft.author, post_id)
    return post_id
