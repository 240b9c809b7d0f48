"""OAuth 2.0 for mail accounts: the token endpoint, access tokens, and the grants."""
