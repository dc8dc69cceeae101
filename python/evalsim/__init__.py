"""evalsim from Python: the statistics of evaluating sampled language models.

Every number comes from the Rust library the ``evalsim`` command line is built on; this module only
converts Python values (numpy arrays, DataFrames, lists of dicts, keyword arguments) to its inputs
and its outputs back to Python values. The commands (``analyze``, ``compare``, ``fit``, ``plan``,
``run``) take the command line's options as keyword arguments, run the command line's own code, and
return the tables the command writes (DataFrames when pandas is installed, lists of dicts
otherwise) and its JSON summary as plain Python values. Files are written only when ``out`` is
given; figures only with ``figures=True``.

Errors the command line reports raise :class:`EvalsimError` (a ``ValueError``) with the same
message. Long computations release the GIL, and Ctrl-C interrupts them (``KeyboardInterrupt``).
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import warnings
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._native import EvalsimError

__version__: str = _native.VERSION

__all__ = [
    "EvalsimError",
    "pass_at_k",
    "pass_hat_k",
    "exact_pass_at_k",
    "exact_pass_hat_k",
    "exact_maj_at_k",
    "seed_sd",
    "question_se",
    "analyze",
    "compare",
    "fit",
    "plan",
    "run",
    "Analysis",
    "Fit",
    "Plan",
    "Run",
    "CANONICAL_COLUMNS",
]

#: The columns of the canonical sample format (one row per sample) that ``analyze`` and ``fit``
#: read from a DataFrame; other columns are ignored.
CANONICAL_COLUMNS: Tuple[str, ...] = (
    "problem_id",
    "correct",
    "answer",
    "reference",
    "model",
    "sample",
    "output_tokens",
    "cluster",
    "run",
)

ArrayLike = Union[int, float, Sequence[Any], np.ndarray]
Table = Any  # a pandas DataFrame when pandas is installed, else a list of dicts
Source = Union[str, "os.PathLike[str]", Sequence[Mapping[str, Any]], Any]

# ---------------------------------------------------------------------------------------------
# Exact functions, vectorised over numpy arrays (broadcast like numpy's own functions)
# ---------------------------------------------------------------------------------------------


def _ints(name: str, x: ArrayLike) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind in "iu":
        return a.astype(np.int64, copy=False)
    if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.floor(a)):
        return a.astype(np.int64)
    raise EvalsimError(f"{name}: expected whole numbers, got {a.dtype} values")


def _floats(name: str, x: ArrayLike) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind in "iuf":
        return a.astype(np.float64, copy=False)
    raise EvalsimError(f"{name}: expected numbers, got {a.dtype} values")


def _vectorised(native: Any, args: Sequence[np.ndarray], *extra: Any) -> Union[float, np.ndarray]:
    """Calls ``native`` on flat arrays (a length-1 array broadcasts) and gives the result numpy's
    broadcast shape of ``args`` (a float when every argument is a scalar)."""
    try:
        shape = np.broadcast_shapes(*(a.shape for a in args))
    except ValueError as e:
        raise EvalsimError(f"inputs do not broadcast: {e}") from None
    flat = []
    for a in args:
        if a.size == 1:
            flat.append(np.ascontiguousarray(a.reshape(1)))
        else:
            flat.append(np.ascontiguousarray(np.broadcast_to(a, shape).reshape(-1)))
    out = native(*flat, *extra)
    if shape == ():
        return float(out[0])
    return out.reshape(shape)


def pass_at_k(n: ArrayLike, c: ArrayLike, k: ArrayLike) -> Union[float, np.ndarray]:
    """Unbiased pass@k of problems with ``n`` samples of which ``c`` are correct:
    1 - C(n - c, k) / C(n, k) (Chen et al. 2021), computed as a product that never overflows.

    ``n``, ``c`` and ``k`` are integers or integer arrays, broadcast together; the result is a
    float for scalars, else an array of the broadcast shape. ``k`` must be in 1..=n and ``c`` at
    most ``n`` (:class:`EvalsimError` names the first element that is not).
    """
    return _vectorised(
        _native.pass_at_k, [_ints("pass_at_k: n", n), _ints("pass_at_k: c", c), _ints("pass_at_k: k", k)]
    )


def pass_hat_k(n: ArrayLike, c: ArrayLike, k: ArrayLike) -> Union[float, np.ndarray]:
    """Unbiased pass^k (all k samples right) of problems with ``n`` samples of which ``c`` are
    correct: C(c, k) / C(n, k). Broadcast as :func:`pass_at_k`."""
    return _vectorised(
        _native.pass_hat_k,
        [_ints("pass_hat_k: n", n), _ints("pass_hat_k: c", c), _ints("pass_hat_k: k", k)],
    )


def exact_pass_at_k(p: ArrayLike, k: ArrayLike) -> Union[float, np.ndarray]:
    """Exact pass@k = 1 - (1 - p)^k of a problem solved with probability ``p`` per sample
    (accurate to full relative precision when small). ``p`` in [0, 1], ``k`` >= 1; broadcast."""
    return _vectorised(
        _native.exact_pass_at_k, [_floats("exact_pass_at_k: p", p), _ints("exact_pass_at_k: k", k)]
    )


def exact_pass_hat_k(p: ArrayLike, k: ArrayLike) -> Union[float, np.ndarray]:
    """Exact pass^k = p^k (all k samples right) of rate ``p``; broadcast as :func:`exact_pass_at_k`."""
    return _vectorised(
        _native.exact_pass_hat_k, [_floats("exact_pass_hat_k: p", p), _ints("exact_pass_hat_k: k", k)]
    )


def exact_maj_at_k(
    p: ArrayLike, k: ArrayLike, attractor: ArrayLike = 0.0, rule: str = "random"
) -> Union[float, np.ndarray]:
    """Exact maj@k: the probability that a majority vote of ``k`` samples is right on a problem
    with correct rate ``p``, where a share ``attractor`` of the wrong answers is one repeated
    wrong answer and the rest are all different.

    ``rule`` scores ties: ``"random"`` (ties at the top split evenly), ``"strict"`` (a tie is not
    a win) or ``"absolute"`` (the right answer needs more than k/2 votes). ``p``, ``k`` and
    ``attractor`` broadcast together.
    """
    return _vectorised(
        _native.exact_maj_at_k,
        [
            _floats("exact_maj_at_k: p", p),
            _ints("exact_maj_at_k: k", k),
            _floats("exact_maj_at_k: attractor", attractor),
        ],
        rule,
    )


def seed_sd(rates: ArrayLike, n: int) -> float:
    """Seed standard deviation of a benchmark score (the mean over problems of c_i / n) with
    per-problem rates ``rates`` and ``n`` samples per problem: sqrt(sum p (1 - p) / n) / N."""
    return _native.seed_sd(np.ascontiguousarray(_floats("seed_sd: rates", rates).reshape(-1)), int(n))


def question_se(rates: ArrayLike) -> float:
    """Question-sampling standard error of the mean of ``rates``: their sample SD (ddof = 1) over
    sqrt(N), the floor that more samples per problem cannot lower (0 for one problem)."""
    return _native.question_se(np.ascontiguousarray(_floats("question_se: rates", rates).reshape(-1)))


# ---------------------------------------------------------------------------------------------
# Tables and results
# ---------------------------------------------------------------------------------------------


def _pandas() -> Any:
    try:
        import pandas  # noqa: PLC0415

        return pandas
    except ImportError:
        return None


def _typed_columns(rows: List[Dict[str, str]], header: List[str]) -> List[Dict[str, Any]]:
    """Cells of a CSV written by evalsim as Python values: a column whose cells all read as
    integers holds ints, as numbers floats (``inf`` too), else strings; an empty cell is None."""
    kinds: Dict[str, type] = {}
    for name in header:
        kind: type = int
        for r in rows:
            v = r[name]
            if v == "":
                continue
            if kind is int:
                try:
                    int(v)
                    continue
                except ValueError:
                    kind = float
            if kind is float:
                try:
                    float(v)
                    continue
                except ValueError:
                    kind = str
                    break
        kinds[name] = kind
    return [{n: (None if r[n] == "" else kinds[n](r[n])) for n in header} for r in rows]


def _table(data: bytes) -> Table:
    """A CSV file evalsim wrote, read back exactly (every number is the shortest text of its f64)."""
    pd = _pandas()
    if pd is not None:
        # Every number must read back to the same f64: pandas before 3.0 needs `round_trip`
        # for that; from 3.0 on it is the default (and the option deprecated).
        exact = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}
        return pd.read_csv(io.BytesIO(data), keep_default_na=False, na_values=[""], **exact)
    reader = csv.DictReader(io.StringIO(data.decode("utf-8")))
    rows = list(reader)
    return _typed_columns(rows, list(reader.fieldnames or []))


def _stack(tables: List[Table]) -> Table:
    pd = _pandas()
    if pd is not None:
        return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    return [row for t in tables for row in t]


class _Result:
    """What a command produced: its files (name -> bytes), the text it prints, its warnings."""

    def __init__(self, output: Tuple[List[Tuple[str, bytes]], str, List[str], int]) -> None:
        files, text, warns, code = output
        #: Every file the command writes into its output folder, by name.
        self.files: Dict[str, bytes] = dict(files)
        #: What the command prints.
        self.text: str = text
        #: The warnings the command prints on stderr (also issued as Python warnings).
        self.warnings: List[str] = list(warns)
        #: The command's exit code: 0, or 1 when a simulated number disagreed with its exact value.
        self.code: int = code
        for w in self.warnings:
            warnings.warn(w, stacklevel=4)

    def _json(self, name: str) -> Any:
        return json.loads(self.files[name].decode("utf-8"))

    def write(self, out: Union[str, "os.PathLike[str]"]) -> None:
        """Writes every file into the folder ``out`` as the command line does (all or nothing)."""
        _native.write(os.fspath(out), list(self.files.items()))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<evalsim.{type(self).__name__}: {len(self.files)} files>"


class Analysis(_Result):
    """The result of :func:`analyze` or :func:`compare`.

    ``summary`` is the command's ``summary.json`` as plain Python values; ``curves`` has one row
    per (model, metric, k) with the estimate, its standard errors and intervals (the per-model
    CSV files stacked); ``tables`` holds each CSV by file stem; ``comparison`` the paired
    comparison (None without one).
    """

    def __init__(self, output: Any) -> None:
        super().__init__(output)
        #: ``summary.json``: sources, models, every estimate and interval.
        self.summary: Dict[str, Any] = self._json("summary.json")
        #: Every CSV table by file stem (``model-NAME``, ``comparison``).
        self.tables: Dict[str, Table] = {
            name[: -len(".csv")]: _table(data) for name, data in self.files.items() if name.endswith(".csv")
        }
        #: The models' tables stacked: one row per (model, metric, k).
        self.curves: Table = _stack([t for n, t in self.tables.items() if n.startswith("model-")])
        #: The paired comparison B - A, or None.
        self.comparison: Optional[Table] = self.tables.get("comparison")
        #: The models analysed, in input order.
        self.models: List[str] = [m["summary"]["model"] for m in self.summary["models"]]


class Fit(_Result):
    """The result of :func:`fit`: the fitted scenario as TOML text (``scenario_toml``), the
    parameters with their estimates and intervals or refusals (``estimates``, the command's
    ``fit.csv``), observed against fitted counts (``counts``) and every diagnostic
    (``diagnostics``, the command's ``fit.json``)."""

    def __init__(self, output: Any) -> None:
        super().__init__(output)
        #: The scenario, ready for :func:`run` (``run(fit.scenario_toml)``).
        self.scenario_toml: str = self.files["scenario.toml"].decode("utf-8")
        #: One row per parameter: estimate, interval, status.
        self.estimates: Table = _table(self.files["fit.csv"])
        #: Observed against fitted counts of correct samples.
        self.counts: Table = _table(self.files["fit-counts.csv"])
        #: ``fit.json``: every estimate, interval, diagnostic and refusal.
        self.diagnostics: Dict[str, Any] = self._json("fit.json")


class Plan(_Result):
    """The result of :func:`plan`: ``grid`` has one row per (design, gap, N, n) cell with its
    exact power, loss-or-tie probability and interval half-width; ``summary`` is the command's
    ``plan.json``; ``passed`` tells whether every simulated check agreed with its exact value."""

    def __init__(self, output: Any) -> None:
        super().__init__(output)
        #: The grid, as the command's ``plan.csv``.
        self.grid: Table = _table(self.files["plan.csv"])
        #: ``plan.json``: the grid, the recommendation and the checks.
        self.summary: Dict[str, Any] = self._json("plan.json")
        #: True when every simulated check agreed with its exact value.
        self.passed: bool = self.code == 0


class Run(_Result):
    """The result of :func:`run`: every table the command writes (``tables``, by file stem),
    the checks of simulated against exact numbers (``checks``), ``summary.json`` (``summary``)
    and whether every check passed (``passed``)."""

    def __init__(self, output: Any) -> None:
        super().__init__(output)
        #: Every CSV table by file stem.
        self.tables: Dict[str, Table] = {
            name[: -len(".csv")]: _table(data) for name, data in self.files.items() if name.endswith(".csv")
        }
        #: One row per check: exact value, simulated value, its SE and z.
        self.checks: Table = self.tables["checks"]
        #: ``summary.json`` as plain Python values.
        self.summary: Dict[str, Any] = self._json("summary.json")
        #: True when every simulated check agreed with its exact value.
        self.passed: bool = self.code == 0


# ---------------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------------


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, tuple, np.ndarray)):
        return ",".join(_value(x) for x in v)
    return str(v)


