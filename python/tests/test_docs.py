"""The tour in docs/python.md runs: its ```python blocks are executed in order, in one namespace,
in a fresh folder."""

import re

from conftest import ROOT


def test_the_python_tour_runs(tmp_path, monkeypatch, capsys):
    text = (ROOT / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 6
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/python.md block {i + 1}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "dataframe:1: field `correct`" in out
    assert (tmp_path / "note-run" / "checks.csv").is_file()
