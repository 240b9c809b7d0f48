"""A person's answer before mail leaves: the question, the answer, and what follows from it."""
