"""The demo data set: deterministic users, a follow graph, conversations, likes and logins.

Pure generation, no Redis: `manage.py seed` (social/management/commands/seed.py) decides
whether to write, and writes what this module returns through the repository's bulk methods.
The same Plan (same --seed) and the same `now` always give the same data.

What it makes: Faker names made valid (3-20 letters, digits, underscore; unique ignoring
case), one user `demo` who follows the most popular accounts, a Zipf-skewed follow graph (a
few accounts with thousands of followers when there are enough users), posts of 1-280
characters spread over recent weeks, oldest first (so ids increase with time), and a few past
logins per user from documentation IP ranges. Times are unix seconds up to `now`.

The posts hold conversations: about a fifth answer an earlier post (most often a recent one
by someone the author follows, or a reply they got; replies chain into threads); about one in
ten of the others names one or two users with @, mostly people the author follows, and half
of all replies greet the author they answer (a few recent posts by accounts `demo` follows
name it, so its mentions page is not empty); about a sixth carry one or two #tags from a
small vocabulary whose use is Zipf-skewed. Likes average LIKES_PER_POST per post, skewed: a
post's share grows with its author's audience and a log-normal "how good it was", so popular
accounts' posts get hundreds and most posts none or a few; most come from the author's
followers, soon after the post.

Use: build a Plan (choose_seed() when no seed is given), then call DemoData's methods in
this order, since they draw from one random stream: accounts(), then, with the accounts'
(id, signup time) as written, follows(), posts(), likes() and logins().
"""

from __future__ import annotations

import random
import re
import secrets
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from math import log

from faker import Faker

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "hello-retwis-42"  # passes Django's validators; printed for the user
DEMO_FOLLOWS = 25  # the demo account follows this many of the most popular users
DEMO_POSTS = 3
DEMO_MENTIONED = 8  # recent posts by accounts the demo follows name @demo
ZIPF_EXPONENT = 1.0  # follower counts: a few stars, a long tail with a handful each
MAX_BODY = 280
NAME_RE = re.compile(r"[^A-Za-z0-9_]")

REPLY_SHARE = 0.2  # posts that answer an earlier post
ANSWER_BACK = 0.25  # of replies: to the latest reply the author got, when there is one
TO_FOLLOWEE = 0.6  # of replies: to a recent post by someone the author follows
JOIN_THREAD = 0.4  # chance, at each step, of answering the latest reply instead (chains)
GREET_PARENT = 0.5  # replies that open with the @name of the author they answer
MENTION_SHARE = 0.1  # other posts that @name one user (a fifth of them two)
MENTION_FOLLOWEE = 0.8  # of those names: someone the author follows
TAG_SHARE = 0.16  # posts with #tags (a quarter of them two)
LIKES_PER_POST = 2.0  # on average: about 400,000 for 200,000 posts
LIKE_FROM_FOLLOWER = 0.7  # the rest come from anyone, by how active they are
LIKE_DELAY = 6 * 3600  # mean seconds from a post (or a liker's sign-up) to a like
# A small vocabulary, most used first: a tag's use falls off as 1 / rank.
TAGS = (
    "redis", "python", "coffee", "music", "django", "photography", "travel", "running",
    "books", "opensource", "webdev", "football", "cooking", "weekend", "MondayMotivation",
    "nowplaying", "gamedev", "design", "startup", "science", "space", "climate", "art",
    "movies", "hiking", "cats", "dogs", "gardening", "linux", "javascript", "rust",
    "devops", "security", "databases", "remotework", "productivity", "fitness", "news",
    "ThrowbackThursday", "til",
)  # fmt: skip

Post = tuple[int, str, int, int | None]  # author id, body, time, index of the post answered


@dataclass(frozen=True)
class Plan:
    """What to generate: how many users, follows and posts, over how many days, from which seed."""

    users: int
    follows: int
    posts: int
    days: int
    seed: int


