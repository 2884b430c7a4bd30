"""iostack report: one self-contained HTML file, rendered by headless Chromium and checked."""

import html
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import iostack
from iostack.report import ReportError, build_html, write


def _browser():
    """The Chromium executable, or None; fails when the project's set-up should have installed
    it (IOSTACK_REQUIRE_BROWSER=1, as .ci/run sets)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    msg = "Chromium is not installed (scripts/install.sh installs Debian's `chromium` where it can: as root with apt-get)"
    if os.environ.get("IOSTACK_REQUIRE_BROWSER") == "1":
        pytest.fail(msg + " and IOSTACK_REQUIRE_BROWSER=1")
    pytest.skip(msg)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "iostack.cli", *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def results(shared, tmp_path):
    """Results of every kind: a sim JSON, a sweep-like table as CSV, JSON Lines and Parquet, a run
    JSON, an analyze JSON and a directory of PNG figures."""
    vscsi = shared("traces", "cloudphysics", "cloudPhysicsIO.vscsi")
    msr = shared("traces", "msr_cambridge", "msr-cambridge1-sample.csv")
    d = tmp_path / "in"
    d.mkdir()
    r = _cli("sim", vscsi, "--policy", "lru,arc", "--cache", "100,489,2448", "--unit-size", "--json")
    assert r.returncode == 0, r.stderr
    (d / "sim.json").write_text(r.stdout)
    df = pd.DataFrame(json.loads(r.stdout))
    df.to_csv(d / "sweep.csv", index=False)
    df.to_json(d / "sweep.jsonl", orient="records", lines=True)
    df.to_parquet(d / "sweep.parquet")
    (d / "run.json").write_text(json.dumps(iostack.run(msr, cache="16MiB", prefetch="linux", device="hdd:st3400620as")))
    (d / "analyze.json").write_text(json.dumps(iostack.analyze(msr).report))
    figs = tmp_path / "figs"
    iostack.plot.write_run(json.loads((d / "run.json").read_text()), figs)
    return d, figs


def test_report_is_self_contained(results, tmp_path):
    d, figs = results
    inputs = [d / "sim.json", d / "sweep.csv", d / "sweep.jsonl", d / "sweep.parquet", d / "run.json", d / "analyze.json", figs]
    out = tmp_path / "report.html"
    r = _cli("report", *inputs, "--out", out)
    assert r.returncode == 0, r.stderr
    doc = out.read_text()
    assert doc.startswith("<!DOCTYPE html>")
    assert f"iostack {iostack.__version__}" in doc
    # Nothing loaded from elsewhere: every image is embedded, no scripts or stylesheets by URL.
    assert not re.search(r'<(script|link)\b', doc)
    srcs = re.findall(r'<img src="([^"]*)"', doc)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)
    # 4 tables' MRCs, the run's 3 figures, the analysis's 5, the directory's 4.
    assert len(srcs) == 4 + 3 + 5 + 4
    assert "msr-cambridge1-sample.csv" in doc and "hdd:st3400620as" in doc  # trace summary, echoed config
    assert "@media print" in doc
    # Same inputs, same file.
    assert build_html(inputs) == doc


def test_report_gathers_reproductions(tmp_path):
    # Two stored reproductions: one that holds (Split Table 1) and one that differs (DULO Table II).
    repro = pathlib.Path(__file__).resolve().parent.parent / "docs" / "repro"
    inputs = [repro / "split-table1.json", repro / "dulo-table2.json"]
    doc = build_html(inputs)
    reports = [json.loads(p.read_text()) for p in inputs]
    for r in reports:
        agree = sum(c["ok"] for c in r["checks"])
        verdict = "holds" if agree == len(r["checks"]) else "differs"
        assert f"Verdict: <b>{verdict}</b> ({agree} of {len(r['checks'])} checks agree)" in doc
        for c in r["checks"]:
            assert html.escape(c["what"]) in doc
    assert len(re.findall(r'<img src="data:image/png;base64,', doc)) == sum(len(r["figures"]) for r in reports)
    out = tmp_path / "r.html"
    assert _cli("report", *inputs, "--out", out).returncode == 0 and out.read_text() == doc

def test_bad_inputs_name_the_file_and_write_nothing(tmp_path):
    out = tmp_path / "r.html"
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a result"}')
    r = _cli("report", bad, "--out", out)
    assert r.returncode == 1 and "bad.json: not an iostack result" in r.stderr
    assert not out.exists()
    broken = tmp_path / "broken.json"
    broken.write_text("[1,")
    with pytest.raises(ReportError, match="broken.json: line 1: not JSON"):
        write([broken], out)
    with pytest.raises(ReportError, match="nosuch.csv: no such file"):
        write([tmp_path / "nosuch.csv"], out)
    assert not out.exists() and not list(tmp_path.glob(".r.html*"))


def test_chromium_renders_the_report(results, tmp_path):
    browser = _browser()
    d, figs = results
    out = tmp_path / "report.html"
    write([d / "sweep.parquet", d / "run.json", d / "analyze.json", figs], out)
    n_img = out.read_text().count("<img ")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([browser, *flags, "--dump-dom", out.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    # The browser parsed the whole document: its figures and tables are in the DOM.
    assert html.count("<img ") == n_img >= 10
    assert html.count("<table") >= 6
    assert html.count("<tr") > 30
    shot = tmp_path / "shot.png"
    r = subprocess.run([browser, *flags, f"--screenshot={shot}", "--window-size=1200,2400", out.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    import matplotlib.image

    px = matplotlib.image.imread(str(shot))[:, :, :3]
    assert px.shape[0] >= 2000 and px.shape[1] >= 1000
    # Not blank: many colours, and matplotlib's first line colour (#1f77b4) drawn by a figure.
    assert len(np.unique((px * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 50
    blue = np.all(np.abs(px - np.array([0x1F, 0x77, 0xB4]) / 255) < 0.03, axis=2)
    assert blue.sum() > 200, "no figure drawn in the screenshot"
