"""The before/after report: ``report.md`` for a pull request, a self-contained
``report.html``, side-by-side GIFs and SSIM plots, all from ``results.json`` alone.

Both documents are rendered from one list of blocks, so they always say the
same thing.
"""

from __future__ import annotations

import base64
import html
import io
import json
from dataclasses import dataclass
from pathlib import Path

import imageio.v3 as iio
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image, ImageDraw, ImageFont  # noqa: E402

from cache_impl import CacheSpecError, declared_level, resolve  # noqa: E402
from harness.metrics import frame_ssim  # noqa: E402
from harness.results import write_atomic  # noqa: E402
from harness.run import CLEAN, CONTAMINATED, INCONCLUSIVE, decode_clip, model_of, rows, tally  # noqa: E402

PANEL_SCALE = 2
MIN_PANEL_WIDTH = 160  # small clips (a real model's 32-pixel frames) are scaled up to this, so labels fit
LABEL_HEIGHT = 28
GIF_FRAME_MS = 250
GIF_COLOURS = 32


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
        elif isinstance(b, Code):
            out.append("```\n" + b.text + "\n```")
        out.append("")
    return "\n".join(out)


def _data_uri(path: Path) -> str:
    mime = {"gif": "image/gif", "png": "image/png"}[path.suffix.lstrip(".")]
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode()


HTML_STYLE = """
body { font-family: sans-serif; max-width: 70em; margin: 1em auto; padding: 0 1em; color: #111; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #eee; }
td.contaminated { background: #fdd; } td.clean { background: #dfd; } td.inconclusive { background: #ffd; }
img { max-width: 100%; image-rendering: pixelated; }
pre { background: #f4f4f4; padding: 0.5em; overflow-x: auto; white-space: pre-wrap; }
@media print { img { page-break-inside: avoid; } }
"""


def render_html(blocks, folder: Path, title: str) -> str:
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
                    cls = next((v for v in (CONTAMINATED, CLEAN, INCONCLUSIVE) if text.startswith(v)), "")
                    cells.append(f'<td class="{cls}">{esc(text)}</td>' if cls else f"<td>{esc(text)}</td>")
                out.append("<tr>" + "".join(cells) + "</tr>")
            out.append("</tbody></table>")
        elif isinstance(b, Figure):
            out.append(f'<p><img src="{_data_uri(folder / b.path)}" alt="{esc(b.alt)}"></p>')
        elif isinstance(b, Code):
            out.append(f"<pre>{esc(b.text)}</pre>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# --- pictures ---------------------------------------------------------------------

def _font():
    return ImageFont.load_default()


def panel_scale(width: int) -> int:
    """Whole-pixel magnification of a clip in a GIF: at least PANEL_SCALE, and enough
    to make the panel MIN_PANEL_WIDTH wide."""
    return max(PANEL_SCALE, -(-MIN_PANEL_WIDTH // width))


def side_by_side(panels: list[tuple[str, np.ndarray]]) -> list[np.ndarray]:
    """Frames of labelled clips side by side, frames in step: one (H, W, 3) image per frame.
    Each panel is ``(label, frames)``; a label may hold two lines."""
    count = min(len(frames) for _, frames in panels)
    font = _font()
    out = []
    for t in range(count):
        tiles = []
        for label, frames in panels:
            frame = Image.fromarray(frames[t])
            scale = panel_scale(frame.width)
            frame = frame.resize((frame.width * scale, frame.height * scale), Image.NEAREST)
            tile = Image.new("RGB", (frame.width, frame.height + LABEL_HEIGHT), "white")
            tile.paste(frame, (0, LABEL_HEIGHT))
            ImageDraw.Draw(tile).multiline_text((3, 2), label, fill="black", font=font, spacing=2)
            tiles.append(tile)
        gap = 4
        canvas = Image.new("RGB", (sum(t.width for t in tiles) + gap * (len(tiles) - 1), tiles[0].height),
                           "white")
        x = 0
        for tile in tiles:
            canvas.paste(tile, (x, 0))
            x += tile.width + gap
        out.append(np.asarray(canvas))
    return out


def write_gif(path: Path, frames: list[np.ndarray]) -> None:
    # 32 colours without dithering: the clips are flat shapes on smooth backgrounds,
    # and a dithered full palette triples the file for no visible gain.
    flat = [np.asarray(Image.fromarray(f).quantize(GIF_COLOURS, dither=Image.Dither.NONE).convert("RGB"))
            for f in frames]
    buf = io.BytesIO()
    iio.imwrite(buf, np.stack(flat), extension=".gif", duration=GIF_FRAME_MS, loop=0)
    write_atomic(path, buf.getvalue())


def _save_figure(fig, path: Path) -> None:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, metadata={"Software": None})
    plt.close(fig)
    write_atomic(path, buf.getvalue())


def _legend_below(fig, axes) -> None:
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))