def choose_seed(seed: int | None) -> int:
    """Return seed, or a fresh random one when None (the command prints it for a re-run)."""
    return seed if seed is not None else secrets.randbelow(10**6)


class DemoData:
    """Deterministic generator of names, a follow graph, posts, likes and logins for one Plan."""

    def __init__(self, plan: Plan, now: int) -> None:
        self.plan = plan
        self.now = now
        self.rng = random.Random(plan.seed)
        self.fake = Faker()
        self.fake.seed_instance(plan.seed)
        self._popularity: list[float] = []
        self._graph: tuple[object, list[list[int]], list[list[int]]] | None = None

    def accounts(self) -> list[tuple[str, int]]:
        """Return (username, signup time) pairs, oldest first; `demo` comes first."""
        n = self.plan.users
        start = self.now - self.plan.days * 86400
        # Sign-ups fill the first 70% of the window so everyone has time to post.
        times = sorted(self.rng.randint(start, start + self.plan.days * 60480) for _ in range(n))
        return list(zip(self.usernames(n), times))

    def usernames(self, n: int) -> list[str]:
        """Return n valid usernames unique ignoring case, `demo` first."""
        firsts = [self.fake.first_name() for _ in range(300)]
        lasts = [self.fake.last_name() for _ in range(300)]
        words = [self.fake.word() for _ in range(200)]
        patterns: list[Callable[[], str]] = [
            lambda: self.rng.choice(firsts).lower() + self.rng.choice(lasts).lower(),
            lambda: self.rng.choice(firsts)[0].lower() + self.rng.choice(lasts).lower(),
            lambda: self.rng.choice(firsts).lower() + str(self.rng.randint(1, 99)),
            lambda: self.rng.choice(firsts) + "_" + self.rng.choice(lasts),
            lambda: self.rng.choice(words) + "_" + self.rng.choice(words),
            lambda: self.rng.choice(lasts) + self.rng.choice(firsts),
        ]
        names, seen = [DEMO_USERNAME], {DEMO_USERNAME}
        while len(names) < n:
            name = NAME_RE.sub("", self.rng.choice(patterns)())[:20]
            while len(name) < 3 or name.lower() in seen:
                name = name[:16] + str(self.rng.randint(0, 9999))
            seen.add(name.lower())
            names.append(name)
        return names

    def follows(self, users: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
        """Return (follower, followee, time) for users given as (id, signup time).

        Followees are drawn by Zipf weight over a shuffled popularity rank, followers by a
        log-normal activity, until the requested number of distinct pairs exists. The first
        user (the demo account) follows the most popular ones. A follow happens after both
        sign-ups.
        """
        n = len(users)
        target = min(self.plan.follows, n * (n - 1))
        popularity = self.popularity(n)
        stars = sorted(range(1, n), key=lambda i: -popularity[i])[:DEMO_FOLLOWS]
        pairs = dict.fromkeys((0, star) for star in stars[:target])
        by_pop = list(accumulate(popularity))
        by_activity = list(accumulate(self.rng.lognormvariate(0, 1) for _ in range(n)))
        for _ in range(100):  # a dense request converges slowly; stop rather than spin
            need = target - len(pairs)
            if need <= 0:
                break
            k = need + need // 4 + 10
            sources = self.rng.choices(range(n), cum_weights=by_activity, k=k)
            targets = self.rng.choices(range(n), cum_weights=by_pop, k=k)
            for pair in zip(sources, targets):
                if pair[0] != pair[1] and pair not in pairs:
                    pairs[pair] = None
                    if len(pairs) == target:
                        break
        made = [
            (users[a][0], users[b][0], self._between(max(users[a][1], users[b][1])))
            for a, b in pairs
        ]
        following: list[list[int]] = [[] for _ in range(n)]
        followers: list[list[int]] = [[] for _ in range(n)]
        for a, b in pairs:  # graph() of these follows, while their indexes are at hand
            following[a].append(b)
            followers[b].append(a)
        self._graph = (made, following, followers)
        return made

    def popularity(self, n: int) -> list[float]:
        """Return each user's Zipf weight (1 for the most popular), over a shuffled rank."""
        if len(self._popularity) != n:
            ranks = list(range(n))
            random.Random(self.plan.seed + 1).shuffle(ranks)
            self._popularity = [1 / (rank + 1) ** ZIPF_EXPONENT for rank in ranks]
        return self._popularity

    def posts(
        self,
        users: list[tuple[int, int]],
        follows: Sequence[tuple[int, int, int]],
        names: Mapping[int, str],
    ) -> list[Post]:
        """Return (author id, body, time, parent) posts sorted by time, oldest first.

        parent is None, or the index in the list of the earlier (strictly older) post this
        one answers, by someone else. Authors are drawn by a log-normal activity nudged
        towards popular accounts (so the demo's home feed is full); the demo account writes
        a few itself. names ({user id: username}) spell the @mentions.
        """
        n, count = len(users), self.plan.posts
        if not n:
            return []  # every name was taken (--force): nobody to write them
        weights = [self.rng.lognormvariate(0, 1) * (1 + 10 * p) for p in self.popularity(n)]
        authors = self.rng.choices(range(n), cum_weights=list(accumulate(weights)), k=count)
        authors[: min(DEMO_POSTS, count)] = [0] * min(DEMO_POSTS, count)
        made = sorted((self._between(users[a][1]), a) for a in authors)
        following, _ = self.graph(users, follows)
        threads = _Threads(self.rng, made, following)
        by_pop = list(accumulate(self.popularity(n)))
        tags = self._tag_maker()
        texts = self.texts()
        out: list[Post] = []
        greet_demo = self._greeting_demo(made, following[0])
        for i, (ts, a) in enumerate(made):
            parent = threads.parent(i) if self.rng.random() < REPLY_SHARE else None
            named = []
            if parent is not None:
                if self.rng.random() < GREET_PARENT:
                    named = [made[parent][1]]
            elif i in greet_demo:
                named = [0]
            elif self.rng.random() < MENTION_SHARE:
                named = self._named(a, following[a], by_pop, 2 if self.rng.random() < 0.2 else 1)
            head, tail = self._mention_text([names[users[b][0]] for b in named], parent)
            tail += tags()
            body = head + texts(MAX_BODY - len(head) - len(tail), short=parent is not None)
            out.append((users[a][0], body + tail, ts, parent))
            threads.add(i, parent)
        return out

    def likes(
        self,
        users: list[tuple[int, int]],
        follows: Sequence[tuple[int, int, int]],
        posts: Sequence[Post],
    ) -> list[tuple[int, int, int]]:
        """Return (user id, post index, time) likes of posts (as posts() made them).

        About LIKES_PER_POST per post, skewed (see the module docstring): each post's
        expected share is rounded up or down at random, then filled from the author's
        followers (LIKE_FROM_FOLLOWER of them) and from anyone by activity. Never one's own
        post, never twice, always after the post and the liker's sign-up, up to now.
        """
        n, rng = len(users), self.rng
        index = {user_id: k for k, (user_id, _) in enumerate(users)}
        _, followers = self.graph(users, follows)
        weights = [
            (len(followers[index[author]]) + 1) ** 0.5
            * rng.lognormvariate(0, 1)
            * (0.5 if parent is not None else 1.0)
            for author, _, _, parent in posts
        ]
        scale = LIKES_PER_POST * len(posts) / (sum(weights) or 1)
        by_activity = list(accumulate(rng.lognormvariate(0, 1) for _ in range(n)))
        anyone = _draws(rng, n, by_activity)
        out: list[tuple[int, int, int]] = []
        for p, ((author_id, _, ts, _), weight) in enumerate(zip(posts, weights)):
            want = weight * scale
            count = int(want) + (rng.random() < want % 1)
            if not count:
                continue
            author, fans = index[author_id], followers[index[author_id]]
            from_fans = min(len(fans), int(count * LIKE_FROM_FOLLOWER + rng.random()))
            likers = rng.sample(fans, from_fans) if from_fans else []
            for _ in range(count - from_fans):
                liker = next(anyone)
                if liker != author and liker not in likers:  # else one like fewer
                    likers.append(liker)
            for liker in likers:
                start = max(ts, users[liker][1])
                delay = int(-LIKE_DELAY * log(1.0 - rng.random()))  # exponential
                out.append((users[liker][0], p, min(self.now, start + delay)))
        return out

    def graph(
        self, users: list[tuple[int, int]], follows: Sequence[tuple[int, int, int]]
    ) -> tuple[list[list[int]], list[list[int]]]:
        """Return who each user follows and who follows them, by index in users (made
        with the follows when they come from follows())."""
        if self._graph is None or self._graph[0] is not follows:
            index = {user_id: k for k, (user_id, _) in enumerate(users)}
            following: list[list[int]] = [[] for _ in users]
            followers: list[list[int]] = [[] for _ in users]
            for follower, followee, _ in follows:
                a, b = index[follower], index[followee]
                following[a].append(b)
                followers[b].append(a)
            self._graph = (follows, following, followers)
        return self._graph[1], self._graph[2]

    def logins(self, users: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
        """Return (user id, time, IP) past logins: a few per user, after sign-up.

        IPs come from the documentation ranges (TEST-NET-2 and -3), never real addresses.
        """
        out = []
        for user_id, signup in users:
            for _ in range(min(12, int(self.rng.lognormvariate(0.7, 0.8)))):
                ip = self.rng.choice(("198.51.100.", "203.0.113.")) + str(self.rng.randint(1, 254))
                out.append((user_id, self._between(signup), ip))
        return out

    def profiles(self, users: list[tuple[int, int]]) -> list[tuple[int, str, str]]:
        """Return (user id, display name, bio) for most users (a fifth keep neither, as
        real sites have): names from Faker, some with an emoji; bios of a sentence or two
        and a #tag. No pictures: the pages draw each account's generated avatar."""
        fake, rng = self.fake, self.rng
        names = [fake.name() for _ in range(500)]
        jobs = [fake.job() for _ in range(200)]
        places = [fake.city() for _ in range(200)]
        emoji = ("", "", "", " 🌿", " ☕", " 🚲", " 🎧", " 📷", " 🌊")
        tags = ("redis", "python", "django", "coffee", "music", "travel", "books", "running")
        out = []
        for user_id, _ in users:
            if rng.random() < 0.2:
                continue
            name = (rng.choice(names) + rng.choice(emoji))[:50]
            bio = f"{rng.choice(jobs)} in {rng.choice(places)}."
            if rng.random() < 0.6:
                bio += f"\nInto #{rng.choice(tags)} and #{rng.choice(tags)}."
            out.append((user_id, name, bio[:500]))
        return out

    def texts(self) -> Callable[..., str]:
        """Return a cheap post-text maker over a pool pre-generated with Faker: make(limit,
        short=False) returns 1 to limit characters (one sentence when short, for replies)."""
        fake, rng = self.fake, self.rng
        sentences = [fake.sentence(nb_words=rng.randint(3, 16)) for _ in range(3000)]
        sentences += [fake.catch_phrase() + "." for _ in range(300)]
        sentences += [fake.bs().capitalize() + "!" for _ in range(300)]

        size, more_of = len(sentences), (0, 0, 0, 1, 1, 2, 3)
        pick = rng.random  # indexing by random() is several times cheaper than choice()

        def make(limit: int, short: bool = False) -> str:
            body = sentences[int(pick() * size)]
            for _ in range(0 if short else more_of[int(pick() * 7)]):
                more = sentences[int(pick() * size)]
                if len(body) + 1 + len(more) > limit:
                    break
                body += " " + more
            return body[: max(1, limit)].rstrip()

        return make

    def _greeting_demo(self, made: list[tuple[int, int]], demo_follows: list[int]) -> set[int]:
        """Return the indexes of DEMO_MENTIONED recent posts, by accounts the demo follows,
        that will name @demo (so its mentions page has something to show)."""
        stars = set(demo_follows)
        recent = []
        for i in range(len(made) - 1, -1, -1):
            if made[i][1] in stars:
                recent.append(i)
                if len(recent) == 5 * DEMO_MENTIONED:
                    break
        return set(self.rng.sample(recent, min(DEMO_MENTIONED, len(recent))))

    def _tag_maker(self) -> Callable[[], str]:
        """Return a maker of the #tags ending a post: "" for most, else one or two."""
        rng = self.rng
        by_use = list(accumulate(1 / rank for rank in range(1, len(TAGS) + 1)))

        def make() -> str:
            if rng.random() >= TAG_SHARE:
                return ""
            chosen = rng.choices(TAGS, cum_weights=by_use, k=2 if rng.random() < 0.25 else 1)
            return "".join(" #" + tag for tag in dict.fromkeys(chosen))

        return make

    def _named(self, author: int, followees: list[int], by_pop: list[float], k: int) -> list[int]:
        """Return up to k users (indexes) for author to @name: mostly followees, else
        anyone by popularity (by_pop: cumulative weights)."""
        named: list[int] = []
        for _ in range(k):
            if followees and self.rng.random() < MENTION_FOLLOWEE:
                pick = self.rng.choice(followees)
            else:
                pick = self.rng.choices(range(len(by_pop)), cum_weights=by_pop)[0]
            if pick != author and pick not in named:
                named.append(pick)
        return named

    def _mention_text(self, names: list[str], parent: int | None) -> tuple[str, str]:
        """Return the (head, tail) of a post naming these users: a reply greets at the head;
        another post names them at either end ("cc @x", "with @x"...)."""
        if not names:
            return "", ""
        at = " ".join("@" + name for name in names)
        if parent is not None or self.rng.random() < 0.4:
            return at + " ", ""
        return "", self.rng.choice((" ", " cc ", " with ", " h/t ")) + at

    def _between(self, start: int) -> int:
        """Return a random unix time between start and now."""
        return self.rng.randint(min(start, self.now), self.now)


class _Threads:
    """Who answers what: picks the earlier post a reply answers, and remembers the threads
    (each post's latest reply, each author's latest reply received, their recent posts)."""

    def __init__(
        self, rng: random.Random, made: list[tuple[int, int]], following: list[list[int]]
    ) -> None:
        self.rng, self.made, self.following = rng, made, following
        self.latest_reply: dict[int, int] = {}  # post index -> its newest reply's index
        self.inbox: dict[int, int] = {}  # author -> newest reply they got, not yet answered
        self.recent: dict[int, deque[int]] = {}  # author -> their last 3 posts' indexes

    def parent(self, i: int) -> int | None:
        """Return the index of the post that post i answers, or None if it finds none."""
        ts, author = self.made[i]
        roll, rng = self.rng.random(), self.rng
        if roll < ANSWER_BACK and author in self.inbox:
            j = self.inbox.pop(author)
        elif roll < ANSWER_BACK + TO_FOLLOWEE and (theirs := self._followees_posts(author)):
            j = rng.choice(theirs)
        elif i:  # something posted just before, by anyone
            j = i - 1 - min(i - 1, int(rng.expovariate(1 / 50)))
        else:
            return None
        while j in self.latest_reply and rng.random() < JOIN_THREAD:
            j = self.latest_reply[j]
        if self.made[j][1] == author or self.made[j][0] >= ts:
            return None
        return j

    def _followees_posts(self, author: int) -> deque[int] | None:
        """Return the last few posts of someone author follows (at random), or None."""
        mine = self.following[author]
        return self.recent.get(mine[int(self.rng.random() * len(mine))]) if mine else None

    def add(self, i: int, parent: int | None) -> None:
        """Record post i (answering parent, or None)."""
        author = self.made[i][1]
        mine = self.recent.get(author)
        if mine is None:
            mine = self.recent[author] = deque(maxlen=3)
        mine.append(i)
        if parent is not None:
            self.latest_reply[parent] = i
            self.inbox[self.made[parent][1]] = i


def _draws(rng: random.Random, n: int, cum_weights: list[float]) -> Iterator[int]:
    """Yield indexes below n drawn by cum_weights, forever (drawn a thousand at a time)."""
    while True:
        yield from rng.choices(range(n), cum_weights=cum_weights, k=1000)


# Pictures in posts (issue 26): drawn here with Pillow (no downloads), a small pool
# processed once and stored anew for each post that shows one (files are never shared).
PICTURED_EVERY = 8  # one post in this many, among the newest PICTURED_NEWEST, has pictures
PICTURED_NEWEST = 2000
PICTURE_POOL = 8
SKIES = (((255, 183, 94), (255, 94, 98)), ((120, 180, 255), (200, 230, 255)),
         ((40, 40, 90), (120, 80, 160)), ((255, 220, 170), (255, 160, 120)))  # fmt: skip
HILLS = ((46, 125, 80), (90, 140, 60), (60, 90, 120), (150, 110, 70))
SKY_NAMES = ("a sunset", "a clear blue sky", "a violet dusk", "a peach morning")
HILL_NAMES = ("green hills", "olive hills", "blue mountains", "brown dunes")


def drawn_pictures(seed: int, n: int = PICTURE_POOL) -> list[tuple[bytes, str]]:
    """Return n landscapes drawn with Pillow (PNG bytes, small: seeding stays fast) and
    their alt text."""
    import io

    from PIL import Image, ImageDraw, ImageOps

    rng = random.Random(seed + 26)
    out = []
    for i in range(n):
        width, height = rng.choice(((720, 480), (480, 600), (600, 600), (800, 450)))
        sky, hill = i % len(SKIES), rng.randrange(len(HILLS))
        gradient = Image.linear_gradient("L").resize((width, height))
        image = ImageOps.colorize(gradient, SKIES[sky][0], SKIES[sky][1])
        draw = ImageDraw.Draw(image)
        sun = rng.randint(height // 12, height // 6)
        cx, cy = rng.randint(sun, width - sun), rng.randint(sun, height // 2)
        draw.ellipse([cx - sun, cy - sun, cx + sun, cy + sun], fill=(255, 240, 200))
        for layer in range(3):
            base = height * (0.55 + 0.12 * layer)
            points = [(0, height)] + [
                (x, base - rng.randint(0, height // 6)) for x in range(0, width + 120, 120)
            ] + [(width, height)]  # fmt: skip
            shade = tuple(max(0, c - 25 * layer) for c in HILLS[hill])
            draw.polygon(points, fill=shade)
        buffer = io.BytesIO()
        image.save(buffer, "PNG", compress_level=1)
        out.append((buffer.getvalue(), f"A drawing of {HILL_NAMES[hill]} under {SKY_NAMES[sky]}."))
    return out


def pictured_posts(count: int, seed: int) -> list[tuple[int, list[int]]]:
    """Return (post index, pool indices) for the posts that show pictures: one in
    PICTURED_EVERY of the newest PICTURED_NEWEST, with one to four pictures (mostly one)."""
    rng = random.Random(seed + 27)
    chosen = []
    for index in range(max(0, count - PICTURED_NEWEST), count):
        if rng.randrange(PICTURED_EVERY) == 0:
            k = rng.choices((1, 2, 3, 4), weights=(6, 2, 1, 1))[0]
            chosen.append((index, rng.sample(range(PICTURE_POOL), k)))
    return chosen
