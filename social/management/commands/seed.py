"""Fill Redis with realistic demo data, through the repository.

Why it exists: a fresh checkout needs something to look at (the launcher runs
`seed --if-empty` on first start and prints the demo login), and performance work needs a
big, skewed data set (`seed --users 10000 --follows 500000 --posts 200000`). Every write goes
through the repository's bulk methods, which reuse the site's own account and post write
paths, so seeded data has exactly the layout the site writes.

What it makes: Faker names made valid (3-20 letters, digits, underscore; unique ignoring
case), one user `demo` who follows the most popular accounts, a Zipf-skewed follow graph (a
few accounts with thousands of followers when there are enough users), posts of 1-280
characters spread over recent weeks with ids increasing with time, and home feeds rebuilt from
the graph. Every seeded account shares one password hash: hashing each would take hours.
"""

from __future__ import annotations

import random
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

from django.contrib.auth.hashers import make_password
from django.core.management.base import BaseCommand, CommandError, CommandParser
from faker import Faker

from social.redis_client import UNAVAILABLE
from social.repository import Repository, get_repository

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "hello-retwis-42"  # passes Django's validators; printed for the user
DEMO_FOLLOWS = 25  # the demo account follows this many of the most popular users
DEMO_POSTS = 3
ZIPF_EXPONENT = 1.0  # follower counts: a few stars, a long tail with a handful each
MAX_BODY = 280
NAME_RE = re.compile(r"[^A-Za-z0-9_]")


@dataclass(frozen=True)
class Plan:
    """What to generate."""

    users: int
    follows: int
    posts: int
    days: int
    seed: int


class DemoData:
    """Deterministic generator of names, a follow graph and posts for one Plan."""

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


class Command(BaseCommand):
    help = (
        "Fill Redis with demo data (users, a skewed follow graph, posts, home feeds) through "
        "the repository. Refuses a non-empty database unless --force."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--users", type=int, default=200, help="accounts (incl. demo)")
        parser.add_argument("--follows", type=int, default=2000, help="follow relations")
        parser.add_argument("--posts", type=int, default=3000, help="posts")
        parser.add_argument("--days", type=int, default=28, help="spread over this many days")
        parser.add_argument("--seed", type=int, help="random seed, for a repeatable data set")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument(
            "--force", action="store_true", help="write even if the database holds data"
        )
        mode.add_argument(
            "--if-empty",
            action="store_true",
            help="seed only an empty database; otherwise say so and exit 0 (the launcher)",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="generate and report, write nothing"
        )

    def handle(self, *args, **options) -> None:
        plan = self._plan(options)
        self.verbosity = options["verbosity"]
        repo = get_repository()
        try:
            if not self._may_write(repo, options):
                return
            self._seed(repo, plan, dry_run=options["dry_run"])
        except UNAVAILABLE as exc:
            raise CommandError(f"Redis is unreachable ({exc}); check REDIS_URL.") from exc

    def _plan(self, options: dict) -> Plan:
        """Validate the sizes and return the Plan."""
        for name in ("users", "follows", "posts", "days"):
            if options[name] < 0:
                raise CommandError(f"--{name} must not be negative.")
        if options["users"] < 1 or options["days"] < 1:
            raise CommandError("--users and --days must be at least 1.")
        seed = options["seed"] if options["seed"] is not None else secrets.randbelow(10**6)
        return Plan(options["users"], options["follows"], options["posts"], options["days"], seed)

    def _may_write(self, repo: Repository, options: dict) -> bool:
        """Return whether to go on; refuse (CommandError) a non-empty database without --force."""
        if not repo.has_data() or options["force"]:
            return True
        users = repo.count_users()
        if options["if_empty"]:
            self._say(f"Redis already holds data ({users:,} users): not seeding.")
            if repo.user_id_for_name(DEMO_USERNAME) is not None:
                self._say(f"Demo login (unless changed): {DEMO_USERNAME} / {DEMO_PASSWORD}")
            return False
        raise CommandError(
            f"Redis already holds data ({users:,} users; next_user_id exists). Point REDIS_URL "
            "at an empty database, or pass --force to add demo data to this one."
        )

    def _seed(self, repo: Repository, plan: Plan, *, dry_run: bool) -> None:
        """Generate the data set and write it stage by stage, reporting each stage's time."""
        started = time.monotonic()
        self._say(
            f"Seeding {plan.users:,} users, {plan.follows:,} follows, {plan.posts:,} posts "
            f"over {plan.days} days (--seed {plan.seed}){' [dry run]' if dry_run else ''}."
        )
        data = DemoData(plan, now=int(time.time()))
        accounts = data.accounts()
        if dry_run:
            users = [(i, ts) for i, (_, ts) in enumerate(accounts, 1)]
        else:
            users = self._stage("users", len(accounts), lambda p: self._create(repo, accounts, p))
        follows = data.follows(users)
        posts = data.posts(users)
        if dry_run:
            self._say(
                f"Dry run: would write {len(users):,} users, {len(follows):,} follows and "
                f"{len(posts):,} posts, then {len(users):,} home feeds. Nothing was written."
            )
            return
        self._stage("follows", len(follows), lambda p: repo.add_follows_bulk(follows, progress=p))
        self._stage("posts", len(posts), lambda p: repo.create_posts_bulk(posts, progress=p))
        logins = data.logins(users)
        self._stage("logins", len(logins), lambda p: repo.record_logins_bulk(logins))
        ids = [user_id for user_id, _ in users]
        self._stage("home feeds", len(ids), lambda p: repo.rebuild_home_feeds(ids, progress=p))
        self._say(f"Done in {time.monotonic() - started:.1f}s.", self.style.SUCCESS)
        self._report_demo(repo, accounts, users)

    def _create(self, repo: Repository, accounts, progress) -> list[tuple[int, int]]:
        """Create the accounts; return (id, signup time) of those created (names may clash)."""
        password_hash = make_password(DEMO_PASSWORD)  # once: hashing per user takes hours
        created = repo.create_users_bulk(accounts, password_hash, progress=progress)
        if len(created) < len(accounts):
            self._say(f"  {len(accounts) - len(created):,} names were taken already; skipped.")
        return [(user.id, user.signup_time or 0) for user in created]

    def _report_demo(self, repo: Repository, accounts, users) -> None:
        """Print the demo login (or why there is none)."""
        demo_id = repo.user_id_for_name(DEMO_USERNAME)
        if users and demo_id == users[0][0]:
            self._say(
                f"Demo login: {DEMO_USERNAME} / {DEMO_PASSWORD} "
                f"(every seeded user, e.g. {accounts[-1][0]}, has this password)."
            )
        else:
            self._say(
                f"User {DEMO_USERNAME!r} existed already; seeded users' password is "
                f"{DEMO_PASSWORD!r}."
            )

    def _stage(self, name: str, total: int, work: Callable[[Callable[[int], None]], object]):
        """Run one stage with throttled progress lines; report its count and time."""
        started = last = time.monotonic()

        def progress(done: int) -> None:
            nonlocal last
            now = time.monotonic()
            if self.verbosity >= 2 or (self.verbosity >= 1 and now - last >= 2):
                last = now
                self._say(f"  {name}: {done:,}/{total:,}")

        result = work(progress)
        self._say(f"  {name:<10} {total:>9,} in {time.monotonic() - started:5.1f}s")
        return result

    def _say(self, message: str, style: Callable[[str], str] | None = None) -> None:
        """Write a line at verbosity >= 1."""
        if self.verbosity >= 1:
            self.stdout.write(style(message) if style else message)
            self.stdout.flush()
