"""The MCP endpoint as an OAuth 2.1 resource server: checking bearer tokens and deciding whom
a token is served as."""
