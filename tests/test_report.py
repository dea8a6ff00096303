"""The report renderer on a small synthetic results file (no model run), and the
HTML in a real headless browser with no network."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import imageio.v3 as iio
import pytest
import torch

from harness.report import LABEL_HEIGHT, MIN_PANEL_WIDTH, panel_scale, verdict_line, write_report
from harness.run import CLEAN, CONTAMINATED, INCONCLUSIVE, encode_clip

pytestmark = [pytest.mark.cpu]  # no model runs here; all but the browser test are core_model

T, H, W = 4, 12, 16
EVIL = '<script>alert("x")</script> & "quotes"'


def _clip(value: int) -> torch.Tensor:
    """A flat clip with a marker pixel that moves, so no two frames are the same."""
    clip = torch.full((T, H, W, 3), value, dtype=torch.uint8)
    for t in range(T):
        clip[t, 0, t] = 255 - value
    return clip


def _record(cache, request, verdict, ssim=1.0, prompt="red circle moving right"):
    return {"scenario": "freed_address_reused", "level": "L1", "cache": cache, "device": "cpu", "seed": 0,
            "request": request, "prompt": prompt, "address_reused": verdict != INCONCLUSIVE,
            "addresses": {"positive": "0x1000", "negative": "0x2000"},
            "reused_from": {"positive": None if verdict == INCONCLUSIVE else "request 0 (positive)",
                            "negative": None},
            "false_hits": 12 if verdict == CONTAMINATED else 0, "kv_lookups": 12,
            "kv_equal": verdict != CONTAMINATED, "latents_equal": verdict != CONTAMINATED,
            "max_abs_err": 0.0 if verdict != CONTAMINATED else 1.5, "ssim_per_frame": [ssim] * T,
            "ssim_mean": ssim, "ssim_min": ssim, "psnr": None, "verdict": verdict}


@pytest.fixture
def results():
    return {
        "title": "Report " + EVIL,
        "environment": {"torch": "2.13.0", "device": "cpu", "device_name": "test cpu", "git_revision": "abc",
                        "allocator": {"backend": "test"}, "command": "pytest"},
        "plan": {"caches": ["fingerprint", "hardened"], "scenarios": ["freed_address_reused"], "seeds": [0],
                 "requests": 3, "preset": "tiny", "steps": 2},
        "records": [
            _record("fingerprint", 0, INCONCLUSIVE), _record("fingerprint", 1, CONTAMINATED, 0.11, EVIL),
            _record("fingerprint", 2, CONTAMINATED, 0.2),
            _record("hardened", 0, INCONCLUSIVE), _record("hardened", 1, CLEAN, prompt=EVIL),
            _record("hardened", 2, CLEAN),
        ],
        "clips": {"freed_address_reused/seed0/request1": {
            "scenario": "freed_address_reused", "seed": 0, "request": 1, "prompt": EVIL,
            "previous_prompt": "blue square moving down", "reference": encode_clip(_clip(200)),
            "designs": {"fingerprint": {"frames": encode_clip(_clip(30)), "contaminated": True},
                        "hardened": {"frames": encode_clip(_clip(200)), "contaminated": False}}}},
        "complete": True,
    }


@pytest.mark.core_model
def test_verdict_lines(results):
    recs = results["records"]
    assert verdict_line([r for r in recs if r["cache"] == "fingerprint"]).startswith(
        "contaminated in 2/2 requests, min SSIM 0.11")
    assert verdict_line([r for r in recs if r["cache"] == "hardened"]).startswith(
        "clean: 0/2 contaminated, bitwise equal to reference")
    only_inconclusive = [r for r in recs if r["verdict"] == INCONCLUSIVE]
    assert verdict_line(only_inconclusive).startswith("inconclusive")


@pytest.mark.core_model
def test_inconclusive_never_counted_as_pass(results, tmp_path):
    write_report(tmp_path, results)
    md = (tmp_path / "report.md").read_text()
    assert "1 inconclusive (no address reuse, not counted as passes)" in md
    assert "clean 0/2 (+1 inc.)" in md


@pytest.mark.core_model
def test_labels_are_escaped(results, tmp_path):
    write_report(tmp_path, results)
    page = (tmp_path / "report.html").read_text()
    assert "<script>" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;quotes&quot;" in page


@pytest.mark.core_model
def test_html_is_self_contained(results, tmp_path):
    write_report(tmp_path, results)
    page = (tmp_path / "report.html").read_text()
    assert not re.search(r'(src|href)="(?!data:)', page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert page.count('<img src="data:image/') == 3  # two plots and one GIF


@pytest.mark.core_model
def test_gif_panels_and_frames(results, tmp_path):
    write_report(tmp_path, results)
    gifs = sorted((tmp_path / "gifs").glob("*.gif"))
    assert [g.name for g in gifs] == ["toy-freed_address_reused-seed0-r1-fingerprint.gif"]
    frames = iio.imread(gifs[0])
    assert frames.shape[0] == T
    gap = 4
    scale = panel_scale(W)
    assert W * scale >= MIN_PANEL_WIDTH > W * (scale - 1)  # small clips are magnified until labels fit
    assert frames.shape[1:3] == (H * scale + LABEL_HEIGHT, 3 * W * scale + 2 * gap)
    # reference | before | after, in that order: the middle panel is the dark (contaminated) clip.
    row = frames[0, LABEL_HEIGHT + 2]
    panel = W * scale
    assert row[panel // 2].mean() > 150 and row[panel + gap + panel // 2].mean() < 60
    assert row[2 * (panel + gap) + panel // 2].mean() > 150


def _report_cli(capsys, folder):
    from harness.__main__ import main
    code = main(["report", str(folder)])
    return code, *capsys.readouterr()


@pytest.mark.core_model
def test_report_rerenders_from_json_alone(capsys, results, tmp_path):
    (tmp_path / "results.json").write_text(json.dumps(results))
    code, out, err = _report_cli(capsys, tmp_path)
    assert code == 0, err
    for name in ("report.md", "report.html", "ssim_requests.png", "ssim_frames.png"):
        assert (tmp_path / name).stat().st_size > 0


@pytest.mark.core_model
def test_report_of_missing_folder_is_one_line_error(capsys, tmp_path):
    code, out, err = _report_cli(capsys, tmp_path / "nope")
    assert code == 2 and err.count("\n") == 1 and "no results.json" in err


@pytest.mark.core_model
def test_report_is_deterministic(results, tmp_path):
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        write_report(tmp_path / run, results)
    for name in ("report.md", "report.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def _browser():
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def test_html_shows_every_image_offline(results, tmp_path):
    browser = _browser()
    if browser is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium package)")
    write_report(tmp_path, results)
    page = (tmp_path / "report.html").read_text()
    # A test-only copy reports each image's decoded width into the DOM.
    probe = ("<script>addEventListener('load', () => document.body.setAttribute('data-widths', "
             "[...document.images].map(i => i.complete ? i.naturalWidth : -1).join(',')));</script>")
    (tmp_path / "probe.html").write_text(page.replace("</body>", probe + "</body>"))
    for attempt in range(3):  # a browser start can fail on a loaded machine; the page is what is tested
        done = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
             "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={tmp_path / f'profile{attempt}'}",
             "--virtual-time-budget=5000", "--dump-dom", (tmp_path / "probe.html").as_uri()],
            capture_output=True, text=True, timeout=120)
        match = re.search(r'data-widths="([^"]*)"', done.stdout)
        if match:
            break
    assert match, done.stderr[-2000:]
    widths = [int(w) for w in match[1].split(",")]
    assert len(widths) == 3 and all(w > 0 for w in widths), widths
