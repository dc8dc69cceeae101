//! Parameter grids for `evalsim sweep`: `--set PATH=VALUES` parsed into axes, and the scenario's
//! TOML document edited at PATH for each cell, so every cell goes through the same validation as
//! a file ([`super::Scenario::from_toml`]).
//!
//! Paths name numeric fields: `seed`, `benchmark.problems|mu|sigma`,
//! `model.NAME.shift|attractor|tokens.median_tokens|tokens.hard_growth|tokens.wrong_factor|tokens.sigma`
//! and `experiment.NAME.votes|reruns|traces|cap|price_per_mtok` (the keys the experiment's kind
//! takes). Models and experiments are found by name (an experiment without `name` by its kind).
use serde::Serialize;
use toml::Value;

/// Longest grid (cells) a sweep may ask for.
pub const MAX_CELLS: usize = 100_000;

/// A `--set` that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GridError {
    /// Not of the form PATH=VALUES or values that do not parse.
    #[error("--set {arg}: {reason}")]
    Syntax {
        /// The argument.
        arg: String,
        /// What is wrong and what would be valid.
        reason: String,
    },
    /// The path names no numeric field of the scenario.
    #[error("--set {path}: no such numeric field in this scenario; valid paths: {valid}")]
    UnknownPath {
        /// The path.
        path: String,
        /// The valid paths, comma separated.
        valid: String,
    },
}

/// One swept field and its values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Axis {
    /// Dotted path, e.g. `model.long.attractor`.
    pub path: String,
    /// Values in the order given.
    pub values: Vec<f64>,
    /// The field holds whole numbers (seed, problems, votes, reruns, traces).
    pub integer: bool,
}

fn syntax(arg: &str, reason: impl Into<String>) -> GridError {
    GridError::Syntax {
        arg: arg.into(),
        reason: reason.into(),
    }
}

fn number(arg: &str, s: &str) -> Result<f64, GridError> {
    let x: f64 = s.trim().parse().map_err(|_| {
        syntax(
            arg,
            format!("`{s}` is not a number (values: a list `0,0.5,1` or a range `FROM:TO:STEP`)"),
        )
    })?;
    if x.is_finite() {
        Ok(x)
    } else {
        Err(syntax(arg, format!("`{s}` is not a finite number")))
    }
}

/// Rounds away the binary noise of `from + i * step` (12 significant digits).
fn tidy(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    format!("{x:.12e}").parse().unwrap_or(x)
}

/// Parses `PATH=VALUES`: VALUES is `a,b,c` or `FROM:TO:STEP` (TO included when it lies on the
/// grid within rounding). Returns the path and the values.
///
/// # Errors
/// [`GridError::Syntax`] naming the argument and what would be valid.
pub fn parse_set(arg: &str) -> Result<(String, Vec<f64>), GridError> {
    let (path, values) = arg
        .split_once('=')
        .ok_or_else(|| syntax(arg, "expected PATH=VALUES, e.g. benchmark.sigma=0.6,2.2"))?;
    let path = path.trim();
    if path.is_empty() {
        return Err(syntax(arg, "the path before `=` is empty"));
    }
    let values = values.trim();
    let out = if values.contains(':') {
        let parts: Vec<&str> = values.split(':').collect();
        if parts.len() != 3 {
            return Err(syntax(arg, "a range is FROM:TO:STEP, e.g. 0:1:0.1"));
        }
        let (from, to, step) = (
            number(arg, parts[0])?,
            number(arg, parts[1])?,
            number(arg, parts[2])?,
        );
        if step.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) || to < from {
            return Err(syntax(
                arg,
                "a range FROM:TO:STEP needs STEP > 0 and TO >= FROM",
            ));
        }
        let steps = ((to - from) / step + 1e-9).floor();
        if steps + 1.0 > MAX_CELLS as f64 {
            return Err(syntax(
                arg,
                format!("the range has more than {MAX_CELLS} values"),
            ));
        }
        (0..=steps as usize)
            .map(|i| tidy(from + i as f64 * step))
            .collect::<Vec<_>>()
    } else {
        values
            .split(',')
            .map(|s| number(arg, s))
            .collect::<Result<Vec<_>, _>>()?
    };
    if out.is_empty() {
        return Err(syntax(arg, "no values given"));
    }
    for (i, x) in out.iter().enumerate() {
        if out[..i].contains(x) {
            return Err(syntax(arg, format!("the value {x} is listed twice")));
        }
    }
    Ok((path.to_string(), out))
}

const MODEL_KEYS: [&str; 6] = [
    "shift",
    "attractor",
    "tokens.median_tokens",
    "tokens.hard_growth",
    "tokens.wrong_factor",
    "tokens.sigma",
];
const EXPERIMENT_KEYS: [&str; 5] = ["votes", "reruns", "traces", "cap", "price_per_mtok"];
const INTEGER_KEYS: [&str; 5] = ["seed", "problems", "votes", "reruns", "traces"];

fn name_of(t: &Value, fallback: &str) -> Option<String> {
    t.get("name")
        .or_else(|| t.get(fallback))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Every numeric path of the document, in file order.
pub fn numeric_paths(doc: &Value) -> Vec<String> {
    let mut out = vec!["seed".to_string()];
    for k in ["problems", "mu", "sigma"] {
        out.push(format!("benchmark.{k}"));
    }
    for m in doc
        .get("model")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(name) = name_of(m, "name") {
            out.extend(MODEL_KEYS.iter().map(|k| format!("model.{name}.{k}")));
        }
    }
    for e in doc
        .get("experiment")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let kind = e
            .get("kind")
            .and_then(Value::as_str)
            .and_then(|k| toml::from_str::<KindOnly>(&format!("kind = \"{k}\"")).ok());
        if let (Some(name), Some(kind)) = (name_of(e, "kind"), kind) {
            out.extend(
                EXPERIMENT_KEYS
                    .iter()
                    .filter(|k| kind.kind.keys().contains(k))
                    .map(|k| format!("experiment.{name}.{k}")),
            );
        }
    }
    out
}