def _flags(**options: Any) -> List[str]:
    """Keyword arguments as the command's flags: ``cap=8000`` -> ``--cap=8000``, a list joined
    with commas, True -> the bare flag, None and False -> nothing."""
    out = []
    for name, v in options.items():
        flag = "--" + name.replace("_", "-")
        if v is None or v is False:
            continue
        if v is True:
            out.append(flag)
        else:
            out.append(f"{flag}={_value(v)}")
    return out


def _is_dataframe(x: Any) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(x, pd.DataFrame)


def _column(series: Any) -> Any:
    a = series.to_numpy()
    kind = a.dtype.kind
    if kind in "iu":
        return np.ascontiguousarray(a, dtype=np.int64)
    if kind == "f":
        return np.ascontiguousarray(a, dtype=np.float64)
    if kind == "b":
        return np.ascontiguousarray(a, dtype=np.bool_)
    return series.to_numpy(dtype=object, na_value=None).tolist()


def _source(x: Any, name: str) -> Any:
    """A path as itself; a DataFrame or a list of dicts as canonical JSONL rows named ``name``."""
    if isinstance(x, (str, os.PathLike)):
        return os.fspath(x)
    if _is_dataframe(x):
        names = [c for c in CANONICAL_COLUMNS if c in x.columns]
        jsonl = _native.columns_jsonl(name, names, [_column(x[c]) for c in names])
        return (name, jsonl)
    if isinstance(x, (list, tuple)):
        return (name, _native.records_jsonl(name, list(x)))
    raise EvalsimError(
        f"{name}: a source of type {type(x).__name__}; expected a path, a pandas DataFrame with the "
        f"canonical columns ({', '.join(CANONICAL_COLUMNS)}) or a list of dicts"
    )


