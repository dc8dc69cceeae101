//! lm-evaluation-harness `--log_samples` files (`samples_<task>_<date>.jsonl`) and the
//! `results_<date>.json` beside them.
//!
//! Correctness is the per-row metric lm-eval itself logged (the names are in the row's `metrics`
//! list: `acc`, `acc_norm`, `exact_match`, a custom metric), never a comparison of response text
//! with `target`. One row is one sample; its answer (for maj@k) is the argmax choice of a
//! loglikelihood / multiple-choice row (`filtered_resps` holds one `[logprob, is_greedy]` pair per
//! choice) or the filtered response of a generate row (`[invalid]`: a missing answer). A generate
//! row with several generations (`repeats`) is read only when its metric value is a list with one
//! 0/1 per generation; lm-eval's stock metrics log one value per document, which is refused.
//!
//! Depends on `read::fields`, the shared line iterator and [`crate::analyze::data`]'s builder;
//! computes no statistics (a harness's own aggregate is copied, never recomputed).
use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use super::fields::{parse_object, quoted_list, Ctx};
use super::{for_each_line, FormatReader, ReadOptions};
use crate::analyze::data::{Dataset, DatasetBuilder, HarnessAggregate, Sample};
use crate::analyze::{AnalyzeError, Result};

/// lm-eval marks an answer its filter could not extract with this string.
const LM_EVAL_INVALID: &str = "[invalid]";

/// The metric of a row as 0/1 per sample.
fn binary(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) if n.as_f64() == Some(1.0) => Some(true),
        Value::Number(n) if n.as_f64() == Some(0.0) => Some(false),
        _ => None,
    }
}

/// A per-sample metric value that is not 0/1 but a number: partial credit (checked to lie in
/// [0, 1] when pushed).
fn partial(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// Pushes one sample scored `value`: 0/1 (or a boolean) as right or wrong, another number in
/// [0, 1] as partial credit.
fn push_valued(
    builder: &mut DatasetBuilder,
    line: usize,
    sample: Sample,
    value: &Value,
    field: &str,
) -> Result<()> {
    match (binary(value), partial(value)) {
        (Some(c), _) => builder.push(
            line,
            Sample {
                correct: Some(c),
                ..sample
            },
        ),
        (None, Some(x)) => builder.push_scored(line, sample, x, field),
        (None, None) => Err(AnalyzeError::BadField {
            source_name: builder.source().to_string(),
            line,
            field: field.to_string(),
            value: value.to_string(),
            expected: "a per-sample value: 0/1, true/false or a score in [0, 1]".to_string(),
        }),
    }
}

/// The argmax choice of a multiple-choice row (`[[logprob, is_greedy], ...]`, written as numbers
/// and booleans or as their strings), or `None` when `filtered` is not of that shape.
fn argmax_choice(filtered: &[Value]) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, pair) in filtered.iter().enumerate() {
        let [first, greedy] = pair.as_array()?.as_slice() else {
            return None;
        };
        match greedy {
            Value::Bool(_) => {}
            Value::String(g) if g == "True" || g == "False" => {}
            _ => return None,
        }
        let lp = match first {
            Value::Number(n) => n.as_f64()?,
            Value::String(s) => s.parse::<f64>().ok()?,
            _ => return None,
        };
        if best.is_none_or(|(_, b)| lp > b) {
            best = Some((i, lp));
        }
    }
    best.map(|(i, _)| i)
}

/// The lm-eval `--log_samples` reader.
pub(super) struct LmEval;

impl FormatReader for LmEval {
    fn read(
        &self,
        input: &mut dyn BufRead,
        builder: &mut DatasetBuilder,
        options: &ReadOptions,
    ) -> Result<()> {
        read_lm_eval(
            input,
            builder,
            options.filter.as_deref(),
            options.metric.as_deref(),
            options.cluster.as_deref(),
        )
    }
}

