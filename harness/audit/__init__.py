"""The audit of one cache: ``runner`` (the scenario catalogue, then the probes and the
search, and the level reached), ``probes`` (every obligation in situations covering every
pair of property values), ``search`` (random histories beyond them), ``conformance`` (the
same checks as a pytest suite for a user's cache), and how we know they catch bugs:
``mutants`` (broken variants of the hardened design) and ``selfcheck`` (their kill rate)."""
