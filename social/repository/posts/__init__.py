"""Posts and what hangs on them: writing and deleting, reposts, likes,
pictures, fan-out, tags, trending."""
