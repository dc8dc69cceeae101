"""Errors the command line reports raise EvalsimError (a ValueError) with the same message."""

import json

import numpy as np
import pandas as pd
import pytest

import evalsim
from conftest import FIXTURES


def cli_error(cli, *args):
    done = cli(*args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ")
    return done.stderr[len("error: ") :].rstrip("\n")


def test_evalsim_error_is_a_value_error_with_the_exit_code():
    assert issubclass(evalsim.EvalsimError, ValueError)
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.pass_at_k(3, 5, 1)
    assert "c = 5 correct out of n = 3 samples is impossible" in str(e.value)
    assert "element 0" in str(e.value) and e.value.code == 2


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: evalsim.pass_at_k([5, 5], [1, 2], [1, 9]), "element 1 (n = 5, c = 2, k = 9)"),
        (lambda: evalsim.pass_hat_k(5, -1, 1), "c = -1; expected a non-negative integer"),
        (lambda: evalsim.pass_at_k(5, 1, 0), "k"),
        (lambda: evalsim.pass_at_k(5.5, 1, 1), "expected whole numbers"),
        (lambda: evalsim.exact_pass_at_k(1.5, 2), "p = 1.5; expected a probability in [0, 1]"),
        (lambda: evalsim.exact_pass_hat_k(0.5, 0), "k = 0; expected a whole number from 1"),
        (lambda: evalsim.exact_maj_at_k(0.5, 3, 0.5, "majority"), 'rule = "majority"'),
        (lambda: evalsim.exact_maj_at_k(0.5, 3, -0.1), "attractor = -0.1"),
        (lambda: evalsim.pass_at_k([1, 2], [1, 1, 1], 1), "do not broadcast"),
        (lambda: evalsim.seed_sd([], 4), "no rates given"),
        (lambda: evalsim.seed_sd([0.5], 0), "n = 0"),
        (lambda: evalsim.question_se([0.2, np.nan]), "element 1: rate = NaN"),
    ],
)
def test_bad_arguments_of_the_exact_functions_are_named(call, needle):
    with pytest.raises(evalsim.EvalsimError) as e:
        call()
    assert needle in str(e.value)


def test_a_file_error_has_the_cli_message(cli, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("problem_id,correct\na,1\nb,yes\n")
    expected = cli_error(cli, "analyze", bad, "--out", tmp_path / "o")
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.analyze(str(bad))
    assert str(e.value) == expected
    assert f"{bad}:3" in expected and "`correct`" in expected
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.fit(str(missing))
    assert str(e.value) == cli_error(cli, "fit", missing, "--out", tmp_path / "o")


def test_a_harness_file_refused_by_the_cli_is_refused_with_its_message(cli, tmp_path):
    path = FIXTURES / "analyze" / "lm_eval_samples_gsm8k.jsonl"
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.analyze(str(path))
    assert str(e.value) == cli_error(cli, "analyze", path, "--out", tmp_path / "o")


def test_option_errors_have_the_cli_message(cli, tmp_path):
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.plan(sigma=-1.0)
    assert str(e.value) == cli_error(cli, "plan", "--sigma", "-1", "--out", tmp_path / "o")
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.plan(metric="maj", k=[3])
    assert str(e.value) == cli_error(cli, "plan", "--metric", "maj", "--k", "3", "--out", tmp_path / "o")
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.analyze(str(FIXTURES / "analyze" / "canonical.jsonl"), cap=-5.0)
    assert str(e.value) == cli_error(cli, "analyze", FIXTURES / "analyze" / "canonical.jsonl", "--cap", "-5", "--out", tmp_path / "o")
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.run("no-such-scenario")
    assert str(e.value) == cli_error(cli, "run", "no-such-scenario", "--out", tmp_path / "o")


def test_a_flag_value_clap_refuses_names_the_flag():
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.analyze(str(FIXTURES / "analyze" / "canonical.jsonl"), k=[0])
    assert str(e.value).startswith("analyze: invalid value '0' for '--k")
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.analyze(str(FIXTURES / "analyze" / "canonical.jsonl"), rule="majority")
    assert "'--rule" in str(e.value) and "random" in str(e.value)


def test_scenario_text_errors_are_located():
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.run("[benchmark]\nproblems = -3\n")
    assert str(e.value).startswith("<text>:2:") and "benchmark.problems" in str(e.value)


def test_dataframe_and_record_errors_name_the_row_and_field():
    df = pd.DataFrame({"problem_id": ["a", "b", "c"], "correct": [True, False, "yes"]})
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.analyze(df)
    assert str(e.value).startswith("dataframe:3: field `correct` has invalid value \"yes\"")
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.analyze([{"problem_id": "a", "correct": 1}, {"correct": 1}])
    assert str(e.value).startswith("records:2: missing field `problem_id`")
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.analyze([{"problem_id": "a", "correct": 1, "output_tokens": object()}])
    assert "records:1: field `output_tokens` holds a value of type object" in str(e.value)
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.analyze(pd.DataFrame({"id": [1], "correct": [1]}))
    assert "dataframe:1" in str(e.value) and "problem_id" in str(e.value)
    with pytest.raises(evalsim.EvalsimError) as e:
        evalsim.analyze(42)
    assert "expected a path, a pandas DataFrame" in str(e.value)


def test_a_missing_cell_is_a_missing_value_as_in_a_file(tmp_path):
    df = pd.DataFrame({"problem_id": ["a", "a", "b"], "correct": [1, 0, 1], "answer": ["x", None, np.nan]})
    got = evalsim.analyze(df, bootstrap=0)
    rows = [json.dumps({k: (None if isinstance(v, float) else v) for k, v in r.items()}) for r in df.to_dict("records")]
    path = tmp_path / "dataframe"
    path.write_text("\n".join(rows) + "\n")
    from_file = evalsim.analyze(str(path), bootstrap=0)
    assert got.files["model-dataframe.csv"] == from_file.files["model-dataframe.csv"].replace(str(path).encode(), b"dataframe")
