"""The owner's console over HTTP: server-rendered pages (Jinja2, autoescaped), a
self-hosted stylesheet, no script; served by `mailfathom serve` on a listener of its own."""
