"""The contact book: who the people in the owner's mail are, and the six tools over it."""
