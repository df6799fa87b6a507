"""The one rule for a number a request names (an id, a page, a limit, a cursor): ASCII
digits, at most DIGITS_MAX of them. Every parser of such a number in the site and the API
goes through whole_number() or id_number().

Python's own tests each fail it: str.isdigit() takes "²", which int() refuses; int() takes
"١٢" (digits of another script), " 7" and "1_0", and refuses more than 4,300 digits with a
ValueError. Redis takes none of those as an integer."""

from __future__ import annotations

DIGITS_MAX = 19  # Redis's largest integer, 2**63 - 1, has 19 digits
ID_MAX = 2**63 - 1  # ids come from INCR: Redis's integer range
_NUMBER_LIMIT = 10**DIGITS_MAX


def whole_number(value: object) -> int | None:
    """Return value as an int when it is 1 to DIGITS_MAX ASCII digits (or an int, as JSON
    gives one, from 0 below 10**DIGITS_MAX), else None."""
    if isinstance(value, str):
        if 0 < len(value) <= DIGITS_MAX and value.isascii() and value.isdigit():
            return int(value)
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _NUMBER_LIMIT:
        return value
    return None


def id_number(value: object) -> int | None:
    """Return value as an id (a whole_number from 1 to ID_MAX), else None."""
    number = whole_number(value)
    return number if number is not None and 0 < number <= ID_MAX else None
