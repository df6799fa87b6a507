"""The client API's own data: OAuth apps, codes and tokens; the server's rules and description."""
