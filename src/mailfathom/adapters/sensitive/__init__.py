"""Detectors of sensitive content, one module per category, and the scanner that runs the
categories a deployment switched on. Candidates are found by pattern and kept only when a
maintained validator (python-stdnum) or a maintained secrets rule set (detect-secrets) confirms
them, so a look-alike (an order number, a phone number, a date) is left as written."""
