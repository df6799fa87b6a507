"""The demo data set: deterministic users, a follow graph, posts and past logins.

Pure generation, no Redis: `manage.py seed` (social/management/commands/seed.py) decides
whether to write, and writes what this module returns through the repository's bulk methods.
The same Plan (same --seed) and the same `now` always give the same data.

What it makes: Faker names made valid (3-20 letters, digits, underscore; unique ignoring
case), one user `demo` who follows the most popular accounts, a Zipf-skewed follow graph (a
few accounts with thousands of followers when there are enough users), posts of 1-280
characters spread over recent weeks, oldest first (so ids increase with time), and a few past
logins per user from documentation IP ranges. Times are unix seconds up to `now`.

Use: build a Plan (choose_seed() when no seed is given), then call DemoData's methods in
this order, since they draw from one random stream: accounts(), then, with the accounts'
(id, signup time) as written, follows(), posts() and logins().
"""

from __future__ import annotations

import random
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

from faker import Faker

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "hello-retwis-42"  # passes Django's validators; printed for the user
DEMO_FOLLOWS = 25  # the demo account follows this many of the most popular users
DEMO_POSTS = 3
ZIPF_EXPONENT = 1.0  # follower counts: a few stars, a long tail with a handful each
MAX_BODY = 280
NAME_RE = re.compile(r"[^A-Za-z0-9_]")


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
    """Deterministic generator of names, a follow graph, posts and logins for one Plan."""

    def __init__(self, plan: Plan, now: int) -> None:
        self.plan = plan
        self.now = now
        self.rng = random.Random(plan.seed)
        self.fake = Faker()
        self.fake.seed_instance(plan.seed)
        self._popularity: list[float] = []

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
            followers = self.rng.choices(range(n), cum_weights=by_activity, k=k)
            followees = self.rng.choices(range(n), cum_weights=by_pop, k=k)
            for pair in zip(followers, followees):
                if pair[0] != pair[1] and pair not in pairs:
                    pairs[pair] = None
                    if len(pairs) == target:
                        break
        return [
            (users[a][0], users[b][0], self._between(max(users[a][1], users[b][1])))
            for a, b in pairs
        ]

    def popularity(self, n: int) -> list[float]:
        """Return each user's Zipf weight (1 for the most popular), over a shuffled rank."""
        if len(self._popularity) != n:
            ranks = list(range(n))
            random.Random(self.plan.seed + 1).shuffle(ranks)
            self._popularity = [1 / (rank + 1) ** ZIPF_EXPONENT for rank in ranks]
        return self._popularity

    def posts(self, users: list[tuple[int, int]]) -> list[tuple[int, str, int]]:
        """Return (author id, body, time) posts sorted by time, oldest first.

        Authors are drawn by a log-normal activity nudged towards popular accounts (so the
        demo's home feed is full); the demo account writes a few itself.
        """
        n, count = len(users), self.plan.posts
        weights = [self.rng.lognormvariate(0, 1) * (1 + 10 * p) for p in self.popularity(n)]
        authors = self.rng.choices(range(n), cum_weights=list(accumulate(weights)), k=count)
        authors[: min(DEMO_POSTS, count)] = [0] * min(DEMO_POSTS, count)
        texts = self.texts()
        made = [(self._between(users[a][1]), users[a][0], texts()) for a in authors]
        made.sort(key=lambda post: post[0])
        return [(author, body, ts) for ts, author, body in made]

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

    def texts(self) -> Callable[[], str]:
        """Return a cheap post-text maker over a pool pre-generated with Faker."""
        fake, rng = self.fake, self.rng
        sentences = [fake.sentence(nb_words=rng.randint(3, 16)) for _ in range(3000)]
        sentences += [fake.catch_phrase() + "." for _ in range(300)]
        sentences += [fake.bs().capitalize() + "!" for _ in range(300)]
        tags = ["#" + word for word in fake.words(nb=80)]

        def make() -> str:
            body = rng.choice(sentences)
            for _ in range(rng.choice((0, 0, 0, 1, 1, 2, 3))):
                more = rng.choice(sentences)
                if len(body) + 1 + len(more) > MAX_BODY:
                    break
                body += " " + more
            if rng.random() < 0.15 and len(body) + 30 < MAX_BODY:
                body += " " + rng.choice(tags)
            return body[:MAX_BODY]

        return make

    def _between(self, start: int) -> int:
        """Return a random unix time between start and now."""
        return self.rng.randint(min(start, self.now), self.now)
