"""The owner's console: signing the owner in and out, the sessions and their CSRF secrets,
the bounds on wrong passwords, and what the overview counts."""
