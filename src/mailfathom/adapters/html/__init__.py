"""HTML handling for what callers are shown."""
