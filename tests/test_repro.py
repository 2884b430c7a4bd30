"""`iostack repro`: checks with tolerances, the exit code, and `--plot` through the Python entry point."""

import subprocess
import sys

from iostack import _core
from iostack.plots import plot_repro

PNG = b"\x89PNG\r\n\x1a\n"


def run_cli(*args):
    """Runs the installed Python entry point in a child process."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; from iostack.cli import main; sys.argv[0] = 'iostack'; main()", *args],
        capture_output=True,
        text=True,
    )


def test_repro_prints_tolerances_and_plots_the_papers_figure(tmp_path):
    out = tmp_path / "plots"
    p = run_cli("repro", "dulo-table1", "--plot", str(out))
    assert p.returncode == 0, p.stderr
    assert "tolerance" in p.stdout and "verdict: holds" in p.stdout
    f = out / "dulo-table1-table1-cumulative-time.png"
    assert f.exists() and f.read_bytes()[:8] == PNG


def test_rust_cli_explains_that_plots_need_python(tmp_path):
    code = _core.main(["iostack", "repro", "dulo-table1", "--plot", str(tmp_path)])
    assert code == 1
    assert not any(tmp_path.iterdir())


def test_unknown_reproduction_fails_without_plots(tmp_path):
    p = run_cli("repro", "no-such-figure", "--plot", str(tmp_path / "x"))
    assert p.returncode == 1
    assert "unknown reproduction" in p.stderr
    assert not (tmp_path / "x").exists()


def test_plot_repro_draws_lines_and_bars(tmp_path):
    report = {
        "name": "demo",
        "source": "a paper",
        "figures": [
            {"name": "line", "title": "t", "x_label": "x", "y_label": "y", "kind": "line", "log_x": True, "x_ticks": [],
             "series": [{"label": "iostack", "paper": False, "x": [1, 2, 4], "y": [0.1, 0.2, 0.3]},
                        {"label": "paper", "paper": True, "x": [2], "y": [0.25]}]},
            {"name": "bar", "title": "t", "x_label": "", "y_label": "y", "kind": "bar", "x_ticks": ["a", "b"],
             "series": [{"label": "paper", "paper": True, "x": [0, 1], "y": [0.5, 0.2]},
                        {"label": "iostack", "paper": False, "x": [0, 1], "y": [0.4, 0.3]}]},
        ],
    }
    paths = plot_repro(report, tmp_path)
    assert [p.name for p in paths] == ["demo-line.png", "demo-bar.png"]
    assert all(p.read_bytes()[:8] == PNG for p in paths)
