"""The display-name index: people found by the start of any word of their display name, in
any script, ignoring case and accents (social/search_words.py folds and cuts the words).

Two keys in the {names} slot (a cluster runs each script below on one node):
keys.name_words, a sorted set of "<word> <id>" (scores 0, so in word order: the accounts
whose name has a word starting with "kath" are one ZRANGEBYLEX range, "kath 12" before
"katharine 9"), and keys.name_words_of, id -> the words held for it, so that a new name
takes the old one's members out and a search of several words checks the others.

Kept up by the writes that change a name, each queuing NAME_WORDS_SCRIPT on its own
pipeline (no round trip more): a profile saved (profiles.py, the client API's
update_credentials through it), a display name removed by staff, an account deleted (its
words go), seeding (bulk.py). `manage.py repair` sets every account's words from its user
hash (repair.py: a database written before the index, or restored from a backup). A
suspended account stays indexed: the account reader leaves it out of results while it is.

A search (NAME_SEARCH_SCRIPT) is one command: each term's ZLEXCOUNT (O(log n)), then the
rarest term's range, at most SCAN_CAP members, each account's words read once to check the
other terms, until `limit` accounts are found. Its cost is bounded whatever the number of
accounts; a term so common that more than SCAN_CAP names start with it may leave out
accounts the other terms would have kept (the query "a zhou" looks at the first SCAN_CAP
names that start with "zhou" or with "a", whichever are fewer).
"""

from __future__ import annotations

from collections.abc import Sequence

from social import keys
from social.search_words import words

from ..base import NamedReads, Pipe

SCAN_CAP = 500  # members of the rarest term's range a search looks at, at most

# KEYS: name_words, name_words_of. ARGV: the account's id, its words (space-separated; ""
# for none). Replaces the members of the words held for the id with the new ones; returns
# 1 when anything changed.
NAME_WORDS_SCRIPT = """
local old = redis.call('HGET', KEYS[2], ARGV[1])
if old == ARGV[2] or (not old and ARGV[2] == '') then return 0 end
if old then
  for word in string.gmatch(old, '%S+') do
    redis.call('ZREM', KEYS[1], word .. ' ' .. ARGV[1])
  end
end
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 1
end
for word in string.gmatch(ARGV[2], '%S+') do
  redis.call('ZADD', KEYS[1], 0, word .. ' ' .. ARGV[1])
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
"""

# KEYS: name_words, name_words_of. ARGV: the most ids wanted, the most members of the
# rarest term's range looked at, then the terms (folded). Returns the ids of accounts with
# a word starting with each term, in the rarest term's word order. The range is read 100
# members at a time, until enough are found: a word most names start with costs no more
# than it must.
NAME_SEARCH_SCRIPT = """
local limit, cap = tonumber(ARGV[1]), tonumber(ARGV[2])
local rarest, fewest = nil, nil
for i = 3, #ARGV do
  local n = redis.call('ZLEXCOUNT', KEYS[1], '[' .. ARGV[i], '[' .. ARGV[i] .. '\\255')
  if n == 0 then return {} end
  if not fewest or n < fewest then rarest, fewest = ARGV[i], n end
end
local found, seen, looked = {}, {}, 0
while looked < math.min(cap, fewest) and #found < limit do
  local range = redis.call('ZRANGEBYLEX', KEYS[1], '[' .. rarest, '[' .. rarest .. '\\255',
    'LIMIT', looked, math.min(100, cap - looked))
  if #range == 0 then break end
  looked = looked + #range
  for _, member in ipairs(range) do
    local id = string.match(member, ' (%d+)$')
    if id and not seen[id] then
      seen[id] = true
      local all = true
      if #ARGV > 3 then
        local held = ' ' .. (redis.call('HGET', KEYS[2], id) or '')
        for i = 3, #ARGV do
          if not string.find(held, ' ' .. ARGV[i], 1, true) then
            all = false
            break
          end
        end
      end
      if all then
        found[#found + 1] = id
        if #found >= limit then break end
      end
    end
  end
end
return found
"""


def name_words_of(display_name: str) -> str:
    """Return the words indexed for a display name, space-separated ("" for none)."""
    return " ".join(words(display_name))


def queue_name_words(pipe: Pipe, user_id: int, display_name: str) -> None:
    """Queue indexing user_id under display_name's words instead of its old ones ("": out
    of the index). A raw EVAL: a cluster pipeline refuses eval(), and routes this by its
    keys, both in the {names} slot."""
    pipe.execute_command(
        "EVAL",
        NAME_WORDS_SCRIPT,
        2,
        keys.name_words(),
        keys.name_words_of(),
        int(user_id),
        name_words_of(display_name),
    )


def queue_new_name_words(pipe: Pipe, user_id: int, display_name: str) -> None:
    """Queue indexing a new account that holds no words yet (seeding): plain writes, no
    script."""
    found = words(display_name)
    if found:
        pipe.zadd(keys.name_words(), {f"{word} {int(user_id)}": 0 for word in found})
        pipe.hset(keys.name_words_of(), str(int(user_id)), " ".join(found))


def queue_name_search(reads: NamedReads, name: str, terms: Sequence[str], limit: int) -> None:
    """Queue, as `name`, the ids of up to limit accounts whose display name has a word
    starting with each of terms (folded, at least one): a list of ids as bytes."""
    reads.execute_command(
        name,
        "EVAL",
        NAME_SEARCH_SCRIPT,
        2,
        keys.name_words(),
        keys.name_words_of(),
        limit,
        SCAN_CAP,
        *terms,
    )