/// Reads one `samples_*.jsonl`: `filter` chooses the filter (required when the rows have
/// several), `metric` the per-row metric (required when rows log several), `cluster` labels every
/// row (problem ids become `<cluster>/<doc_id>`).
pub(super) fn read_lm_eval(
    reader: &mut dyn BufRead,
    builder: &mut DatasetBuilder,
    filter: Option<&str>,
    metric: Option<&str>,
    cluster: Option<&str>,
) -> Result<()> {
    let source = builder.source().to_string();
    let mut seen: Vec<String> = Vec::new();
    let mut chosen: Option<String> = filter.map(str::to_string);
    let mut chosen_metric: Option<String> = metric.map(str::to_string);
    for_each_line(reader, &source, |line, text| {
        let obj = parse_object(&source, line, text)?;
        let ctx = Ctx {
            source: &source,
            line,
        };
        if obj.contains_key("results") && obj.contains_key("config") {
            return Err(ctx.missing(
                "doc_id",
                "a `samples_<task>_*.jsonl` file; this is lm-eval's `results_*.json`: pass the \
                 samples file beside it, or the output directory",
            ));
        }
        let row_filter = match obj.get("filter") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => return Err(ctx.bad("filter", other, "a filter name (string)")),
            None => "none".to_string(),
        };
        if !seen.contains(&row_filter) {
            seen.push(row_filter.clone());
        }
        let wanted = chosen.get_or_insert_with(|| row_filter.clone());
        if *wanted != row_filter {
            return Ok(());
        }
        let doc = ctx.id(&obj, "doc_id")?;
        let problem_id = match cluster {
            Some(c) => format!("{c}/{doc}"),
            None => doc,
        };
        let names = row_metrics(&ctx, &obj)?;
        let name = choose_metric(&ctx, &names, &mut chosen_metric)?;
        let value = obj.get(&name).ok_or_else(|| {
            ctx.missing(
                &name,
                "the per-sample value of the metric the row lists in `metrics`",
            )
        })?;
        let filtered = match obj.get("filtered_resps") {
            Some(Value::Array(items)) => items,
            Some(other) => return Err(ctx.bad("filtered_resps", other, "an array")),
            None => return Err(ctx.missing("filtered_resps", "the filtered responses of the row")),
        };
        if filtered.is_empty() {
            return builder.zero_samples(line, &problem_id);
        }
        // Loglikelihood / multiple choice: one pair per choice; the answer is the argmax.
        if let Some(choice) = argmax_choice(filtered) {
            return push_valued(
                builder,
                line,
                Sample {
                    problem_id,
                    answer: Some(Some(format!("choice {choice}"))),
                    cluster: cluster.map(str::to_string),
                    ..Sample::default()
                },
                value,
                &name,
            );
        }
        // Generate: the filtered answers, one per generation left after the filter.
        let answers = filtered_answers(&ctx, filtered)?;
        if answers.is_empty() {
            return builder.zero_samples(line, &problem_id);
        }
        let generations = match obj.get("resps") {
            Some(Value::Array(r)) => r
                .iter()
                .map(|x| x.as_array().map_or(1, Vec::len))
                .sum::<usize>(),
            _ => answers.len(),
        };
        let flags: Vec<&Value> = match value {
            Value::Array(items) if items.len() == answers.len() => items.iter().collect(),
            v if answers.len() == 1 => vec![v],
            v => {
                return Err(ctx.bad(
                    &name,
                    v,
                    &format!(
                        "one 0/1 per generation: the row has {} generations after filter \
                         `{row_filter}` ({generations} sampled) but lm-eval logged one `{name}` \
                         for the whole document, so which generations were right is not in the \
                         file. evalsim does not re-grade text against `target`. Usable instead: a \
                         filter that keeps one answer per document (e.g. take_first) read as one \
                         sample per document, or a custom metric that returns a list with one \
                         0/1 per generation",
                        answers.len()
                    ),
                ))
            }
        };
        for (answer, value) in answers.into_iter().zip(flags) {
            let answer = answer.filter(|a| a.trim() != LM_EVAL_INVALID);
            push_valued(
                builder,
                line,
                Sample {
                    problem_id: problem_id.clone(),
                    answer: Some(answer),
                    cluster: cluster.map(str::to_string),
                    ..Sample::default()
                },
                value,
                &name,
            )?;
        }
        Ok(())
    })?;
    if let (Some(f), Some(m)) = (&chosen, &chosen_metric) {
        builder.harness.score_read = Some(format!("{m},{f}"));
    }
    if let Some(wanted) = &chosen {
        if !seen.contains(wanted) {
            return Err(AnalyzeError::UnknownFilter {
                source_name: source,
                filter: wanted.clone(),
                available: quoted_list(&seen),
            });
        }
        if filter.is_none() && seen.len() > 1 {
            return Err(AnalyzeError::AmbiguousFilter {
                source_name: source,
                available: quoted_list(&seen),
            });
        }
    }
    Ok(())
}

