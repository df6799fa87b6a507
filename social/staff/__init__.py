"""Staff pages (dashboard, accounts, posts, reports, audit log) and public reporting."""
