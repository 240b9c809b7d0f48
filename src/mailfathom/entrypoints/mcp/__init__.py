"""The MCP entrypoint: tool descriptors, argument conversion and result mapping only."""
