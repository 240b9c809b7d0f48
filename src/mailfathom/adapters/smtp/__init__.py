"""Handing mail to submission servers."""
