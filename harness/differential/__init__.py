"""The differential check and what builds on it: ``check`` (the same requests under an
allocator that reuses addresses and one that never does, compared), ``localise`` and
``pinpoint`` (where two runs part), ``hunt`` (every configuration a library ships, through
the check) and ``upstream`` (a folder per finding for the library's maintainers)."""

# The defaults and limits the command line shows, here where it reads them without importing
# torch. An id()-keyed cache follows the Python object, not its memory: it is hit with a stale
# entry only where the next request's key tensor object gets the id of the last one's, which
# depends on how many objects of its size were made and freed in between. For a function, the
# normal run is served again with its freed object slots shifted by each of ID_SHIFTS
# (``repro.stream.serve_call``); any of these runs differing from the never-reuse run is a divergence.
ID_SHIFTS = (1, 2, 3, -1, -2)
MAX_ID_SHIFT = 64
DEFAULT_SEEDS = (0, 1, 2)
DEFAULT_REQUESTS = 4
DEFAULT_CALL_TIMEOUT = 120.0
from repro.recipes import LIBRARIES as _RECIPE_LIBRARIES  # noqa: E402 - no torch imported there

LIBRARIES = ("diffusers", *_RECIPE_LIBRARIES)  # what ``hunt`` knows how to drive
HUNT_SEEDS, HUNT_REQUESTS = ("0",), "3"  # what a hunt cell serves, and its script for upstream replays