/// The metric a row is read by: the one `--metric` named (which the row must log), else the
/// row's only metric, remembered for the rows after it. An error lists the metrics it logs.
fn choose_metric(
    ctx: &Ctx<'_>,
    names: &[String],
    chosen_metric: &mut Option<String>,
) -> Result<String> {
    Ok(match chosen_metric {
        Some(m) => {
            if !names.contains(m) {
                return Err(ctx.missing(
                    m,
                    &format!(
                        "a metric the row logs: {} (choose with --metric NAME)",
                        quoted_list(names)
                    ),
                ));
            }
            m.clone()
        }
        None if names.len() == 1 => chosen_metric.insert(names[0].clone()).clone(),
        None => {
            return Err(ctx.missing(
                "--metric",
                &format!(
                    "one of the per-sample metrics the rows log: {}; choose one with --metric NAME",
                    quoted_list(names)
                ),
            ))
        }
    })
}

/// The answers of a generate row: its filtered responses, one per generation left after the
/// filter (a nested list flattened).
fn filtered_answers(ctx: &Ctx<'_>, filtered: &[Value]) -> Result<Vec<Option<String>>> {
    let mut answers: Vec<Option<String>> = Vec::new();
    for item in filtered {
        match item {
            Value::Array(inner) => {
                for a in inner {
                    answers.push(ctx.text_value("filtered_resps", a)?);
                }
            }
            other => answers.push(ctx.text_value("filtered_resps", other)?),
        }
    }
    Ok(answers)
}

/// The names in the row's `metrics` list (lm-eval writes it on every row since 0.4).
fn row_metrics(ctx: &Ctx<'_>, obj: &Map<String, Value>) -> Result<Vec<String>> {
    match obj.get("metrics") {
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                other => Err(ctx.bad("metrics", other, "metric names (strings)")),
            })
            .collect(),
        Some(other) => Err(ctx.bad("metrics", other, "a non-empty list of metric names")),
        None => Err(ctx.missing(
            "metrics",
            "the list of per-sample metrics lm-eval logs on every row (lm-eval >= 0.4 with \
             --log_samples); evalsim reads correctness from them and does not re-grade text",
        )),
    }
}

/// What evalsim reads from an lm-eval `results_*.json`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LmEvalResults {
    /// The model: `pretrained=` of `config.model_args`, else `model_name`, else `config.model`.
    pub model: Option<String>,
    /// Per task or group: `metric,filter` -> value (e.g. `acc,none`).
    pub results: Map<String, Value>,
    /// Group -> its subtasks.
    pub group_subtasks: Map<String, Value>,
}

#[derive(Deserialize)]
struct RawResults {
    results: Option<Map<String, Value>>,
    group_subtasks: Option<Map<String, Value>>,
    model_name: Option<String>,
    config: Option<Map<String, Value>>,
}

