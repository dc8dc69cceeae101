"""On the same inputs, Python and the command line give identical numbers: the Python results are
the files the command writes, byte for byte, and tables read from them hold the same floats."""

import json
import math

import numpy as np
import pandas as pd
import pytest

import evalsim
from conftest import FIXTURES

CANONICAL = FIXTURES / "analyze" / "canonical.jsonl"
HARNESS_FILES = [
    FIXTURES / "analyze" / "canonical.csv",
    FIXTURES / "analyze" / "humaneval_samples.jsonl_results.jsonl",
    FIXTURES / "analyze" / "inspect_log_gsm8k.json",
    FIXTURES / "harness" / "inspect" / "epochs-eval.eval",
    FIXTURES / "harness" / "inspect" / "dict-score.eval",
    FIXTURES / "harness" / "lm_eval" / "gen" / "fixture-lm",
    FIXTURES / "harness" / "lm_eval" / "group-a" / "fixture-lm",
    FIXTURES / "fit" / "humaneval_164.jsonl",
]


@pytest.mark.parametrize("path", HARNESS_FILES, ids=lambda p: p.name)
def test_analyze_of_a_file_writes_what_the_cli_writes(path, cli_files):
    options = {"dict-score.eval": {"score_key": "exact"}, "group-a": {"metric": "acc"}}.get(
        path.name, {"metric": "acc"} if path.parent.name == "group-a" else {}
    )
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in options.items()]
    expected = cli_files("analyze", path, "--no-figures", *flags)
    got = evalsim.analyze(str(path), **options)
    assert got.files == expected
    assert got.summary == json.loads(expected["summary.json"])


def test_analyze_options_reach_the_command(cli_files):
    path = FIXTURES / "analyze" / "canonical.jsonl"
    expected = cli_files(
        "analyze", path, "--no-figures", "--k", "1,2", "--rule", "strict", "--bootstrap", "300",
        "--seed", "7", "--cap", "2000", "--no-normalize",
    )
    got = evalsim.analyze(str(path), k=[1, 2], rule="strict", bootstrap=300, seed=7, cap=2000, normalize=False)
    assert got.files == expected


def test_compare_of_two_models_writes_what_the_cli_writes(cli_files):
    a = FIXTURES / "harness" / "lm_eval" / "group-a" / "fixture-lm"
    b = FIXTURES / "harness" / "lm_eval" / "group-b" / "fixture-lm-2"
    expected = cli_files("analyze", a, b, "--compare", "--no-figures", "--reruns", "2000", "--metric", "acc")
    got = evalsim.compare(str(a), str(b), reruns=2000, metric="acc")
    assert got.files == expected
    assert got.comparison is not None and len(got.comparison) > 0


def test_a_dataframe_gives_the_numbers_of_the_same_rows_in_a_file(cli_files, tmp_path):
    rows = [json.loads(line) for line in (FIXTURES / "fit" / "humaneval_164.jsonl").read_text().splitlines() if line.strip()]
    df = pd.DataFrame(rows).rename(columns={"task_id": "problem_id", "passed": "correct"})
    df["model"] = "m"
    df["answer"] = np.where(df.index % 3 == 0, None, (df.index % 5).astype(str))
    path = tmp_path / "rows.jsonl"
    df.to_json(path, orient="records", lines=True)
    expected = cli_files("analyze", path, "--no-figures", "--k", "1,4,10")
    got = evalsim.analyze(df, k=[1, 4, 10])
    assert got.files["summary.json"] != expected["summary.json"]  # the sources are named apart
    cli_table = evalsim._table(expected["model-m.csv"])
    numbers = [c for c in cli_table.columns if c not in ("source",)]
    pd.testing.assert_frame_equal(got.tables["model-m"][numbers], cli_table[numbers], check_exact=True)
    # The list of dicts reads the same.
    from_records = evalsim.analyze(df.to_dict("records"), k=[1, 4, 10])
    assert from_records.files["model-m.csv"].replace(b"records", b"dataframe") == got.files["model-m.csv"]


def test_tables_without_pandas_hold_the_same_numbers(monkeypatch):
    with_pandas = evalsim.analyze(str(CANONICAL), bootstrap=100)
    monkeypatch.setattr(evalsim, "_pandas", lambda: None)
    without = evalsim.analyze(str(CANONICAL), bootstrap=100)
    assert isinstance(without.curves, list) and isinstance(without.curves[0], dict)
    for row, (_, frame_row) in zip(without.curves, with_pandas.curves.iterrows()):
        for key, value in row.items():
            other = frame_row[key]
            if value is None:
                assert isinstance(other, float) and math.isnan(other), key
            else:
                assert value == other, key


def test_fit_writes_what_the_cli_writes(cli, cli_files, tmp_path):
    path = FIXTURES / "fit" / "humaneval_164.jsonl"
    expected = cli_files("fit", path, "--no-figures", "--seed", "3")
    got = evalsim.fit(str(path), seed=3)
    assert got.files == expected
    printed = cli("fit", path, "--quiet", "--no-figures", "--seed", "3", "--out", tmp_path / "fit")
    assert got.scenario_toml == printed.stdout


def test_plan_writes_what_the_cli_writes(cli_files):
    expected = cli_files(
        "plan", "--problems", "30,100", "--samples", "1,4", "--simulate-reruns", "2000",
        "--gap-points", "2,5", "--no-figures", "--seed", "5",
    )
    got = evalsim.plan(problems=[30, 100], samples=[1, 4], simulate_reruns=2000, gap_points=[2, 5], seed=5)
    assert got.files == expected
    assert got.passed


def test_plan_of_maj_with_negative_numbers_writes_what_the_cli_writes(cli_files):
    expected = cli_files(
        "plan", "--metric", "maj", "--k", "1,5", "--attractor", "0.3", "--mu", "-0.5",
        "--problems", "50", "--simulate-reruns", "0", "--no-figures",
    )
    got = evalsim.plan(metric="maj", k=[1, 5], attractor=0.3, mu=-0.5, problems=[50], simulate_reruns=0)
    assert got.files == expected


def test_run_of_a_named_scenario_writes_what_the_cli_writes(cli_files):
    expected = cli_files("run", "note", "--no-figures")
    got = evalsim.run("note")
    # results.json holds wall times; every table and the checks are the same bytes.
    tables = {n for n in expected if n.endswith(".csv")}
    assert tables and {n: got.files[n] for n in tables} == {n: expected[n] for n in tables}
    assert got.passed and len(got.checks) > 0


def test_run_of_toml_text_equals_run_of_its_file(tmp_path):
    text = (FIXTURES.parent.parent / "scenarios" / "note.toml").read_text()
    path = tmp_path / "scenario.toml"  # a text scenario is named `scenario`
    path.write_text(text)
    by_text = evalsim.run(text, seed=11)
    by_path = evalsim.run(str(path), seed=11)
    assert by_text.files["checks.csv"] == by_path.files["checks.csv"]


def test_out_writes_the_files_and_figures_only_when_asked(tmp_path):
    evalsim.analyze(str(CANONICAL), out=tmp_path / "a", bootstrap=10)
    names = {p.name for p in (tmp_path / "a").iterdir()}
    assert "summary.json" in names and not any(n.endswith(".png") for n in names)
    evalsim.analyze(str(CANONICAL), out=tmp_path / "b", bootstrap=10, figures=True)
    assert any(p.name.endswith(".png") for p in (tmp_path / "b").iterdir())
