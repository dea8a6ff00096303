"""The before/after report: ``report.md`` for a pull request, a self-contained
``report.html``, the headline pair as MP4 (H.264) and GIF, SSIM plots, all from
``results.json`` alone.

It leads with the question a reviewer asks of a cache fix: the old cache (before)
against the fix (after) on the scenarios the fix claims, with per-frame SSIM, then
each design's verdict against the level it declares. Both documents are rendered
from one list of blocks, so they always say the same thing. Every file is rendered
in memory first and written only when all of them are ready: a failure leaves no
partial report.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import imageio.v3 as iio
import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image, ImageDraw, ImageFont  # noqa: E402

from cache_impl import Level  # noqa: E402
from harness.report.metrics import frame_ssim  # noqa: E402
from harness.report.results import (CLEAN, CONTAMINATED, INCONCLUSIVE, Clip, Record, Results, ResultsError,  # noqa: E402
                             decode_clip, load, natural_reuse_rate, tally, uninterrupted)
from repro.models import REAL_MODELS  # noqa: E402

MIN_TILE_WIDTH = 256  # every clip is magnified (whole pixels) to at least this width
FONT_SIZE = 14
LINE_HEIGHT = 18
PAD = 4
GAP = 6  # between tiles
FRAME_MS = 250  # 4 frames a second, GIF and MP4 alike
GIF_COLOURS = 64
MP4_MISSING = "MP4 not written: imageio-ffmpeg is not installed (pip install imageio-ffmpeg)"


class ReportError(ValueError):
    """The report cannot be written (one line)."""


# --- blocks: one content model, two renderers -----------------------------------

@dataclass
class Heading:
    text: str
    level: int = 2


@dataclass
class Para:
    text: str


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass
class Figure:
    path: str  # relative to the report folder
    alt: str


@dataclass
class Video:
    path: str  # an MP4 relative to the report folder
    poster: str  # a GIF of the same clip: what Markdown shows, and the HTML's fallback
    alt: str


@dataclass
class Code:
    text: str


def render_markdown(blocks) -> str:
    out = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append("#" * b.level + " " + b.text)
        elif isinstance(b, Para):
            out.append(b.text)
        elif isinstance(b, Table):
            cell = lambda s: str(s).replace("|", "\\|")  # noqa: E731
            out.append("| " + " | ".join(cell(h) for h in b.header) + " |")
            out.append("|" + "---|" * len(b.header))
            out.extend("| " + " | ".join(cell(c) for c in row) + " |" for row in b.rows)
        elif isinstance(b, Figure):
            out.append(f"![{b.alt}]({b.path})")
        elif isinstance(b, Video):
            out.append(f"![{b.alt}]({b.poster})" + (f"\n\nVideo: [{b.path}]({b.path})" if b.path else ""))
        elif isinstance(b, Code):
            out.append("```\n" + b.text + "\n```")
        out.append("")
    return "\n".join(out)


MIME = {"gif": "image/gif", "png": "image/png", "mp4": "video/mp4"}


def _data_uri(name: str, files: dict[str, bytes]) -> str:
    return f"data:{MIME[name.rsplit('.', 1)[1]]};base64," + base64.b64encode(files[name]).decode()


HTML_STYLE = """
body { font-family: sans-serif; max-width: 70em; margin: 1em auto; padding: 0 1em; color: #111; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #eee; }
td.bad { background: #fdd; } td.good { background: #dfd; } td.unsure { background: #ffd; }
img, video { max-width: 100%; image-rendering: pixelated; }
pre { background: #f4f4f4; padding: 0.5em; overflow-x: auto; white-space: pre-wrap; }
@media print { img, video { page-break-inside: avoid; } }
"""

# What the real models' frames are, said wherever they are shown.
RANDOM_WEIGHTS = ("The real model is diffusers' own architecture at a tiny test configuration with seeded random "
                  "weights (no trained weights are loaded): its frames are patterns, not pictures, and what they "
                  "show is whether a request's output equals its cache-free reference.")

# How a table cell is coloured, by the words it starts with.
CELL_CLASSES = {CONTAMINATED: "bad", "fails": "bad", CLEAN: "good", "meets": "good",
                INCONCLUSIVE: "unsure", "not shown": "unsure"}


def render_html(blocks, files: dict[str, bytes], title: str) -> str:
    esc = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{esc(title)}</title><style>{HTML_STYLE}</style></head><body>"]
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"<h{b.level}>{esc(b.text)}</h{b.level}>")
        elif isinstance(b, Para):
            out.append(f"<p>{esc(b.text)}</p>")
        elif isinstance(b, Table):
            out.append("<table><thead><tr>" + "".join(f"<th>{esc(str(h))}</th>" for h in b.header)
                       + "</tr></thead><tbody>")
            for row in b.rows:
                cells = []
                for c in row:
                    text = str(c)
                    cls = next((v for k, v in CELL_CLASSES.items() if text.startswith(k)), "")
                    cells.append(f'<td class="{cls}">{esc(text)}</td>' if cls else f"<td>{esc(text)}</td>")
                out.append("<tr>" + "".join(cells) + "</tr>")
            out.append("</tbody></table>")
        elif isinstance(b, Figure):
            out.append(f'<p><img src="{_data_uri(b.path, files)}" alt="{esc(b.alt)}"></p>')
        elif isinstance(b, Video):
            if b.path:
                out.append(f'<p><video controls autoplay loop muted playsinline title="{esc(b.alt)}" '
                           f'src="{_data_uri(b.path, files)}"></video></p>')
            else:
                out.append(f'<p><img src="{_data_uri(b.poster, files)}" alt="{esc(b.alt)}"></p>')
        elif isinstance(b, Code):
            out.append(f"<pre>{esc(b.text)}</pre>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# --- pictures ---------------------------------------------------------------------

def _font():
    return ImageFont.load_default(size=FONT_SIZE)


def tile_scale(width: int) -> int:
    """Whole-pixel magnification that makes a clip at least MIN_TILE_WIDTH wide."""
    return max(1, -(-MIN_TILE_WIDTH // width))


def wrap_label(text: str, width: int, font=None) -> list[str]:
    """Lines of ``text`` that each fit ``width`` pixels, nothing cut: breaks after spaces,
    dots, colons and underscores (a long ``package.module:Class`` spec wraps at its dots),
    and inside a word only when the word alone is wider than the tile."""
    font = font or _font()
    fits = lambda s: font.getlength(s) <= width  # noqa: E731
    lines = []
    for paragraph in text.split("\n"):
        line = ""
        for piece in re.findall(r"[^ .:_]*[ .:_]?", paragraph):
            if not piece:
                continue
            if fits(line + piece.rstrip()):
                line += piece
                continue
            if line:
                lines.append(line.rstrip())
                line = ""
            while not fits(piece.rstrip()):  # one word wider than the tile: break it, keep every character
                cut = max(1, max(i for i in range(1, len(piece) + 1) if fits(piece[:i]) or i == 1))
                lines.append(piece[:cut])
                piece = piece[cut:]
            line = piece
        lines.append(line.rstrip())
    return lines


def side_by_side(panels: list[tuple[str, np.ndarray]], captions: list[list[str]] | None = None) -> list[np.ndarray]:
    """Labelled clips side by side, frames in step: one (H, W, 3) image per frame.
    ``panels``: ``(label, frames)``; ``captions[i][t]``: text above panel i's frame t,
    under its label (a playing video's controls cover the bottom of the picture)."""
    count = min(len(frames) for _, frames in panels)
    font = _font()
    scale = tile_scale(max(frames.shape[2] for _, frames in panels))
    width = max(frames.shape[2] for _, frames in panels) * scale
    height = max(frames.shape[1] for _, frames in panels) * scale
    labels = [wrap_label(label, width - 2 * PAD, font) for label, _ in panels]
    caption_y = max(len(lines) for lines in labels) * LINE_HEIGHT + 2 * PAD
    top = caption_y + (LINE_HEIGHT + PAD if captions else 0)
    canvas_w = len(panels) * width + GAP * (len(panels) - 1)
    canvas_w += canvas_w % 2  # H.264 (yuv420p) needs even sizes
    canvas_h = top + height + PAD
    canvas_h += canvas_h % 2
    out = []
    for t in range(count):
        canvas = Image.new("RGB", (canvas_w, canvas_h), "white")
        draw = ImageDraw.Draw(canvas)
        for i, (_, frames) in enumerate(panels):
            x = i * (width + GAP)
            frame = Image.fromarray(frames[t])
            canvas.paste(frame.resize((frame.width * scale, frame.height * scale), Image.NEAREST), (x, top))
            for j, line in enumerate(labels[i]):
                draw.text((x + PAD, PAD + j * LINE_HEIGHT), line, fill="black", font=font)
            if captions and captions[i]:
                draw.text((x + PAD, caption_y), captions[i][t], fill="black", font=font)
        out.append(np.asarray(canvas))
    return out


def encode_gif(frames: list[np.ndarray]) -> bytes:
    # A small palette without dithering: flat shapes and text, and dithering would
    # triple the file for no visible gain.
    flat = [np.asarray(Image.fromarray(f).quantize(GIF_COLOURS, method=Image.Quantize.FASTOCTREE,
                                                  dither=Image.Dither.NONE).convert("RGB"))
            for f in frames]
    buf = io.BytesIO()
    iio.imwrite(buf, np.stack(flat), extension=".gif", duration=FRAME_MS, loop=0)
    return buf.getvalue()


def ffmpeg_path() -> str | None:
    """The ffmpeg binary that imageio-ffmpeg ships, or None when it is not installed."""
    try:
        import imageio_ffmpeg
    except ImportError:
        return None
    return imageio_ffmpeg.get_ffmpeg_exe()


def encode_mp4(frames: list[np.ndarray], ffmpeg: str) -> bytes:
    """H.264 in MP4 (yuv420p, moov first): plays inline in browsers and in GitHub pull
    requests. One encoder thread and bit-exact flags: the same frames give the same bytes."""
    h, w = frames[0].shape[:2]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "clip.mp4"
        cmd = [ffmpeg, "-hide_banner", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
               "-s", f"{w}x{h}", "-framerate", str(1000 // FRAME_MS), "-i", "-",
               "-c:v", "libx264", "-preset", "medium", "-crf", "16", "-pix_fmt", "yuv420p", "-threads", "1",
               "-x264-params", "threads=1", "-tune", "stillimage", "-movflags", "+faststart",
               "-fflags", "+bitexact", "-flags:v", "+bitexact", "-map_metadata", "-1", str(path)]
        done = subprocess.run(cmd, input=np.stack(frames).astype(np.uint8).tobytes(), capture_output=True)
        if done.returncode != 0:
            raise ReportError(f"ffmpeg could not encode the MP4: {done.stderr.decode(errors='replace').strip()}")
        return path.read_bytes()


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


MARKERS = "osD^vP*X"
PLOT_COLUMNS = 4  # panels per row: at most the width the HTML shows, so text stays readable


def _ssim_panels(panels: list, xlabel: str, ylabel: str, designs: list[str]) -> bytes:
    """One subplot per ``(title, {design: [(x, ssim, conclusive), ...]})``. Each design keeps
    its colour and marker and is shifted sideways a little, so coinciding lines stay
    visible; inconclusive points are hollow."""
    cols = min(PLOT_COLUMNS, len(panels))
    nrows = -(-len(panels) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.4 * cols, 2.9 * nrows + 0.6), squeeze=False, sharey=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, (title, lines) in zip(axes.flat, panels):
        for d, design in enumerate(designs):
            if design not in lines:
                continue
            pts = lines[design]
            offset = (d - (len(designs) - 1) / 2) * 0.4 / max(len(designs), 2)
            xs = [x + offset for x, _, _ in pts]
            ys = [y for _, y, _ in pts]
            colour, marker = colours[d % len(colours)], MARKERS[d % len(MARKERS)]
            ax.plot(xs, ys, color=colour, lw=1.2, alpha=0.8)
            ax.scatter([x for x, (_, _, c) in zip(xs, pts) if c], [y for y, (_, _, c) in zip(ys, pts) if c],
                       color=colour, marker=marker, s=30, zorder=3, label=design)
            hollow = [(x, y) for x, y, (_, _, c) in zip(xs, ys, pts) if not c]
            if hollow:
                ax.scatter(*zip(*hollow), facecolors="none", edgecolors=colour, marker=marker, s=30, zorder=3)
        ax.axhline(1.0, color="gray", ls="--", lw=1)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(xlabel, fontsize=10)
        ax.tick_params(labelsize=9)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.set_ylim(-0.02, 1.05)
    for row in axes:
        row[0].set_ylabel(ylabel, fontsize=10)
    handles = [plt.Line2D([], [], color=colours[d % len(colours)], marker=MARKERS[d % len(MARKERS)], label=name)
               for d, name in enumerate(designs)]
    handles.append(plt.Line2D([], [], color="gray", marker="o", markerfacecolor="none", ls="none",
                              label="hollow: inconclusive (no address reuse)"))
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 4), fontsize=10, frameon=False)
    fig.tight_layout(rect=(0, 0.55 / (2.9 * nrows + 0.6), 1, 1))
    return _png(fig)


def plot_ssim(results: Results) -> bytes:
    """Per model and scenario: min SSIM of each request (x, seed-major) for each design."""
    designs = list(results.caches)
    panels = []
    for model, scenario in results.rows():
        lines = {}
        for cache in designs:
            rs = results.records_of(model, scenario, cache)
            if rs:
                lines[cache] = [(i, r.ssim_min, r.conclusive) for i, r in enumerate(rs)]
        panels.append((f"{model}: {scenario} ({results.scenario_level(scenario)})", lines))
    return _ssim_panels(panels, "request (seed-major)", "min SSIM to reference", designs)


def plot_frame_ssim(showcases: list[tuple[str, dict]], designs: list[str]) -> bytes:
    """SSIM per frame of each showcased design's output against the reference."""
    return _ssim_panels(showcases, "frame", "SSIM to reference", designs)


# --- verdicts against declared levels ---------------------------------------------

def level_verdict_parts(results: Results, model: str, cache: str) -> tuple[str, str]:
    """One design's verdict on one model against the level it declares, in two parts:
    up to that level (e.g. 'meets L1 as declared: clean in every scenario up to L1 (...)')
    and beyond it (e.g. 'contaminated in storage_swapped (L2)'; '' when nothing ran there).
    Scenarios with no conclusive request are named as such, never counted as clean."""
    declared = results.caches[cache].declared_level
    scenarios = [s for m, s in results.rows() if m == model and results.records_of(model, s, cache)]
    level = {s: results.scenario_level(s) for s in scenarios}
    state = {}
    for s in scenarios:
        t = tally(results.records_of(model, s, cache))
        state[s] = CONTAMINATED if t.contaminated else (CLEAN if t.conclusive else INCONCLUSIVE)
    named = lambda names: ", ".join(f"{s} ({level[s]})" for s in names)  # noqa: E731
    within = [s for s in scenarios if declared is not None and Level.parse(level[s]) <= Level.parse(declared)]
    beyond = [s for s in scenarios if s not in within]
    if declared is None:
        head = "declares no level"
    elif bad := [s for s in within if state[s] == CONTAMINATED]:
        head = f"fails its declared {declared}: contaminated in {named(bad)}"
    elif clean := [s for s in within if state[s] == CLEAN]:
        unsure = [s for s in within if state[s] == INCONCLUSIVE]
        every = "every conclusive" if unsure else "every"
        top = max(Level.parse(level[s]) for s in clean)
        if top < Level.parse(declared):  # nothing at the declared level itself was shown
            head = (f"clean up to {top}, no conclusive {declared} scenario ran: "
                    f"clean in {every} scenario ({named(clean)})")
        else:
            head = f"meets {declared} as declared: clean in {every} scenario up to {declared} ({named(clean)})"
        if unsure:
            head += f"; inconclusive (no address reuse): {named(unsure)}"
    else:
        head = f"not shown at {declared}: no conclusive request in {named(within)}" if within else \
            f"not shown at {declared}: no scenario up to {declared} ran"
    found = [f"{word} in {named(names)}" for word in (CONTAMINATED, CLEAN, INCONCLUSIVE)
             if (names := [s for s in beyond if state[s] == word])]
    return head, "; ".join(found)


def level_verdict(results: Results, model: str, cache: str) -> str:
    """The two parts of :func:`level_verdict_parts` in one line."""
    head, beyond = level_verdict_parts(results, model, cache)
    if not beyond:
        return head
    return f"{head}; {beyond}" if results.caches[cache].declared_level is None else \
        f"{head}; beyond its level: {beyond}"


def verdict_line(records: list[Record]) -> str:
    """Counts over some requests, e.g. 'contaminated in 7/8 conclusive requests, min SSIM 0.11'."""
    bad = [r for r in records if r.contaminated]
    conclusive = [r for r in records if r.conclusive]
    unsure = len(records) - len(conclusive)
    tail = f"; {unsure} inconclusive (no address reuse, not counted)" if unsure else ""
    if bad:
        return (f"contaminated in {len(bad)}/{len(conclusive)} conclusive requests, min SSIM "
                f"{min(r.ssim_min for r in bad):.2f}{tail}")
    if not conclusive:
        return f"inconclusive: no request had its address reused ({len(records)} requests)"
    equal = sum(r.latents_equal for r in conclusive)
    same = "bitwise equal to reference" if equal == len(conclusive) else f"{equal} bitwise equal to reference"
    return f"clean: 0/{len(conclusive)} conclusive requests contaminated, {same}{tail}"


def _by_level(results: Results, model: str, cache: str) -> tuple[list[Record], list[Record]]:
    """A design's requests in the scenarios up to its declared level, and beyond it (a
    design that declares no level: all of them beyond)."""
    declared = results.caches[cache].declared_level
    records = results.records_of(model, cache=cache)
    if declared is None:
        return [], records
    within = [r for r in records if Level.parse(r.level) <= Level.parse(declared)]
    return within, [r for r in records if r not in within]


def _level_cells(within: list[Record], beyond: list[Record]) -> list[str]:
    """Contamination beyond a design's level is a finding, not a failure: its cell says so
    (and is not coloured as one)."""
    beyond_line = verdict_line(beyond) if beyond else "-"
    return [verdict_line(within) if within else "-",
            f"finding: {beyond_line}" if beyond_line.startswith(CONTAMINATED) else beyond_line]


def _cell(rs: list[Record]) -> str:
    t = tally(rs)
    state = CONTAMINATED if t.contaminated else (CLEAN if t.conclusive else INCONCLUSIVE)
    return (f"{state} {t.contaminated}/{t.conclusive}" + (f" (+{t.inconclusive} inc.)" if t.inconclusive else "")
            + f", SSIM {t.ssim_min:.2f}")


# --- the report -------------------------------------------------------------------

def _slug(text: str) -> str:
    """A file-name part: no ':' or other characters that some systems refuse."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def _declared(results: Results, cache: str) -> str:
    level = results.caches[cache].declared_level
    return f"declared {level}" if level else "no declared level"


def _pair_clips(results: Results) -> tuple[list[Clip], list[Clip]]:
    """Showcased requests where the pair's before or after was contaminated: those
    within the after cache's declared level (the headline), and the others."""
    before, after = results.pair["before"], results.pair["after"]
    level = results.caches[after].declared_level
    headline, others = [], []
    for clip in results.clips.values():
        b, a = clip.design(before), clip.design(after)
        if b is None or a is None or CONTAMINATED not in (b.verdict, a.verdict):
            continue
        within = level is not None and Level.parse(clip.level) <= Level.parse(level)
        (headline if within else others).append(clip)
    return _first_seed(headline, results), _first_seed(others, results)


def _first_seed(clips: list[Clip], results: Results) -> list[Clip]:
    """One clip per model and scenario (the lowest seed), in the run's order."""
    order = {row: i for i, row in enumerate(results.rows())}
    seen, out = set(), []
    for clip in sorted(clips, key=lambda c: (order.get((c.model, c.scenario), len(order)), c.seed)):
        if (clip.model, clip.scenario) not in seen:
            seen.add((clip.model, clip.scenario))
            out.append(clip)
    return out


class _Renderer:
    """Builds the blocks and every file they refer to, in memory."""

    def __init__(self, results: Results):
        self.results = results
        self.files: dict[str, bytes] = {}
        self.ffmpeg = ffmpeg_path()
        self.seen: dict[str, str] = {}  # digest of a clip's frames -> the heading it was first shown under

    def pair_clip(self, clip: Clip, video: bool) -> tuple[list, tuple[str, dict]]:
        """Blocks for one before/after clip (reference | before | after; reference | cache
        when the run had one cache), and its per-frame SSIM for the plot."""
        results = self.results
        before, after = results.pair["before"], results.pair["after"]
        roles = (("before", before), ("after", after)) if before != after else (("cache", before),)
        reference = decode_clip(clip.reference)
        outputs = {}
        for role, cache in roles:
            design = clip.design(cache)
            outputs[role] = (cache, design.verdict, decode_clip(design.frames))
        ssim = {role: frame_ssim(reference, frames) for role, (_, _, frames) in outputs.items()}
        panels = [(f"reference (no cache)\n\"{clip.prompt}\"", reference)]
        for role, (cache, verdict, frames) in outputs.items():
            panels.append((f"{role}: {cache}\n{_declared(results, cache)}\n{verdict.upper()}", frames))
        count = min(len(f) for _, f in panels)
        captions = [[f"frame {t + 1}/{count}" for t in range(count)]] + [
            [f"SSIM {ssim[role][t]:.3f}" for t in range(count)] for role in outputs]
        frames = side_by_side(panels, captions)
        heading = f"{clip.model}: {clip.scenario} ({clip.level}), seed {clip.seed}, request {clip.request}"
        digest = hashlib.sha256(b"".join(np.ascontiguousarray(f).tobytes() for f in frames)).hexdigest()
        same_as = self.seen.setdefault(digest, heading)
        names = "-vs-".join(dict.fromkeys((before, after)))
        stem = _slug(f"{clip.model}-{clip.scenario}-seed{clip.seed}-r{clip.request}-{names}")
        gif, mp4 = f"videos/{stem}.gif", f"videos/{stem}.mp4"
        self.files[gif] = encode_gif(frames)
        if video and self.ffmpeg:
            self.files[mp4] = encode_mp4(frames, self.ffmpeg)
        else:
            mp4 = ""
        summary = lambda role: (f"{np.mean(ssim[role]):.3f} mean, {min(ssim[role]):.3f} min "  # noqa: E731
                                f"(per frame: {' '.join(f'{s:.2f}' for s in ssim[role])})")
        shown = " | ".join(f"{role} {cache} ({verdict})" for role, (cache, verdict, _) in outputs.items())
        blocks = [
            Heading(heading, 3),
            Para(f"The request asked for \"{clip.prompt}\"; the previous one for \"{clip.previous_prompt}\"."
                 + (f" {RANDOM_WEIGHTS}" if clip.model in REAL_MODELS else "")),
            Video(mp4, gif, f"{clip.model} {clip.scenario}: reference | {shown}"),
            *([Para(f"Identical, frame for frame, to the clip of {same_as}: the same prompts gave the same "
                    f"frames in both (not a copying mistake).")] if same_as != heading else []),
            Para("SSIM to the reference: " + "; ".join(
                f"{role} ({cache}, {verdict}) {summary(role)}" for role, (cache, verdict, _) in outputs.items())
                 + "."),
        ]
        plot = (f"{clip.model}: {clip.scenario} r{clip.request}",
                {cache: [(t, s, verdict != INCONCLUSIVE) for t, s in enumerate(ssim[role])]
                 for role, (cache, verdict, _) in outputs.items()})
        return blocks, plot

    def verdict_blocks(self, models: list[str], caches: list[str]) -> list:
        results = self.results
        return [Heading("Verdicts against each design's declared level"),
                Para("A design meets its level when no conclusive request up to it was contaminated; "
                     "contamination above it is a finding about what the level does not cover. Inconclusive "
                     "requests (no address reuse) are never counted as clean."),
                Table(["model", "cache", "declared", "up to its level", "beyond its level (a finding)"], [
                    [m, c, results.caches[c].declared_level or "-",
                     *(part or "-" for part in level_verdict_parts(results, m, c))]
                    for m in models for c in caches if results.records_of(m, cache=c)])]

    def blocks(self) -> list:
        results = self.results
        env, plan, records = results.environment, results.plan, results.records
        before, after = results.pair["before"], results.pair["after"]
        caches = [c for c in results.caches if results.records_of(cache=c)]
        models = list(dict.fromkeys(r.model for r in records))
        blocks: list = [Heading(results.title, 1)]
        if not results.complete:
            blocks.append(Para("INCOMPLETE RUN: the run stopped early; this report shows the cases it finished."))
        headline, others = _pair_clips(results)
        after_level = results.caches[after].declared_level
        tiles = f"before ({before}) | after ({after})" if before != after else f"{before}"
        which = f"{before} or {after} was" if before != after else f"{before} was"
        blocks += [Heading(f"Before / after: {before} ({_declared(results, before)}) vs "
                           f"{after} ({_declared(results, after)})" if before != after else
                           f"{before} ({_declared(results, before)}) against the cache-free reference"),
                   Para(f"Each video: the cache-free reference | {tiles}, the same request and seed, frames in "
                        f"step, the SSIM of each frame to the reference above it. Shown: the scenarios up "
                        f"to {after}'s declared level{' (' + after_level + ')' if after_level else ''} in which "
                        f"{which} contaminated.")]
        # Above the fold: the first pair, then the verdicts; the other pairs follow.
        frame_plots = []
        for i, clip in enumerate(headline):
            if i == 1:
                blocks += self.verdict_blocks(models, caches)
                blocks.append(Heading(f"More before / after pairs up to {after}'s level"))
            b, plot = self.pair_clip(clip, video=True)
            blocks += b
            frame_plots.append(plot)
        if not headline:
            blocks.append(Para(f"In this run, {which} contaminated in no scenario up to {after}'s declared "
                               f"level: there is nothing to show there."))
        elif not self.ffmpeg:
            blocks.append(Para(MP4_MISSING + "; the GIFs show the same frames."))
        if len(headline) < 2:
            blocks += self.verdict_blocks(models, caches)
        rates = [(m, rate) for m in models if (rate := natural_reuse_rate(records, m))]
        if rates:
            blocks.append(Para("Natural reuse on this machine (no forcing): the allocator gave a request's prompt "
                               "source a freed address in " + "; ".join(
                                   f"{n}/{d} requests after the first ({m})" for m, (n, d) in rates)
                               + ". The rest are inconclusive."))
        blocks.append(Para(
            f"{len(records)} requests: {len(results.rows())} model x scenario rows x {len(caches)} caches x "
            f"{len(plan['seeds'])} seeds x {plan['requests']} requests, on {env['device']} ({env['device_name']}), "
            f"Python {env.get('python', 'unknown')}, torch {env['torch']}"
            + (f", diffusers {env['diffusers']}" if env.get("diffusers") else "")
            + f", git {env['git_revision']}. Each request is compared with a cache-free run of "
            f"the same prompt and seed."))
        blocks += [Heading("Requests per design"),
                   Para("Counted apart: the scenarios up to the level each design declares (what it promises) "
                        "and those beyond it (what that level does not cover: a finding, not a failure)."),
                   Table(["model", "cache", "declared", "up to its level", "beyond its level"], [
                       [m, c, results.caches[c].declared_level or "-", *_level_cells(*_by_level(results, m, c))]
                       for m in models for c in caches if results.records_of(m, cache=c)])]
        blocks += [Heading("Scenario x cache"),
                   Para("Each cell: contaminated requests / conclusive requests (inconclusive ones apart), "
                        "and the lowest per-frame SSIM to the reference."),
                   Table(["model", "scenario", "level"] + caches, [
                       [m, s, results.scenario_level(s)] +
                       [_cell(rs) if (rs := results.records_of(m, s, c)) else "-" for c in caches]
                       for m, s in results.rows()])]
        self.files["ssim_requests.png"] = plot_ssim(results)
        blocks += [Heading("SSIM per request"),
                   Figure("ssim_requests.png", "min SSIM per request and design (hollow: inconclusive)")]
        if others:
            blocks += [Heading(f"Beyond {after}'s level, and the rest"),
                       Para(f"Scenarios in which {which} contaminated outside the headline: above {after}'s "
                            f"declared level, what that level does not cover.")]
            for clip in others:
                b, plot = self.pair_clip(clip, video=False)
                blocks += b
                frame_plots.append(plot)
        if frame_plots:
            self.files["ssim_frames.png"] = plot_frame_ssim(frame_plots, [before, after])
            blocks += [Heading("SSIM per frame"), Figure("ssim_frames.png", "SSIM per frame of the clips above")]
        blocks += _evidence_blocks(results)
        described = results.models
        if described:
            blocks += [Heading("Models"),
                       *([Para(f"{', '.join(m for m in models if m in REAL_MODELS)}: {RANDOM_WEIGHTS}")]
                         if any(m in REAL_MODELS for m in models) else []),
                       Table(["model", "what it is"], [
                [name, ", ".join(f"{k} {v}" for k, v in described[name].items() if k != "name")]
                for name in models if name in described])]
        blocks += [Heading("Caches"), Table(["spec", "declared level", "provenance"], [
            [c.spec, c.declared_level or "-", c.provenance] for c in results.caches.values()])]
        blocks += [Heading("Environment"), Code(json.dumps(env, indent=1))]
        return blocks


def _evidence_blocks(results: Results) -> list:
    """Every contaminated request, and every conclusive request of the after cache: the
    proof that the fix was tested on a reused address."""
    after = results.pair["after"]
    evidence = []
    for r in results.records:
        if not (r.contaminated or (r.conclusive and r.cache == after)):
            continue
        role = r.prompt_role
        events = r.allocator_events or {}
        cuda = "; ".join(f"{e['action']}@{e['addr']}" for e in events.get(role, [])[-4:]) \
            if isinstance(events.get(role), list) else ""
        evidence.append([r.model, r.scenario, r.cache, str(r.seed), str(r.request), r.addresses[role],
                         r.reused_from.get(role) or "-", r.verdict, f"{r.false_hits}/{r.kv_lookups}", cuda or "-"])
    return [Heading("Address evidence"),
            Para(f"Every contaminated request and every conclusive request of {after}: where the prompt's encoder "
                 "states lived, which earlier source had freed (or given up) that address, and how many K/V "
                 "lookups returned another request's K/V. On CUDA the last column quotes the caching allocator's "
                 "own trace at that address."),
            Table(["model", "scenario", "cache", "seed", "request", "address", "previous holder", "verdict",
                   "foreign K/V", "CUDA allocator trace"], evidence)]


REPORT_FILES = ("report.md", "report.html", "ssim_requests.png", "ssim_frames.png")


def write_report(folder: Path, results: Results | None = None) -> None:
    """Write report.md, report.html, the videos and plots into ``folder`` from ``results``
    (or from ``folder/results.json``). Nothing is written unless everything renders and
    every target can be replaced."""
    folder = Path(folder)
    if results is None:
        results = load(folder)
    try:
        renderer = _Renderer(results)
        blocks = renderer.blocks()
    except (KeyError, IndexError, TypeError) as exc:  # parts that the format allows but that do not fit
        raise ResultsError(f"results do not describe a consistent run: {type(exc).__name__}: {exc}") from None
    files = dict(renderer.files)
    files["report.md"] = render_markdown(blocks).encode()
    files["report.html"] = render_html(blocks, renderer.files, results.title).encode()
    _write_all(folder, files)


def _write_all(folder: Path, files: dict[str, bytes]) -> None:
    """Stage every file beside its target, then rename them all into place; if staging
    fails, remove what was staged and leave the folder as it was."""
    for name in files:
        target = folder / name
        if target.exists() and not target.is_file():
            raise ReportError(f"{target} exists and is not a file")
    staged = []
    try:
        for name, data in files.items():
            target = folder / name
            target.parent.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
            staged.append((tmp, target))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, 0o644)  # mkstemp makes 0600; a report is meant to be shared
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    with uninterrupted():  # the report lands whole: all renames or, before them, none
        for tmp, target in staged:
            os.replace(tmp, target)


__all__ = ["ReportError", "ResultsError", "level_verdict", "level_verdict_parts", "side_by_side", "verdict_line",
           "wrap_label", "write_report"]