/// Parses an lm-eval `results_*.json`.
///
/// # Errors
/// Malformed JSON, or no `results` object.
pub fn parse_results(text: &str, source: &str) -> Result<LmEvalResults> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let raw: RawResults = serde_json::from_str(text).map_err(|e| AnalyzeError::Json {
        source_name: source.to_string(),
        line: e.line(),
        message: format!("{e} (an lm-eval `results_*.json` is expected)"),
    })?;
    let results = raw.results.ok_or_else(|| AnalyzeError::MissingField {
        source_name: source.to_string(),
        line: 1,
        field: "results".to_string(),
        expected: "lm-eval's `results_*.json` with a `results` object".to_string(),
    })?;
    let config = raw.config.unwrap_or_default();
    let pretrained = match config.get("model_args") {
        Some(Value::String(args)) => args
            .split(',')
            .find_map(|kv| kv.trim().strip_prefix("pretrained="))
            .map(str::to_string),
        Some(Value::Object(m)) => m
            .get("pretrained")
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    };
    let model = pretrained
        .or(raw.model_name.filter(|m| !m.is_empty()))
        .or_else(|| {
            config
                .get("model")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    Ok(LmEvalResults {
        model,
        results,
        group_subtasks: raw.group_subtasks.unwrap_or_default(),
    })
}

fn io_error(source: &str, error: std::io::Error) -> AnalyzeError {
    AnalyzeError::Io {
        source_name: source.to_string(),
        line: 0,
        error,
    }
}

/// The `results_<date>.json` files in `dir` and its immediate subfolders (lm-eval writes into
/// `<output_path>/<model>/`), sorted.
fn results_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let source = crate::text::path_shown(dir);
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    for entry in std::fs::read_dir(dir).map_err(|e| io_error(&source, e))? {
        let path = entry.map_err(|e| io_error(&source, e))?.path();
        if path.is_dir() {
            dirs.push(path);
        }
    }
    for d in dirs {
        for entry in std::fs::read_dir(&d).map_err(|e| io_error(&source, e))? {
            let path = entry.map_err(|e| io_error(&source, e))?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if name.is_some_and(|n| n.starts_with("results_") && n.ends_with(".json")) {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The date stamp of `results_<date>.json` or `samples_<task>_<date>.jsonl`.
fn stamp(results: &Path) -> Option<String> {
    let name = results.file_name()?.to_string_lossy().into_owned();
    Some(
        name.strip_prefix("results_")?
            .strip_suffix(".json")?
            .to_string(),
    )
}

/// The samples files of one run: (task, path), sorted by task.
fn samples_files(results: &Path) -> Result<Vec<(String, PathBuf)>> {
    let dir = results.parent().unwrap_or(Path::new("."));
    let source = crate::text::path_shown(dir);
    let Some(ts) = stamp(results) else {
        return Ok(Vec::new());
    };
    let suffix = format!("_{ts}.jsonl");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| io_error(&source, e))? {
        let path = entry.map_err(|e| io_error(&source, e))?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if let Some(task) = name
            .as_deref()
            .and_then(|n| n.strip_prefix("samples_"))
            .and_then(|n| n.strip_suffix(&suffix))
        {
            out.push((task.to_string(), path));
        }
    }
    out.sort();
    Ok(out)
}

/// For a samples file, the `results_<date>.json` of the same run beside it and the file's task.
pub fn sibling_results(samples: &Path) -> Option<(PathBuf, String)> {
    let name = samples.file_name()?.to_string_lossy().into_owned();
    let rest = name.strip_prefix("samples_")?.strip_suffix(".jsonl")?;
    let dir = samples.parent()?;
    let files = results_files(dir).ok()?;
    files.into_iter().find_map(|r| {
        let ts = stamp(&r)?;
        let task = rest.strip_suffix(&format!("_{ts}"))?;
        (r.parent() == Some(dir)).then(|| (r.clone(), task.to_string()))
    })
}

/// Reads a results file.
///
/// # Errors
/// As [`parse_results`]; an unreadable file.
pub fn read_results(path: &Path) -> Result<LmEvalResults> {
    let source = crate::text::path_shown(path);
    let text = std::fs::read_to_string(path).map_err(|e| io_error(&source, e))?;
    parse_results(&text, &source)
}

impl LmEvalResults {
    /// Whether the run evaluated `task`: a key of `results` or a subtask of a group.
    pub fn lists(&self, task: &str) -> bool {
        self.results.contains_key(task)
            || self.group_subtasks.values().any(|subs| {
                subs.as_array()
                    .is_some_and(|s| s.iter().any(|x| x.as_str() == Some(task)))
            })
    }

    /// The tasks `results` names, quoted, for messages.
    fn listed(&self) -> String {
        let names: Vec<String> = self.results.keys().cloned().collect();
        quoted_list(&names)
    }
}

/// Records the harness's aggregate of the score read for `tasks` (the group holding exactly
/// those tasks when there are several, else the one task) in `dataset`; a warning when the
/// results do not list a task (a samples file beside the results of another run).
pub fn attach_aggregate(results: &LmEvalResults, tasks: &[String], dataset: &mut Dataset) {
    for task in tasks.iter().filter(|t| !results.lists(t)) {
        dataset.harness.warnings.push(format!(
            "{}: task `{task}` is not in the run's results_*.json beside it (which lists {}): the \
             samples may come from another run, and there is no harness aggregate to check them \
             against",
            dataset.source,
            results.listed()
        ));
    }
    let Some(key) = dataset.harness.score_read.clone() else {
        return;
    };
    let (metric, filter) = key.split_once(',').unwrap_or((&key, "none"));
    let name = if tasks.len() == 1 {
        Some(tasks[0].clone())
    } else {
        results.group_subtasks.iter().find_map(|(group, subs)| {
            let mut subs: Vec<String> = subs
                .as_array()?
                .iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect();
            subs.sort();
            let mut want = tasks.to_vec();
            want.sort();
            (subs == want).then(|| group.clone())
        })
    };
    let (Some(name), Some(model)) = (name, dataset.models.first().map(|m| m.name.clone())) else {
        return;
    };
    let Some(entry) = results.results.get(&name) else {
        return;
    };
    if let Some(value) = entry.get(&key).and_then(Value::as_f64) {
        dataset.harness.aggregates.push(HarnessAggregate {
            model,
            field: format!("results.{name}.\"{key}\""),
            value,
            stderr: entry
                .get(format!("{metric}_stderr,{filter}"))
                .and_then(Value::as_f64),
        });
    }
}

/// Reads an lm-eval output folder (`--output_path`): the one `results_*.json` in it or in a
/// subfolder gives the model name and the tasks; every `samples_<task>_<date>.jsonl` of that run
/// is read into one model, the task as the cluster (so a group such as MMLU is one model with a
/// clustered SE over its subtasks).
///
/// # Errors
/// No results file or several; no samples files; any error of the samples reader.
pub fn read_output_dir(dir: &Path, options: &ReadOptions) -> Result<Dataset> {
    let source = crate::text::path_shown(dir);
    let results = results_files(dir)?;
    let path = match results.as_slice() {
        [one] => one.clone(),
        [] => {
            return Err(AnalyzeError::MissingField {
                source_name: source,
                line: 0,
                field: "results_*.json".to_string(),
                expected: "an lm-eval output folder (written with --output_path and \
                           --log_samples), or a results file: pass a samples_*.jsonl file instead"
                    .to_string(),
            })
        }
        many => {
            return Err(AnalyzeError::BadOption {
                option: "DIR".to_string(),
                value: format!("{source} ({} runs)", many.len()),
                expected: format!(
                    "a folder with one lm-eval run; pass the folder of one of: {}",
                    many.iter()
                        .map(|p| crate::text::path_shown(p))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
        }
    };
    let parsed = read_results(&path)?;
    let files = samples_files(&path)?;
    if files.is_empty() {
        return Err(AnalyzeError::MissingField {
            source_name: crate::text::path_shown(&path),
            line: 0,
            field: "samples_<task>_*.jsonl".to_string(),
            expected: "the per-sample files of the run (run lm-eval with --log_samples)"
                .to_string(),
        });
    }
    // A samples file of a task the run did not evaluate is not from this run: mixing it into
    // the model would change the numbers without a word.
    if let Some((task, file)) = files.iter().find(|(task, _)| !parsed.lists(task)) {
        return Err(AnalyzeError::Input {
            source_name: crate::text::path_shown(file),
            message: format!(
                "samples of task `{task}`, which {} does not list (it lists {}), so this file is \
                 not from that run; move it out of the folder, or pass the samples files you mean \
                 one by one",
                crate::text::path_shown(&path),
                parsed.listed()
            ),
        });
    }
    let model = parsed
        .model
        .clone()
        .unwrap_or_else(|| options.default_model.clone());
    let mut builder = DatasetBuilder::new(&source, &model, options.normalization);
    let several = files.len() > 1;
    let mut tasks = Vec::new();
    for (task, file) in &files {
        let name = crate::text::path_shown(file);
        let f = std::fs::File::open(file).map_err(|e| io_error(&name, e))?;
        let mut reader = std::io::BufReader::new(f);
        let previous = builder.harness.score_read.take();
        builder.set_source(&name);
        read_lm_eval(
            &mut reader,
            &mut builder,
            options.filter.as_deref(),
            options.metric.as_deref(),
            several.then_some(task.as_str()),
        )?;
        if let (Some(prev), Some(read)) = (&previous, &builder.harness.score_read) {
            if prev != read {
                return Err(AnalyzeError::BadOption {
                    option: "--metric/--filter".to_string(),
                    value: format!("`{prev}` in one task, `{read}` in {name}"),
                    expected: "one metric and filter for every task of the folder: choose \
                               them with --metric NAME and --filter NAME"
                        .to_string(),
                });
            }
        }
        tasks.push(task.clone());
    }
    builder.set_source(&source);
    let mut dataset = builder.finish()?;
    attach_aggregate(&parsed, &tasks, &mut dataset);
    Ok(dataset)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{counts, fixture, read_str};
    use super::super::{Format, ReadOptions};

    #[test]
    fn lm_eval_correctness_is_the_logged_metric_not_a_text_match() {
        let text = fixture("lm_eval_samples_gsm8k.jsonl");
        // `extract-all` keeps 4 answers per document but logs one exact_match per document:
        // which answers were right is not in the file, so it is refused, not re-graded.
        let all = ReadOptions {
            filter: Some("extract-all".to_string()),
            ..ReadOptions::default()
        };
        let err = read_str(Format::LmEval, &text, &all)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("test.in:1") && err.contains("one 0/1 per generation"),
            "{err}"
        );
        // `maj@4` keeps one answer per document: one sample each, correct as logged (doc 0's
        // exact_match is 1, doc 1's is 0), whatever its text.
        let reducing = ReadOptions {
            filter: Some("maj@4".to_string()),
            ..ReadOptions::default()
        };
        let d = read_str(Format::LmEval, &text, &reducing).unwrap();
        assert_eq!(
            counts(&d.models[0]),
            vec![
                ("0".to_string(), 1, 1, vec![]),
                ("1".to_string(), 1, 0, vec![1]),
            ]
        );
        assert_eq!(d.harness.score_read.as_deref(), Some("exact_match,maj@4"));
        let flipped = text.replacen("\"exact_match\": 1.0", "\"exact_match\": 0.0", 1);
        let d = read_str(Format::LmEval, &flipped, &reducing).unwrap();
        assert_eq!(
            d.models[0].problems[0].correct, 0,
            "the metric, not the text"
        );
        let unknown = ReadOptions {
            filter: Some("strict-match".to_string()),
            ..ReadOptions::default()
        };
        let err = read_str(Format::LmEval, &text, &unknown)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("strict-match") && err.contains("`maj@4`"),
            "{err}"
        );
        let metric = ReadOptions {
            filter: Some("maj@4".to_string()),
            metric: Some("acc".to_string()),
            ..ReadOptions::default()
        };
        let err = read_str(Format::LmEval, &text, &metric)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`acc`") && err.contains("`exact_match`"),
            "{err}"
        );
    }

    #[test]
    fn lm_eval_multiple_choice_row_is_one_sample_answered_by_argmax() {
        let row = r#"{"doc_id": 3, "target": "1", "resps": [[["-5.4", "False"]], [["-3.5", "False"]], [["-8.8", "False"]]], "filtered_resps": [["-5.4", "False"], ["-3.5", "False"], ["-8.8", "False"]], "filter": "none", "metrics": ["acc"], "acc": 0.0}"#;
        let d = read_str(Format::LmEval, row, &ReadOptions::default()).unwrap();
        let p = &d.models[0].problems[0];
        assert_eq!((p.n, p.correct), (1, 0), "one sample, wrong as logged");
    }
}
