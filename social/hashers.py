"""The password hasher new hashes are made with: Django's Argon2id, sized for a web worker.

Django's own Argon2PasswordHasher asks for 100 MiB and 8 lanes a hash: on a 2-core server
that is 0.2-0.45 s of both cores per login, and twenty logins a second would stall every
page behind them (docs/benchmarks.md, "Logins"). These are OWASP's Argon2id parameters
(19 MiB, 2 passes, 1 lane): about 35 ms of one core. Hashes made with other parameters
(Django's defaults included) are re-made with these at the next login (`must_update`).
"""

from __future__ import annotations

from django.contrib.auth.hashers import Argon2PasswordHasher


class WorkerArgon2PasswordHasher(Argon2PasswordHasher):
    """Argon2id with 19 MiB of memory, 2 passes and 1 lane (OWASP's recommendation)."""

    time_cost = 2
    memory_cost = 19 * 1024  # KiB
    parallelism = 1