def _ssim_panels(panels: list, xlabel: str, ylabel: str, path: Path) -> None:
    """One subplot per ``(title, [(label, values), ...])``, SSIM on 0..1 with the
    1.0 (identical) line marked, a shared legend below."""
    fig, axes = plt.subplots(1, len(panels), figsize=(3.3 * len(panels), 3.2), squeeze=False, sharey=True)
    for ax, (title, lines) in zip(axes[0], panels):
        for label, values in lines:
            ax.plot(range(len(values)), values, marker="o", ms=3, label=label)
        ax.axhline(1.0, color="gray", ls="--", lw=1)
        ax.set_title(title, fontsize=8)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylim(0, 1.05)
    axes[0][0].set_ylabel(ylabel)
    _legend_below(fig, axes)
    _save_figure(fig, path)


def plot_ssim(records: list[dict], caches: list[str], path: Path) -> None:
    """Per model and scenario: min SSIM of each request (x) for each design (a line)."""
    panels = [(f"{model}: {scenario}", [(cache, [r["ssim_min"] for r in records
                                                  if model_of(r) == model and r["scenario"] == scenario
                                                  and r["cache"] == cache]) for cache in caches])
              for model, scenario in rows(records)]
    _ssim_panels(panels, "request (seed-major)", "min SSIM to reference", path)


def plot_frame_ssim(showcases: list[tuple[str, np.ndarray, dict[str, np.ndarray]]], path: Path) -> None:
    """SSIM per frame of each design's output against the reference, one panel per showcase."""
    panels = [(title, [(cache, frame_ssim(reference, frames)) for cache, frames in designs.items()])
              for title, reference, designs in showcases]
    _ssim_panels(panels, "frame", "SSIM to reference", path)


# --- the report -------------------------------------------------------------------

def verdict_line(records: list[dict]) -> str:
    """One line per design, e.g. 'contaminated in 7/8 requests, min SSIM 0.11'."""
    bad = [r for r in records if r["verdict"] == CONTAMINATED]
    conclusive = [r for r in records if r["verdict"] != INCONCLUSIVE]
    unsure = len(records) - len(conclusive)
    tail = f"; {unsure} inconclusive (no address reuse, not counted as passes)" if unsure else ""
    if bad:
        worst = min(r["ssim_min"] for r in bad)
        where = sorted({r["scenario"] for r in bad})
        return (f"contaminated in {len(bad)}/{len(conclusive)} requests, min SSIM {worst:.2f} "
                f"({', '.join(where)}){tail}")
    if not conclusive:
        return f"inconclusive: no request had its address reused ({len(records)} requests)"
    equal = sum(r["latents_equal"] for r in conclusive)
    same = "bitwise equal to reference" if equal == len(conclusive) else f"{equal} bitwise equal to reference"
    return f"clean: 0/{len(conclusive)} contaminated, {same}{tail}"


def _cell(rs: list[dict]) -> str:
    t = tally(rs)
    conclusive = t["requests"] - t["inconclusive"]
    state = CONTAMINATED if t["contaminated"] else (CLEAN if conclusive else INCONCLUSIVE)
    return (f"{state} {t['contaminated']}/{conclusive}" + (f" (+{t['inconclusive']} inc.)" if t["inconclusive"] else "")
            + f", SSIM {t['ssim_min']:.2f}")


def build_blocks(results: dict, folder: Path, title: str) -> list:
    env, plan, records = results["environment"], results["plan"], results["records"]
    caches = [c for c in plan["caches"] if any(r["cache"] == c for r in records)]
    models = list(dict.fromkeys(model_of(r) for r in records))
    blocks: list = [Heading(title, 1)]
    if not results.get("complete", True):
        blocks.append(Para("INCOMPLETE RUN: the run stopped early; this report shows the cases it finished."))
    blocks.append(Para(
        f"{len(records)} requests: {len(rows(records))} model x scenario rows x {len(caches)} caches x "
        f"{len(plan['seeds'])} seeds x {plan['requests']} requests, on {env['device']} ({env['device_name']}), "
        f"torch {env['torch']}, git {env['git_revision']}. Each request is compared with a cache-free run of "
        f"the same prompt and seed. A request whose prompt source did not land on a reused address is "
        f"inconclusive, never a pass."))
    described = results.get("models", {})
    if described:
        blocks += [Heading("Models"), Table(["model", "what it is"], [
            [name, ", ".join(f"{k} {v}" for k, v in described[name].items() if k != "name")]
            for name in models if name in described])]
    blocks += [Heading("Verdict"), Table(["model", "cache", "verdict"], [
        [m, c, verdict_line([r for r in records if model_of(r) == m and r["cache"] == c])]
        for m in models for c in caches if any(model_of(r) == m and r["cache"] == c for r in records)])]
    blocks += [Heading("Scenario x cache"),
               Para("Each cell: contaminated requests / conclusive requests (inconclusive ones apart), "
                    "and the lowest per-frame SSIM to the reference."),
               Table(["model", "scenario", "level"] + caches, [
                   [m, s, next(r["level"] for r in records if r["scenario"] == s)] +
                   [_cell(rs) if (rs := [r for r in records if model_of(r) == m and r["scenario"] == s
                                         and r["cache"] == c]) else "-" for c in caches]
                   for m, s in rows(records)])]
    plot_ssim(records, caches, folder / "ssim_requests.png")
    blocks += [Heading("SSIM per request"), Figure("ssim_requests.png", "min SSIM per request and design")]
    blocks += _showcase_blocks(results, caches, folder)
    blocks += _evidence_blocks(records)
    blocks += [Heading("Environment"), Code(json.dumps(env, indent=1))]
    return blocks


