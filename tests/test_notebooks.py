"""The notebooks in examples/ run end to end (executed with nbclient in a fresh kernel), and
results show in them as HTML."""

import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "examples").rglob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="nbformat is in the test extra: pip install -e '.[test]'")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is in the test extra: pip install -e '.[test]'")
    nb = nbformat.read(path, as_version=4)
    shutil.copy(path, tmp_path / path.name)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if o.output_type == "execute_result" and "text/html" in o.get("data", {})]
    if path.name == "quickstart.ipynb":
        # The DataFrame, the analysis and the run result each show as HTML, with embedded figures.
        assert len(html) >= 4
        assert any("iostack analysis" in h and "data:image/png;base64," in h for h in html)
        assert any("iostack run" in h and "data:image/png;base64," in h for h in html)
        assert (tmp_path / "report.html").stat().st_size > 10_000


SCRIPTS = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_example_script_runs(path):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
