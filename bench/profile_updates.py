"""Change display names at a set rate beside a bench: what remote `Update{Person}`
activities will do all day (issue 34, part 3).

Usage (from the repository root; bench/http_bench.py --profile-updates-per-minute N runs
it beside its wrk runs):
    .venv/bin/python bench/profile_updates.py --redis-url URL --per-minute 1000 [--seconds S]

Each update is `repo.profiles.update(user_id, display_name=...)`, the path the settings
page and update_credentials take, through this checkout's repository: its cost and what
it makes every web process read again are the checkout's own. The accounts are picked at
random (seeded) among all of them, as strangers' servers would send them; each gets a name
it did not have. Updates are spaced evenly on the clock (a late one does not make the next
early). Runs until --seconds pass, or SIGTERM / SIGINT, then prints one JSON line on
stdout: {"updates": n, "seconds": s, "per_minute": achieved, "late": updates sent more
than one interval late}.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from http_round_trips import setup_django  # noqa: E402  (bench/ is on the path)

from social import keys  # noqa: E402  (key names only: no Django needed)


class Stop(Exception):
    """SIGTERM or SIGINT asked the updater to stop."""


def on_signal(signum: int, frame) -> None:
    raise Stop(signal.Signals(signum).name)


def run(redis_url: str, per_minute: float, seconds: float | None, seed: int) -> dict:
    """Update display names at per_minute until seconds pass or a signal; return the tally."""
    setup_django(redis_url, "127.0.0.1")
    from social.repository import get_repository

    repo = get_repository()
    ids = sorted(int(i) for i in repo.r.hvals(keys.users()))
    if not ids:
        raise SystemExit("No accounts in the database.")
    rng = random.Random(seed)
    interval = 60.0 / per_minute
    started = time.monotonic()
    done = late = 0
    try:
        while seconds is None or time.monotonic() - started < seconds:
            due = started + done * interval
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            elif wait < -interval:
                late += 1
            user_id = rng.choice(ids)
            repo.profiles.update(user_id, display_name=f"Bench name {done}")
            done += 1
    except Stop:
        pass
    took = time.monotonic() - started
    return {
        "updates": done,
        "seconds": round(took, 1),
        "per_minute": round(done * 60 / took, 1) if took else 0.0,
        "late": late,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--per-minute", type=float, required=True, help="updates a minute")
    parser.add_argument("--seconds", type=float, default=None, help="stop after (default: never)")
    parser.add_argument("--seed", type=int, default=1, help="which accounts, in which order (1)")
    args = parser.parse_args()
    if args.per_minute <= 0:
        parser.error("--per-minute must be positive")
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    print(json.dumps(run(args.redis_url, args.per_minute, args.seconds, args.seed)), flush=True)


if __name__ == "__main__":
    main()
