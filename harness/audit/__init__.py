"""The audit of one cache: ``runner`` (the scenario catalogue, then the probes and the
search, and the level reached), ``probes`` (every obligation in situations covering every
pair of property values), ``search`` (random histories beyond them), ``conformance`` (the
same checks as a pytest suite for a user's cache), and how we know they catch bugs:
``mutants`` (broken variants of the hardened design) and ``selfcheck`` (their kill rate)."""

# The defaults the command line shows, here where it reads them without importing torch.
DEFAULT_BUDGET = 40.0  # seconds of probes and search: with the catalogue, an audit stays under a minute on 2 cores
GENERATED = 200  # generated mutants selfcheck audits by default
