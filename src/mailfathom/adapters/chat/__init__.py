"""Chat-completions endpoints the answering run speaks to."""
