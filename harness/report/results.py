"""The results format, in one place: verdict words, one request's record, the tally,
the clip encoding, what a run says about its caches, and reading and writing
``results.json`` so that a crash never leaves one half-written.

``run`` writes a :class:`Results`; ``report``, ``compare``, ``bench`` and the tests
read it through the same types. A file that does not hold this format is refused
with a one-line :class:`ResultsError`.
"""

import base64
import contextlib
import dataclasses
import io
import json
import os
import signal
import threading
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cache_impl import Level
from harness.files import write_atomic
from repro.scenarios import INCONCLUSIVE

# A request's verdict. Inconclusive: its prompt source did not land on a freed
# address, so it proves nothing either way and is never counted as clean.
CONTAMINATED, CLEAN = "contaminated", "clean"
VERDICTS = (CONTAMINATED, CLEAN, INCONCLUSIVE)

RUN_KINDS = ("repro", "compare")  # which command wrote a run; each kind has its own "latest" pointer


class ResultsError(ValueError):
    """A results file that is not in this format. The message is one line."""


def _matches(value, kind) -> bool:
    """Whether a JSON value fits a field's annotation (str, int, float, bool, dict,
    list[...], X | None)."""
    if isinstance(kind, types.UnionType):
        return any(_matches(value, k) for k in typing.get_args(kind))
    if kind is type(None):
        return value is None
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    origin = typing.get_origin(kind) or kind
    if not isinstance(value, origin):
        return False
    args = typing.get_args(kind)
    if origin is list and args:
        return all(_matches(v, args[0]) for v in value)
    return True


def _from_dict(cls, data, where: str):
    """Build dataclass ``cls`` from a JSON object, checking every field's type."""
    if not isinstance(data, dict):
        raise ResultsError(f"{where}: expected an object, got {type(data).__name__}")
    values = {}
    for f in dataclasses.fields(cls):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if f.name not in data:
            if required:
                raise ResultsError(f"{where}: missing field {f.name!r}")
            continue
        if not _matches(data[f.name], f.type):
            raise ResultsError(f"{where}: field {f.name!r} should be {_type_name(f.type)}, "
                               f"got {type(data[f.name]).__name__}")
        values[f.name] = data[f.name]
    return cls(**values)


def _type_name(kind) -> str:
    return getattr(kind, "__name__", None) or str(kind).replace("typing.", "")


@dataclass(frozen=True)
class Record:
    """One request served by one cache, compared with its cache-free reference."""

    model: str
    scenario: str
    level: str  # the scenario's level, "L0".."L3"
    cache: str
    device: str
    seed: int  # the case's seed
    request_seed: int  # the noise seed of this request
    request: int  # index in the case's back-to-back requests
    prompt: str
    address_reused: bool  # the prompt source landed on an address an earlier source freed
    addresses: dict  # role -> hex address of its prompt source
    reused_from: dict  # role -> which earlier source freed that address (None: fresh)
    false_hits: int  # K/V lookups that returned another request's K/V
    kv_lookups: int
    kv_equal: bool
    latents_equal: bool
    max_abs_err: float
    ssim_per_frame: list[float]
    ssim_mean: float
    ssim_min: float
    psnr: float | None  # None when identical
    verdict: str
    cache_stats: dict = field(default_factory=dict)
    entries_after: int = 0
    entries_dropped: int = 0
    allocator_events: dict | None = None  # CUDA only: the caching allocator's trace at the addresses

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ResultsError(f"record verdict {self.verdict!r}: expected one of {', '.join(VERDICTS)}")
        _check_level(self.level, "record level")

    @property
    def conclusive(self) -> bool:
        return self.verdict != INCONCLUSIVE

    @property
    def contaminated(self) -> bool:
        return self.verdict == CONTAMINATED

    @property
    def prompt_role(self) -> str:
        """The role that carries the request's own prompt (the first one)."""
        return next(iter(self.addresses))

    def to_json(self) -> dict:
        out = dataclasses.asdict(self)
        if self.allocator_events is None:
            del out["allocator_events"]
        return out


