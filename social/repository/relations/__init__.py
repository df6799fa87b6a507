"""Relations between accounts: follows, blocks and mutes, word filters."""