def _sources(sources: Sequence[Any]) -> List[Any]:
    out = []
    for i, s in enumerate(sources):
        kind = "dataframe" if _is_dataframe(s) else "records"
        name = kind if len(sources) == 1 else f"{kind}{i + 1}"
        out.append(_source(s, name))
    return out


def _input_flags(
    format: str, normalize: bool, filter: Optional[str], scorer: Optional[str], score_key: Optional[str], metric: Optional[str]
) -> List[str]:
    return _flags(
        format=None if format == "auto" else format,
        no_normalize=not normalize,
        filter=filter,
        scorer=scorer,
        score_key=score_key,
        metric=metric,
    )


def _finish(result: Any, out: Any) -> Any:
    if out is not None:
        result.write(out)
    return result


def analyze(
    source: Source,
    *more: Source,
    k: Optional[Iterable[int]] = None,
    rule: str = "random",
    cap: Optional[float] = None,
    bootstrap: int = 2000,
    seed: int = 1,
    format: str = "auto",
    normalize: bool = True,
    filter: Optional[str] = None,
    scorer: Optional[str] = None,
    score_key: Optional[str] = None,
    metric: Optional[str] = None,
    threads: Optional[int] = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    figures: bool = False,
) -> Analysis:
    """``evalsim analyze``: unbiased pass@k and pass^k, exact maj@k, standard errors and 95%
    intervals of per-sample results.

    ``source`` (and any further sources in ``more``) is a path in any format the command line
    reads (canonical JSONL or CSV, human-eval, lm-evaluation-harness, inspect_ai, an lm-eval
    output folder), a pandas DataFrame with the canonical columns (``CANONICAL_COLUMNS``), or a
    list of dicts with those keys. Rows are numbered from 1 in error messages, which name a
    DataFrame ``dataframe`` and a list ``records``; rows without a ``model`` belong to a model of
    that name. The options are the command's flags: ``k`` (list of k values), ``rule``
    (``random``, ``strict``, ``absolute`` or ``first``), ``cap`` (token cap), ``bootstrap``
    (resamples; 0 for none), ``seed``, ``format`` (of paths), ``normalize`` (answer
    normalisation), ``filter``/``metric`` (lm-eval), ``scorer``/``score_key`` (inspect_ai),
    ``threads``. The files are written into ``out`` when given, figures only with ``figures``.
    """
    flags = _flags(k=None if k is None else list(k), rule=rule, cap=cap, bootstrap=bootstrap, seed=seed, threads=threads)
    flags += _input_flags(format, normalize, filter, scorer, score_key, metric)
    flags += _flags(no_figures=not figures)
    return _finish(Analysis(_native.analyze(flags, _sources([source, *more]))), out)


