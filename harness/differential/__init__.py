"""The differential check and what builds on it: ``check`` (the same requests under an
allocator that reuses addresses and one that never does, compared), ``localise`` and
``pinpoint`` (where two runs part), ``hunt`` (every configuration a library ships, through
the check) and ``upstream`` (a folder per finding for the library's maintainers)."""
