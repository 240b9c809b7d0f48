"""Vectors as the store keeps them, and the exact scan over them (numpy)."""