@dataclass(frozen=True)
class CacheInfo:
    """What a run knows about one cache spec, so a report never imports it again."""

    spec: str
    declared_level: str | None  # "L0".."L3" as the cache states it; None when it states none
    provenance: str  # module.qualname of the class or factory, and its file

    def __post_init__(self):
        if self.declared_level is not None:
            _check_level(self.declared_level, "declared level")


def _check_level(text: str, what: str) -> None:
    try:
        Level.parse(text)
    except ValueError as exc:
        raise ResultsError(f"{what}: {exc}") from None


@dataclass(frozen=True)
class ClipDesign:
    frames: str  # encode_clip() of (T, H, W, 3) uint8
    verdict: str


@dataclass(frozen=True)
class Clip:
    """One showcased request: the reference and every design's frames."""

    model: str
    scenario: str
    level: str
    seed: int
    request: int
    prompt: str
    previous_prompt: str | None
    reference: str
    designs: dict  # cache spec -> ClipDesign

    def __post_init__(self):
        _check_level(self.level, "clip level")

    def design(self, cache: str) -> ClipDesign | None:
        return self.designs.get(cache)


@dataclass
class Results:
    """Everything ``results.json`` holds."""

    title: str
    kind: str  # one of RUN_KINDS
    environment: dict
    plan: dict  # caches, models, scenarios, seeds, requests, preset, steps, prompts
    caches: dict  # spec -> CacheInfo, in the plan's order
    pair: dict  # {"before": spec, "after": spec}: the headline pair of the report
    models: dict = field(default_factory=dict)  # model name -> what it is
    records: list = field(default_factory=list)  # Record
    clips: dict = field(default_factory=dict)  # clip id -> Clip
    complete: bool = False

    def to_json(self) -> dict:
        return {"title": self.title, "kind": self.kind, "environment": self.environment, "plan": self.plan,
                "caches": {k: dataclasses.asdict(v) for k, v in self.caches.items()}, "pair": self.pair,
                "models": self.models, "records": [r.to_json() for r in self.records],
                "clips": {k: dataclasses.asdict(c) for k, c in self.clips.items()},
                "complete": self.complete}

    @classmethod
    def from_json(cls, data) -> "Results":
        head = _from_dict(_ResultsHead, data, "results")
        if head.kind not in RUN_KINDS:
            raise ResultsError(f"results: kind {head.kind!r}, expected one of {', '.join(RUN_KINDS)}")
        caches = {k: _from_dict(CacheInfo, v, f"results: cache {k!r}") for k, v in head.caches.items()}
        records = [_from_dict(Record, r, f"results: record {i}") for i, r in enumerate(head.records)]
        if not records:
            raise ResultsError("results hold no records to report")
        unknown = sorted({r.cache for r in records} - caches.keys())
        if unknown:
            raise ResultsError(f"results: records name caches the run does not describe: {', '.join(unknown)}")
        if set(head.pair) != {"before", "after"} or not set(head.pair.values()) <= caches.keys():
            raise ResultsError("results: pair must name a before and an after cache of the run")
        clips = {}
        for key, c in head.clips.items():
            clip = _from_dict(Clip, c, f"results: clip {key!r}")
            designs = {d: _from_dict(ClipDesign, v, f"results: clip {key!r} design {d!r}")
                       for d, v in clip.designs.items()}
            clips[key] = dataclasses.replace(clip, designs=designs)
        return cls(title=head.title, kind=head.kind, environment=head.environment, plan=head.plan, caches=caches,
                   pair=head.pair, models=head.models, records=records, clips=clips, complete=head.complete)

    def records_of(self, model: str | None = None, scenario: str | None = None,
                   cache: str | None = None) -> list:
        return [r for r in self.records if (model is None or r.model == model)
                and (scenario is None or r.scenario == scenario) and (cache is None or r.cache == cache)]

    def rows(self) -> list[tuple[str, str]]:
        """(model, scenario) pairs in the order the records have them."""
        return list(dict.fromkeys((r.model, r.scenario) for r in self.records))

    def scenario_level(self, scenario: str) -> str:
        return next(r.level for r in self.records if r.scenario == scenario)


