"""Accounts: users and their profiles, passwords and deletion, e-mail and
recovery, names and the directory for apps."""