def compare(
    a: Source,
    b: Optional[Source] = None,
    *,
    reruns: Optional[int] = None,
    **options: Any,
) -> Analysis:
    """``evalsim analyze --compare``: the paired comparison B - A of two models (two sources, or
    one source holding two models), in ``comparison``, beside each model's analysis.
    ``reruns`` simulated reruns give the probability that a rerun reverses the order (0: none);
    every other option is :func:`analyze`'s."""
    sources = [a] if b is None else [a, b]
    figures = bool(options.pop("figures", False))
    out = options.pop("out", None)
    k = options.pop("k", None)
    flags = ["--compare"] + _flags(
        k=None if k is None else list(k),
        reruns=reruns,
        rule=options.pop("rule", "random"),
        cap=options.pop("cap", None),
        bootstrap=options.pop("bootstrap", 2000),
        seed=options.pop("seed", 1),
        threads=options.pop("threads", None),
    )
    flags += _input_flags(
        options.pop("format", "auto"),
        options.pop("normalize", True),
        options.pop("filter", None),
        options.pop("scorer", None),
        options.pop("score_key", None),
        options.pop("metric", None),
    )
    if options:
        raise TypeError(f"compare() got unexpected keyword arguments: {', '.join(sorted(options))}")
    flags += _flags(no_figures=not figures)
    return _finish(Analysis(_native.analyze(flags, _sources(sources))), out)


