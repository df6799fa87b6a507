"""The read path: every list of posts and of accounts, for a reader, and the policy that decides."""