def _showcase_blocks(results: dict, caches: list[str], folder: Path) -> list:
    """A GIF per contaminated design: reference | contaminated (before) | clean (after)."""
    blocks: list = []
    seen: set = set()
    frame_plots = []
    gif_dir = folder / "gifs"
    for key in sorted(results["clips"]):
        clip = results["clips"][key]
        designs = {c: clip["designs"][c] for c in caches if c in clip["designs"]}
        reference = decode_clip(clip["reference"])
        decoded = {c: decode_clip(d["frames"]) for c, d in designs.items()}
        clean = [c for c, d in designs.items() if not d["contaminated"]]
        model = clip.get("model", "toy")
        new = [c for c, d in designs.items() if d["contaminated"] and (model, clip["scenario"], c) not in seen]
        if not new:
            continue
        frame_plots.append((f"{model}: {clip['scenario']} request {clip['request']}", reference, decoded))
        blocks.append(Heading(f"{model}: {clip['scenario']}, seed {clip['seed']}, request {clip['request']}", 3))
        blocks.append(Para(f"Request prompt: \"{clip['prompt']}\"; the previous request asked for "
                           f"\"{clip['previous_prompt']}\"."))
        for before in new:
            seen.add((model, clip["scenario"], before))
            panels = [(f"reference (no cache)\n{clip['prompt']}", reference),
                      (f"before: {before}\nCONTAMINATED", decoded[before])]
            if clean:
                after = max(clean, key=_level_of)
                panels.append((f"after: {after}\nclean", decoded[after]))
            name = f"gifs/{model}-{clip['scenario']}-seed{clip['seed']}-r{clip['request']}-{before}.gif"
            gif_dir.mkdir(exist_ok=True)
            write_gif(folder / name, side_by_side(panels))
            blocks.append(Figure(name, f"{' | '.join(p[0].splitlines()[0] for p in panels)}"))
    if frame_plots:
        plot_frame_ssim(frame_plots, folder / "ssim_frames.png")
        blocks = [Heading("Before / after"),
                  Para("Each GIF: the cache-free reference | a contaminated design | a clean design, "
                       "same request, same seed, frames in step."),
                  Figure("ssim_frames.png", "SSIM per frame of the showcased requests")] + blocks
    else:
        blocks = [Heading("Before / after"), Para("No request was contaminated in this run.")]
    return blocks


def _level_of(spec: str) -> int:
    """A design's declared level, for choosing the 'after' panel (-1 when unknown)."""
    try:
        level = declared_level(resolve(spec))
    except CacheSpecError:
        level = None
    return int(level) if level is not None else -1


def _evidence_blocks(records: list[dict]) -> list:
    evidence = []
    for r in records:
        if r["verdict"] == CONTAMINATED or (r["verdict"] == CLEAN and r["cache"] == records[0]["cache"]):
            role = next(iter(r["addresses"]))  # the role that carries the request's own prompt
            events = r.get("allocator_events", {})
            cuda = "; ".join(f"{e['action']}@{e['addr']}" for e in events.get(role, [])[-4:]) \
                if isinstance(events.get(role), list) else ""
            evidence.append([model_of(r), r["scenario"], r["cache"], str(r["seed"]), str(r["request"]),
                             r["addresses"][role], r["reused_from"][role] or "-", r["verdict"],
                             f"{r['false_hits']}/{r['kv_lookups']}", cuda or "-"])
    return [Heading("Address evidence"),
            Para("Where the prompt's encoder states lived, which earlier source had freed (or given up) that "
                 "address, and how many K/V lookups returned another request's K/V. On CUDA the last "
                 "column quotes the caching allocator's own trace at that address."),
            Table(["model", "scenario", "cache", "seed", "request", "address", "previous holder", "verdict",
                   "foreign K/V", "CUDA allocator trace"], evidence)]


def write_report(folder: Path, results: dict | None = None, title: str = "Address-reuse report") -> None:
    """Write report.md, report.html, GIFs and plots into ``folder`` from ``results``
    (or from ``folder/results.json``)."""
    folder = Path(folder)
    if results is None:
        path = folder / "results.json"
        if not path.is_file():
            raise FileNotFoundError(f"no results.json in {folder}")
        try:
            results = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not valid JSON: {exc}") from None
    if not results.get("records"):
        raise ValueError(f"{folder}: results hold no records to report")
    title = results.get("title", title)
    blocks = build_blocks(results, folder, title)
    write_atomic(folder / "report.md", render_markdown(blocks))
    write_atomic(folder / "report.html", render_html(blocks, folder, title))
