"""The report renderer on a small synthetic run (no model runs), and the HTML in a
real headless browser with no network."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from harness.report.metrics import frame_ssim
from harness.report.render import (MIN_TILE_WIDTH, MP4_MISSING, ffmpeg_path, level_verdict, level_verdict_parts,
                            side_by_side, verdict_line, wrap_label, write_report)
from harness.report.results import CacheInfo
from synthetic_results import EVIL, OUTSIDE, T, clip as _clip, synthetic_results

pytestmark = [pytest.mark.cpu]  # no model runs here; all but the browser test are core_model

@pytest.fixture
def results():
    return synthetic_results()


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """The report of an untouched synthetic run, rendered once for the tests that only read
    it (a render takes about half a second); a test that changes the run renders its own."""
    folder = tmp_path_factory.mktemp("report")
    write_report(folder, synthetic_results())
    return folder


@pytest.mark.core_model
def test_verdicts_are_stated_against_the_declared_level(results):
    assert level_verdict(results, "toy", OUTSIDE) == (
        "meets L1 as declared: clean in every conclusive scenario up to L1 (freed_address_reused (L1)); "
        "inconclusive (no address reuse): natural_reuse (L1); "
        "beyond its level: contaminated in storage_swapped (L2)")
    assert level_verdict(results, "toy", "hardened") == (
        "meets L2 as declared: clean in every scenario up to L2 "
        "(freed_address_reused (L1), storage_swapped (L2), natural_reuse (L1))")
    assert level_verdict(results, "toy", "fingerprint").startswith("not shown at L0: no scenario up to L0 ran; "
                                                                   "beyond its level: contaminated in")
    # A design contaminated at or below the level it declares fails it.
    results.caches["hardened"] = CacheInfo("hardened", "L3", "x")  # no L3 scenario ran: no claim of L3
    assert level_verdict(results, "toy", "hardened").startswith("clean up to L2, no conclusive L3 scenario ran")
    results.caches[OUTSIDE] = CacheInfo(OUTSIDE, "L2", "x")
    assert level_verdict(results, "toy", OUTSIDE).startswith(
        "fails its declared L2: contaminated in storage_swapped (L2)")
    assert level_verdict_parts(results, "toy", "fingerprint")[1].startswith(
        "contaminated in freed_address_reused (L1), storage_swapped (L2); inconclusive in natural_reuse (L1)")
    results.caches[OUTSIDE] = CacheInfo(OUTSIDE, None, "x")
    assert level_verdict(results, "toy", OUTSIDE).startswith("declares no level; contaminated in storage_swapped")


@pytest.mark.core_model
def test_inconclusive_never_counted_as_pass(results, rendered):
    fingerprint = results.records_of(cache="fingerprint")
    assert verdict_line(fingerprint).startswith("contaminated in 2/2 conclusive requests, min SSIM 0.11; "
                                                "4 inconclusive")
    only_inconclusive = [r for r in results.records if not r.conclusive]
    assert verdict_line(only_inconclusive).startswith("inconclusive")
    md = (rendered / "report.md").read_text()
    assert "inconclusive 0/0 (+2 inc.)" in md  # the natural row of the pre-fix cache: no pass
    assert "clean 0/1 (+1 inc.)" in md


@pytest.mark.core_model
def test_the_report_leads_with_the_pair_then_the_verdicts(rendered):
    md = (rendered / "report.md").read_text()
    pair = md.index(f"## Before / after: fingerprint (declared L0) vs {OUTSIDE} (declared L1)")
    headline = md.index("### toy: freed_address_reused (L1), seed 0, request 1")
    verdicts = md.index("## Verdicts against each design's declared level")
    beyond = md.index("### toy: storage_swapped (L2)")  # above the fix's level: shown, after the verdicts
    assert pair < headline < verdicts < beyond
    ssim = frame_ssim(_clip(200), _clip(30))
    assert f"SSIM to the reference: before (fingerprint, contaminated) {np.mean(ssim):.3f} mean" in md
    assert f"after ({OUTSIDE}, clean) 1.000 mean, 1.000 min" in md


@pytest.mark.core_model
def test_a_run_of_one_cache_shows_it_against_the_reference_only(results, tmp_path):
    results.pair = {"before": OUTSIDE, "after": OUTSIDE}
    write_report(tmp_path, results)
    md = (tmp_path / "report.md").read_text()
    assert f"## {OUTSIDE} (declared L1) against the cache-free reference" in md
    assert f"SSIM to the reference: cache ({OUTSIDE}, contaminated)" in md  # storage_swapped, above L1
    assert "before" not in md.split("## Verdicts")[0]


@pytest.mark.core_model
def test_evidence_lists_the_after_caches_conclusive_requests(rendered):
    md = (rendered / "report.md").read_text()
    evidence = md[md.index("## Address evidence"):]
    assert f"| toy | freed_address_reused | {OUTSIDE} | 0 | 1 | 0x1001 | request 0 (positive) | clean | 0/12 |" \
        in evidence
    assert "| toy | natural_reuse | hardened |" not in evidence  # clean rows of other designs stay out


@pytest.mark.core_model
def test_labels_are_escaped(rendered):
    page = (rendered / "report.html").read_text()
    assert "<script>" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;quotes&quot;" in page


@pytest.mark.core_model
def test_html_is_self_contained(rendered):
    page = (rendered / "report.html").read_text()
    assert not re.search(r'(src|href)="(?!data:)', page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert page.count('<img src="data:image/png') == 2  # the two SSIM plots
    if ffmpeg_path():
        assert page.count('<video ') == 1 and 'src="data:video/mp4;base64,' in page  # the headline pair
    else:
        assert MP4_MISSING in page


@pytest.mark.core_model
def test_file_names_never_hold_a_colon(rendered):
    names = [p.name for p in rendered.rglob("*")]
    assert any(n.endswith(".gif") for n in names)
    assert not [n for n in names if ":" in n]


@pytest.mark.core_model
@pytest.mark.parametrize("label", [OUTSIDE, "after: " + OUTSIDE, "x" * 80, "reference (no cache)\n" + EVIL])
def test_labels_wrap_and_never_lose_a_character(label):
    from harness.report.render import _font
    lines = wrap_label(label, MIN_TILE_WIDTH - 8)
    assert len(lines) > 1 or len(label) < 20
    assert all(_font().getlength(line) <= MIN_TILE_WIDTH - 8 for line in lines), lines
    assert "".join(lines).replace(" ", "") == label.replace("\n", "").replace(" ", "")
    if ":" in label:  # a class name fits a tile: it is never cut, only its module wraps
        assert any(line.endswith("AVeryLongCacheClassNameIndeed") for line in lines), lines


@pytest.mark.core_model
def test_tiles_are_at_least_256_pixels_and_in_step(results):
    frames = side_by_side([("a", _clip(200)), ("b\nc", _clip(30))], [["x"] * T, ["y"] * T])
    assert len(frames) == T
    height, width = frames[0].shape[:2]
    assert width >= 2 * MIN_TILE_WIDTH and width % 2 == 0 and height % 2 == 0
    # The second tile shows the dark clip, right of the first.
    middle = height // 2
    assert frames[0][middle, MIN_TILE_WIDTH // 2].mean() > 150 and frames[0][middle, width - 20].mean() < 60


def _mp4_facts(path):
    """(codec line, frame count) from ffmpeg itself."""
    ffmpeg = ffmpeg_path()
    probe = subprocess.run([ffmpeg, "-hide_banner", "-i", str(path)], capture_output=True, text=True)
    stream = next(line for line in probe.stderr.splitlines() if "Video:" in line)
    w, h = map(int, re.search(r", (\d+)x(\d+)", stream).groups())
    raw = subprocess.run([ffmpeg, "-loglevel", "error", "-i", str(path), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         capture_output=True).stdout
    return stream, len(raw) // (w * h * 3)


@pytest.mark.core_model
def test_the_headline_pair_is_an_h264_mp4_with_every_frame(rendered):
    if not ffmpeg_path():
        pytest.skip(MP4_MISSING)
    videos = sorted((rendered / "videos").glob("*.mp4"))
    assert [v.name for v in videos] == [
        "toy-freed_address_reused-seed0-r1-fingerprint-vs-mypkg.some_long_package_name.caches_"
        "AVeryLongCacheClassNameIndeed.mp4"]
    stream, frames = _mp4_facts(videos[0])
    assert "h264" in stream and "yuv420p" in stream, stream
    assert frames == T


def _report_cli(capsys, folder):
    from harness.__main__ import main
    try:
        code = main(["report", str(folder)])
    except SystemExit as exc:
        code = exc.code
    return code, *capsys.readouterr()


@pytest.mark.core_model
def test_report_rerenders_from_json_alone(capsys, results, tmp_path):
    (tmp_path / "results.json").write_text(json.dumps(results.to_json()))
    code, out, err = _report_cli(capsys, tmp_path)
    assert code == 0, err
    for name in ("report.md", "report.html", "ssim_requests.png", "ssim_frames.png"):
        assert (tmp_path / name).stat().st_size > 0


@pytest.mark.core_model
def test_report_of_missing_folder_is_one_line_error_with_the_commands_prefix(capsys, tmp_path):
    code, out, err = _report_cli(capsys, tmp_path / "nope")
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("python -m harness report: error: no results.json")


@pytest.mark.core_model
def test_report_is_byte_identical_when_rerendered(rendered, tmp_path):
    write_report(tmp_path, synthetic_results())
    files = sorted(p.relative_to(rendered) for p in rendered.rglob("*") if p.is_file())
    assert len(files) >= 6
    assert files == sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    for name in files:
        assert (rendered / name).read_bytes() == (tmp_path / name).read_bytes(), name


def _browser():
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


PROBE = """<script>
addEventListener('load', () => setTimeout(() => {
  const v = document.querySelector('video'), table = document.querySelector('table');
  const fold = innerHeight;
  document.body.setAttribute('data-probe', JSON.stringify({
    images: [...document.images].map(i => i.complete ? i.naturalWidth : -1),
    video: v ? {width: v.videoWidth, ready: v.readyState, error: v.error ? v.error.code : null,
                top: v.getBoundingClientRect().top} : null,
    verdictTop: table.getBoundingClientRect().top, fold: fold,
    text: document.body.innerText}));
}, 1500));
</script>"""


def test_html_in_a_browser_shows_the_pair_the_verdicts_and_plays_the_video(results, rendered, tmp_path):
    browser = _browser()
    if browser is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium package)")
    page = (rendered / "report.html").read_text()
    # Two SSIM plots and the GIF of the pair above the fix's level; a test-only copy of the page
    # reports what the browser shows into the DOM.
    (tmp_path / "probe.html").write_text(page.replace("</body>", PROBE + "</body>"))
    for attempt in range(3):  # a browser start can fail on a loaded machine; the page is what is tested
        done = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
             "--autoplay-policy=no-user-gesture-required", "--window-size=1280,1024",
             "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={tmp_path / f'profile{attempt}'}",
             "--virtual-time-budget=8000", "--dump-dom", (tmp_path / "probe.html").as_uri()],
            capture_output=True, text=True, timeout=120)
        match = re.search(r'data-probe="([^"]*)"', done.stdout)
        if match:
            break
    assert match, done.stderr[-2000:]
    import html
    probe = json.loads(html.unescape(match[1]))
    shown = 3 if ffmpeg_path() else 4  # without an MP4 the headline pair is a GIF too
    assert len(probe["images"]) == shown and all(w > 0 for w in probe["images"]), probe["images"]
    text = probe["text"]
    assert f"Before / after: fingerprint (declared L0) vs {OUTSIDE} (declared L1)" in text
    assert f"SSIM to the reference: before (fingerprint, contaminated)" in text
    for cache in ("fingerprint", OUTSIDE, "hardened"):
        within, beyond = level_verdict_parts(results, "toy", cache)
        assert within in text and beyond in text
    assert probe["verdictTop"] < probe["fold"], probe  # the verdicts start above the fold
    if not ffmpeg_path():
        pytest.skip(MP4_MISSING)
    video = probe["video"]
    assert video and video["error"] is None and video["ready"] >= 1 and video["width"] > 0, video
    assert video["top"] < probe["fold"], video


@pytest.mark.core_model
def test_requests_per_design_count_the_fix_clean_up_to_its_level(rendered):
    """The seed fix (declared L1) is clean up to L1 and contaminated beyond it: the two are
    counted apart, and the contamination beyond is a finding, not a failure."""
    md = (rendered / "report.md").read_text()
    section = md.split("## Requests per design")[1].split("\n## ")[0]
    row = next(line for line in section.splitlines() if f"| {OUTSIDE} |" in line)
    up_to, beyond = [c.strip() for c in row.strip("|").split("|")][3:5]
    assert up_to.startswith("clean: 0/1 conclusive requests contaminated"), row
    assert beyond.startswith("finding: contaminated in 1/1 conclusive requests"), row
    html = (rendered / "report.html").read_text()
    assert '<td class="bad">finding' not in html and '<td class="good">clean: 0/1' in html


@pytest.mark.core_model
def test_ssim_captions_sit_above_the_frames_where_video_controls_do_not_cover_them():
    frames = np.full((2, 8, 8, 3), 200, np.uint8)
    with_captions = np.asarray(side_by_side([("a", frames)], [["SSIM 0.123", "SSIM 0.456"]])[0])
    without = np.asarray(side_by_side([("a", frames)])[0])
    grey = np.all(with_captions == 200, axis=2).any(axis=1).nonzero()[0]  # rows of the frame itself
    caption_rows = (with_captions[:grey[0]] != 255).any(axis=(1, 2)).nonzero()[0]
    assert len(caption_rows) and caption_rows.max() < grey[0], "no caption above the frame"
    assert not (with_captions[grey[-1] + 1:] != 255).any(), "something under the frame"
    assert with_captions.shape[0] > without.shape[0]


@pytest.mark.core_model
def test_a_real_models_clips_say_its_weights_are_random(results, rendered, tmp_path):
    import dataclasses
    from harness.report.render import RANDOM_WEIGHTS
    results.records = [dataclasses.replace(r, model="helios") for r in results.records]
    results.clips = {k: dataclasses.replace(c, model="helios") for k, c in results.clips.items()}
    write_report(tmp_path, results)
    md = (tmp_path / "report.md").read_text()
    assert md.count(RANDOM_WEIGHTS) >= 2  # beside the clip, and under Models
    assert RANDOM_WEIGHTS not in (rendered / "report.md").read_text()  # the toy's weights are its own


@pytest.mark.core_model
def test_a_clip_identical_to_an_earlier_one_is_said_to_be(tmp_path):
    """Two scenarios whose requests came out the same give byte-identical clips; the report
    says so under the second, so a reader does not take it for a copying mistake."""
    results = synthetic_results()
    first = results.clips["toy/freed_address_reused/seed0/request1"]
    results.clips["toy/natural_reuse/seed0/request1"] = dataclasses.replace(first, scenario="natural_reuse")
    write_report(tmp_path, results)
    sections = (tmp_path / "report.md").read_text().split("\n### ")[1:]
    videos = {}
    for section in sections:
        gif = re.search(r"videos/[^ )\"]+\.gif", section)
        if gif:
            digest = hashlib.sha256((tmp_path / gif.group(0)).read_bytes()).hexdigest()
            videos.setdefault(digest, []).append(section)
    twins = [group for group in videos.values() if len(group) > 1]
    assert len(twins) == 1 and len(twins[0]) == 2, videos.keys()
    earlier, later = twins[0]
    label = "Identical, frame for frame, to the clip of toy: freed_address_reused (L1), seed 0, request 1"
    assert label not in earlier and label in later, later
    # A clip unlike every other is not labelled.
    assert all("Identical, frame for frame" not in group[0] for group in videos.values() if len(group) == 1)
