"""Long-running workers a command starts."""