#[derive(serde::Deserialize)]
struct KindOnly {
    kind: super::ExperimentKind,
}

/// Checks `path` against the document; returns whether it holds whole numbers.
///
/// # Errors
/// [`GridError::UnknownPath`] listing the valid paths.
pub fn check_path(doc: &Value, path: &str) -> Result<bool, GridError> {
    if numeric_paths(doc).iter().any(|p| p == path) {
        let last = path.rsplit('.').next().unwrap_or(path);
        let integer = INTEGER_KEYS.contains(&last) && !path.starts_with("model.");
        Ok(integer)
    } else {
        Err(GridError::UnknownPath {
            path: path.into(),
            valid: numeric_paths(doc).join(", "),
        })
    }
}

/// Finds the element of array `array` named `rest`'s longest matching prefix; returns it and the
/// key path after the name.
fn find_named<'a>(
    doc: &'a mut Value,
    array: &str,
    fallback: &str,
    rest: &str,
) -> Option<(&'a mut Value, String)> {
    let items = doc.get_mut(array)?.as_array_mut()?;
    let mut best: Option<(usize, usize)> = None;
    for (i, t) in items.iter().enumerate() {
        if let Some(name) = name_of(t, fallback) {
            let matches = rest.len() > name.len()
                && rest.starts_with(&name)
                && rest.as_bytes()[name.len()] == b'.';
            if matches && best.is_none_or(|(_, l)| name.len() > l) {
                best = Some((i, name.len()));
            }
        }
    }
    let (i, l) = best?;
    Some((&mut items[i], rest[l + 1..].to_string()))
}

/// Sets the numeric field at `path` (checked with [`check_path`]) to `value`.
///
/// # Errors
/// [`GridError::UnknownPath`] when the path is not in the document.
pub fn set_value(doc: &mut Value, path: &str, value: f64) -> Result<(), GridError> {
    let integer = check_path(doc, path)?;
    let unknown = || GridError::UnknownPath {
        path: path.into(),
        valid: String::new(),
    };
    let v = if integer && value.fract() == 0.0 && value.abs() < 9.0e15 {
        Value::Integer(value as i64)
    } else {
        Value::Float(value)
    };
    let (table, key) = if path == "seed" {
        (&mut *doc, "seed".to_string())
    } else if let Some(k) = path.strip_prefix("benchmark.") {
        let t = doc
            .as_table_mut()
            .ok_or_else(unknown)?
            .entry("benchmark")
            .or_insert_with(|| Value::Table(Default::default()));
        (t, k.to_string())
    } else if let Some(rest) = path.strip_prefix("model.") {
        find_named(doc, "model", "name", rest).ok_or_else(unknown)?
    } else if let Some(rest) = path.strip_prefix("experiment.") {
        find_named(doc, "experiment", "kind", rest).ok_or_else(unknown)?
    } else {
        return Err(unknown());
    };
    let mut t = table;
    let parts: Vec<&str> = key.split('.').collect();
    for p in &parts[..parts.len() - 1] {
        t = t
            .as_table_mut()
            .ok_or_else(unknown)?
            .entry(p.to_string())
            .or_insert_with(|| Value::Table(Default::default()));
    }
    t.as_table_mut()
        .ok_or_else(unknown)?
        .insert(parts[parts.len() - 1].to_string(), v);
    Ok(())
}

/// Formats a grid value for tables, file names and cell hashes: whole numbers without a point,
/// others in shortest round-trip form.
pub fn fmt_value(x: f64) -> String {
    format!("{x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::NAMED;

    #[test]
    fn ranges_and_lists_parse() {
        let (p, v) = parse_set("model.long.attractor=0:1:0.1").expect("range");
        assert_eq!(p, "model.long.attractor");
        assert_eq!(v.len(), 11);
        assert_eq!(v[3], 0.3);
        assert_eq!(v[10], 1.0);
        assert_eq!(
            parse_set("benchmark.sigma=0.6,2.2").expect("list").1,
            vec![0.6, 2.2]
        );
        assert!(parse_set("benchmark.sigma").is_err());
        assert!(parse_set("benchmark.sigma=1:0:0.1").is_err());
        assert!(parse_set("benchmark.sigma=a,b").is_err());
    }

    #[test]
    fn paths_find_models_with_dots_in_their_names() {
        let mut doc: Value = toml::from_str(NAMED[0].1).expect("note parses");
        set_value(&mut doc, "model.long+0.21.shift", 0.3).expect("set");
        set_value(&mut doc, "model.long.tokens.sigma", 0.7).expect("set");
        set_value(&mut doc, "experiment.head-to-head.reruns", 500.0).expect("set");
        set_value(&mut doc, "seed", 5.0).expect("set");
        let m = doc["model"].as_array().expect("models");
        assert_eq!(m[2]["shift"].as_float(), Some(0.3));
        assert_eq!(m[0]["tokens"]["sigma"].as_float(), Some(0.7));
        assert_eq!(doc["experiment"][4]["reruns"].as_integer(), Some(500));
        let err = set_value(&mut doc, "model.nobody.shift", 1.0).expect_err("unknown");
        assert!(err.to_string().contains("model.long.attractor"));
    }
}