def fit(
    source: Source,
    *more: Source,
    model: Optional[Union[str, Sequence[str]]] = None,
    seed: int = 1,
    format: str = "auto",
    normalize: bool = True,
    filter: Optional[str] = None,
    scorer: Optional[str] = None,
    score_key: Optional[str] = None,
    metric: Optional[str] = None,
    threads: Optional[int] = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    figures: bool = False,
) -> Fit:
    """``evalsim fit``: a scenario fitted jointly to every model of the sources (as
    :func:`analyze` takes them; models combined by name), with each parameter's estimate and
    interval or the reason it is refused. ``model`` fits only the models named (the first is the
    reference); ``seed`` is written into the scenario."""
    models = [model] if isinstance(model, str) else list(model or [])
    flags = [f"--model={m}" for m in models] + _flags(seed=seed, threads=threads)
    flags += _input_flags(format, normalize, filter, scorer, score_key, metric)
    flags += _flags(no_figures=not figures)
    return _finish(Fit(_native.fit(flags, _sources([source, *more]))), out)


def plan(
    *,
    mu: float = 0.2,
    sigma: float = 2.2,
    gap_logits: Optional[Sequence[float]] = None,
    gap_points: Optional[Sequence[float]] = None,
    metric: str = "pass1",
    problems: Sequence[int] = (30, 100, 300, 1000),
    samples: Optional[Sequence[int]] = None,
    k: Optional[Sequence[int]] = None,
    attractor: Optional[float] = None,
    rule: Optional[str] = None,
    shift_sd: Optional[float] = None,
    a_shift_sd: Optional[float] = None,
    target_power: Optional[float] = None,
    target_loss_or_tie: float = 0.05,
    target_halfwidth: float = 0.02,
    simulate_reruns: int = 20000,
    population_reruns: Optional[int] = None,
    check_cells: Union[str, int] = "all",
    check_population: Union[str, int] = 4,
    seed: Optional[int] = None,
    threads: Optional[int] = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    figures: bool = False,
) -> Plan:
    """``evalsim plan``: how many problems N and samples per problem n tell two models apart
    (B ahead of A by ``gap_logits``, or ``gap_points`` of pass@1), for a population of problems
    with logit mean ``mu`` and SD ``sigma``. The options are the command's flags (``evalsim plan
    --help``), with the same defaults and checks; the grid is in ``Plan.grid``."""
    flags = _flags(
        mu=float(mu),
        sigma=float(sigma),
        gap_logits=gap_logits,
        gap_points=gap_points,
        metric=metric,
        problems=problems,
        samples=samples,
        k=k,
        attractor=attractor,
        rule=rule,
        shift_sd=shift_sd,
        a_shift_sd=a_shift_sd,
        target_power=target_power,
        target_loss_or_tie=float(target_loss_or_tie),
        target_halfwidth=float(target_halfwidth),
        simulate_reruns=simulate_reruns,
        population_reruns=population_reruns,
        check_cells=check_cells,
        check_population=check_population,
        seed=seed,
        threads=threads,
        no_figures=not figures,
    )
    return _finish(Plan(_native.plan(flags)), out)


def run(
    scenario: Union[str, "os.PathLike[str]"],
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    figures: bool = False,
    *,
    seed: Optional[int] = None,
    threads: Optional[int] = None,
) -> Run:
    """``evalsim run``: every experiment of a scenario, simulated and checked against its exact
    values. ``scenario`` is a named scenario (``"note"``), a path to a ``.toml`` file, or the TOML
    text of a scenario (any string with a line break). Tables and checks are returned; files are
    written into ``out`` only when given, figures only with ``figures``. ``seed`` overrides the
    scenario's."""
    text = os.fspath(scenario)
    is_text = "\n" in text
    flags = _flags(seed=seed, threads=threads, no_figures=not figures)
    return _finish(Run(_native.run(text, is_text, flags)), out)