@dataclass
class _ResultsHead:
    """The top level of results.json, checked before its parts are."""

    title: str
    kind: str
    environment: dict
    plan: dict
    caches: dict
    pair: dict
    records: list
    models: dict = field(default_factory=dict)
    clips: dict = field(default_factory=dict)
    complete: bool = False


@dataclass(frozen=True)
class Tally:
    requests: int
    contaminated: int
    inconclusive: int
    ssim_min: float

    @property
    def conclusive(self) -> int:
        return self.requests - self.inconclusive


def tally(records: list) -> Tally:
    """Counts over some request records: contaminated, inconclusive, all, lowest SSIM."""
    return Tally(requests=len(records), contaminated=sum(r.contaminated for r in records),
                 inconclusive=sum(not r.conclusive for r in records),
                 ssim_min=min((r.ssim_min for r in records), default=1.0))


def natural_reuse_rate(records: list, model: str) -> tuple[int, int] | None:
    """(requests whose prompt source got a freed address, requests after the first) in
    the natural scenario, for one model; None when it did not run."""
    later = [r for r in records if r.model == model and r.scenario == "natural_reuse" and r.request > 0]
    return (sum(r.address_reused for r in later), len(later)) if later else None


# --- clips ---------------------------------------------------------------------------

def encode_clip(frames) -> str:
    """(T, H, W, 3) uint8 frames (tensor or array) -> base64 of a compressed .npy, so
    results.json alone can re-render the report's videos."""
    buf = io.BytesIO()
    np.savez_compressed(buf, frames=np.asarray(frames))
    return base64.b64encode(buf.getvalue()).decode()


def decode_clip(text: str) -> np.ndarray:
    try:
        frames = np.load(io.BytesIO(base64.b64decode(text, validate=True)))["frames"]
    except Exception as exc:  # noqa: BLE001 - any failure means the clip is not ours
        raise ResultsError(f"a clip in results.json does not decode: {type(exc).__name__}") from None
    if frames.dtype != np.uint8 or frames.ndim != 4 or frames.shape[-1] != 3:
        raise ResultsError(f"a clip in results.json is {frames.dtype} {frames.shape}, not (T, H, W, 3) uint8")
    return frames


# --- files ---------------------------------------------------------------------------

def load(folder: Path) -> Results:
    """``folder/results.json`` as :class:`Results`; a :class:`ResultsError` (one line)
    when it is missing, unreadable or not in this format."""
    path = Path(folder) / "results.json"
    if not path.is_file():
        raise ResultsError(f"no results.json in {folder}")
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path} is not valid JSON: {exc}") from None
    try:
        return Results.from_json(data)
    except ResultsError as exc:
        raise ResultsError(f"{path}: {exc}") from None


def save(folder: Path, results: Results) -> None:
    write_json(Path(folder) / "results.json", results.to_json())


@contextlib.contextmanager
def uninterrupted():
    """Hold Ctrl-C (SIGINT) until the block ends, so that what it renames into place
    (several report files, a ``latest`` pointer) lands whole; the interrupt is then
    delivered to the handler that was in place. Python handles signals in the main
    thread only: elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if pending and callable(previous):
            previous(signal.SIGINT, None)


def write_json(path: Path, obj) -> None:
    write_atomic(path, json.dumps(obj, indent=1, allow_nan=False) + "\n")


def point_latest(run_dir: Path, kind: str = "repro") -> None:
    """Make ``<run_dir>/../latest`` (``latest-compare`` for compare runs) a symlink to
    ``run_dir``, replaced atomically: a compare never moves the pointer to the last
    ``make repro``."""
    link = run_dir.parent / ("latest" if kind == "repro" else f"latest-{kind}")
    tmp = run_dir.parent / f".{link.name}.{os.getpid()}"
    with uninterrupted():
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        tmp.symlink_to(run_dir.name)
        os.replace(tmp, link)
