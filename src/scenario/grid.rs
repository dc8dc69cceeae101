//! Parameter grids for `evalsim sweep`: `--set PATH=VALUES` parsed into axes, and each cell's
//! values set on the typed raw scenario ([`RawScenario`]), which then goes through the one
//! validator ([`super::resolve`]) like a file.
//!
//! A path is `seed`, `benchmark.KEY`, `model.NAME.KEY` or `experiment.NAME.KEY` (an experiment
//! without `name` is found by its kind; only the keys its kind takes). The sweepable keys and
//! their types come from the key table ([`super::keys::KEYS`], a key with a [`Sweep`] other
//! than `No`): whole-number fields ([`Field::Whole`], `u64`) are set exactly up to `u64::MAX`
//! and refuse fractional or negative values; real fields ([`Field::Real`], `f64`) take any
//! finite number and the validator checks its range; a whole-number list ([`Field::WholeList`],
//! `submissions`) takes whole numbers, each cell's list being that one number. Making a key
//! sweepable is its `sweep`
//! entry in that table.
use std::fmt;

use toml::Spanned;

use super::keys::{self, block, Field, Sweep};
use super::raw::{RawBenchmark, RawExperiment, RawModel, RawScenario};

/// Longest grid (cells) a sweep may ask for.
pub const MAX_CELLS: usize = 100_000;

/// A raw block whose sweep fields the key table lists.
trait Block: Sized + 'static {
    /// The field of this block a key's sweep entry names, if it names one of this block.
    fn field(sweep: &'static Sweep) -> Option<&'static Field<Self>>;
}

impl Block for RawScenario {
    fn field(sweep: &'static Sweep) -> Option<&'static Field<Self>> {
        match sweep {
            Sweep::Top(f) => Some(f),
            _ => None,
        }
    }
}

impl Block for RawBenchmark {
    fn field(sweep: &'static Sweep) -> Option<&'static Field<Self>> {
        match sweep {
            Sweep::Benchmark(f) => Some(f),
            _ => None,
        }
    }
}

impl Block for RawModel {
    fn field(sweep: &'static Sweep) -> Option<&'static Field<Self>> {
        match sweep {
            Sweep::Model(f) => Some(f),
            _ => None,
        }
    }
}

impl Block for RawExperiment {
    fn field(sweep: &'static Sweep) -> Option<&'static Field<Self>> {
        match sweep {
            Sweep::Experiment(f) => Some(f),
            _ => None,
        }
    }
}

/// The sweep fields of block `T` whose key passes `keep`: (path inside the block, field).
fn fields<T: Block>(
    keep: impl Fn(&keys::Key) -> bool,
) -> impl Iterator<Item = (String, &'static Field<T>)> {
    keys::KEYS
        .iter()
        .filter(move |k| keep(k))
        .filter_map(|k| T::field(&k.sweep).map(|f| (k.sweep_name(), f)))
}

/// Every sweep field of block `T`.
fn all<T: Block>() -> impl Iterator<Item = (String, &'static Field<T>)> {
    fields::<T>(|_| true)
}

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

/// One grid value, typed like its field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// For a [`Field::Whole`].
    Whole(u64),
    /// For a [`Field::Real`].
    Real(f64),
}

impl fmt::Display for Value {
    /// Whole numbers without a point, reals in shortest round-trip form: the text of tables,
    /// file names and cell hashes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Whole(x) => write!(f, "{x}"),
            Value::Real(x) => write!(f, "{}", fmt_value(*x)),
        }
    }
}

/// One swept field and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Dotted path, e.g. `model.long.attractor`.
    pub path: String,
    /// Values in the order given, typed like the field.
    pub values: Vec<Value>,
    /// The field holds whole numbers (seed, problems, votes, reruns, traces).
    pub integer: bool,
}

/// A parsed `--set PATH=VALUES`, its values not yet typed (that needs the field, found in the
/// scenario: [`SetArg::values_for`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SetArg {
    /// The argument as given.
    pub arg: String,
    /// The dotted path.
    pub path: String,
    spec: Spec,
}

#[derive(Debug, Clone, PartialEq)]
enum Spec {
    List(Vec<String>),
    Range([String; 3]),
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

/// Largest whole number an f64 text (`1e3`, `5.0`) may spell for a whole-number field: above
/// it f64 is not exact, and the value must be written as digits.
const F64_EXACT: f64 = 9_007_199_254_740_992.0;

/// A whole number >= 0 for the field at `path`: digits exactly to `u64::MAX`, or a whole f64
/// text up to 2^53.
fn whole(arg: &str, path: &str, s: &str) -> Result<u64, GridError> {
    let s = s.trim();
    if let Ok(x) = s.parse::<u64>() {
        return Ok(x);
    }
    let x = number(arg, s)?;
    if x.fract() == 0.0 && (0.0..=F64_EXACT).contains(&x) {
        Ok(x as u64)
    } else {
        Err(syntax(
            arg,
            format!(
                "`{s}` is not a whole number from 0 to {}, which {path} needs",
                u64::MAX
            ),
        ))
    }
}

/// Rounds away the binary noise of `from + i * step` (12 significant digits).
fn tidy(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    format!("{x:.12e}").parse().unwrap_or(x)
}

fn no_repeats<T: PartialEq + fmt::Display>(arg: &str, out: &[T]) -> Result<(), GridError> {
    if out.is_empty() {
        return Err(syntax(arg, "no values given"));
    }
    for (i, x) in out.iter().enumerate() {
        if out[..i].contains(x) {
            return Err(syntax(arg, format!("the value {x} is listed twice")));
        }
    }
    Ok(())
}

fn too_many(arg: &str) -> GridError {
    syntax(arg, format!("the range has more than {MAX_CELLS} values"))
}

fn bad_range(arg: &str) -> GridError {
    syntax(arg, "a range FROM:TO:STEP needs STEP > 0 and TO >= FROM")
}

/// Parses `PATH=VALUES`: VALUES is `a,b,c` or `FROM:TO:STEP` (TO included when it lies on the
/// grid within rounding). Every value must be a number; whether it suits the field is checked
/// by [`SetArg::values_for`].
///
/// # Errors
/// [`GridError::Syntax`] naming the argument and what would be valid.
pub fn parse_set(arg: &str) -> Result<SetArg, GridError> {
    let (path, values) = arg
        .split_once('=')
        .ok_or_else(|| syntax(arg, "expected PATH=VALUES, e.g. benchmark.sigma=0.6,2.2"))?;
    let path = path.trim();
    if path.is_empty() {
        return Err(syntax(arg, "the path before `=` is empty"));
    }
    let values = values.trim();
    let spec = if values.contains(':') {
        let parts: Vec<&str> = values.split(':').collect();
        let [from, to, step] = parts[..] else {
            return Err(syntax(arg, "a range is FROM:TO:STEP, e.g. 0:1:0.1"));
        };
        Spec::Range([from.into(), to.into(), step.into()])
    } else {
        Spec::List(values.split(',').map(str::to_string).collect())
    };
    let set = SetArg {
        arg: arg.to_string(),
        path: path.to_string(),
        spec,
    };
    set.reals()?;
    Ok(set)
}

impl SetArg {
    /// The values as reals (for a [`Field::Real`]).
    fn reals(&self) -> Result<Vec<f64>, GridError> {
        let arg = &self.arg;
        let out = match &self.spec {
            Spec::List(items) => items
                .iter()
                .map(|s| number(arg, s))
                .collect::<Result<Vec<_>, _>>()?,
            Spec::Range([from, to, step]) => {
                let (from, to, step) = (number(arg, from)?, number(arg, to)?, number(arg, step)?);
                if step.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) || to < from {
                    return Err(bad_range(arg));
                }
                let steps = ((to - from) / step + 1e-9).floor();
                if steps + 1.0 > MAX_CELLS as f64 {
                    return Err(too_many(arg));
                }
                (0..=steps as usize)
                    .map(|i| tidy(from + i as f64 * step))
                    .collect()
            }
        };
        no_repeats(arg, &out)?;
        Ok(out)
    }

    /// The values as whole numbers (for a [`Field::Whole`]), exact; a range in whole steps.
    fn wholes(&self) -> Result<Vec<u64>, GridError> {
        let (arg, path) = (&self.arg, &self.path);
        let out = match &self.spec {
            Spec::List(items) => items
                .iter()
                .map(|s| whole(arg, path, s))
                .collect::<Result<Vec<_>, _>>()?,
            Spec::Range([from, to, step]) => {
                let (from, to, step) = (
                    whole(arg, path, from)?,
                    whole(arg, path, to)?,
                    whole(arg, path, step)?,
                );
                if step == 0 || to < from {
                    return Err(bad_range(arg));
                }
                let steps = (to - from) / step;
                if steps >= MAX_CELLS as u64 {
                    return Err(too_many(arg));
                }
                (0..=steps).map(|i| from + i * step).collect()
            }
        };
        no_repeats(arg, &out)?;
        Ok(out)
    }

    /// The axis of this `--set` in `raw`: its values typed like the field at its path.
    ///
    /// # Errors
    /// [`GridError::UnknownPath`] listing the valid paths; [`GridError::Syntax`] for a value
    /// the field cannot hold (a fraction or a negative number for a whole-number field).
    pub fn values_for(&self, raw: &RawScenario) -> Result<Axis, GridError> {
        let integer = is_whole(raw, &self.path)?;
        let values = if integer {
            self.wholes()?.into_iter().map(Value::Whole).collect()
        } else {
            self.reals()?.into_iter().map(Value::Real).collect()
        };
        Ok(Axis {
            path: self.path.clone(),
            values,
            integer,
        })
    }
}

/// The name a model is found by.
fn model_name(m: &RawModel) -> Option<&str> {
    m.name.as_ref().map(|n| n.get_ref().as_str())
}

/// The name an experiment is found by: its `name`, else its kind.
fn experiment_name(e: &RawExperiment) -> Option<&str> {
    e.name
        .as_ref()
        .map(|n| n.get_ref().as_str())
        .or_else(|| e.kind.as_ref().map(|k| k.get_ref().as_str()))
}

/// The sweep fields an experiment's kind takes.
fn experiment_keys(
    e: &RawExperiment,
) -> impl Iterator<Item = (String, &'static Field<RawExperiment>)> {
    let kind = e.kind.as_ref().map(|k| *k.get_ref());
    fields::<RawExperiment>(move |k| kind.is_some_and(|kind| k.for_kind(kind)))
}

/// Every settable path of the scenario, in file order.
pub fn numeric_paths(raw: &RawScenario) -> Vec<String> {
    let mut out: Vec<String> = all::<RawScenario>().map(|(k, _)| k).collect();
    out.extend(all::<RawBenchmark>().map(|(k, _)| format!("benchmark.{k}")));
    for name in raw.model.iter().filter_map(|m| model_name(m.get_ref())) {
        out.extend(all::<RawModel>().map(|(k, _)| format!("model.{name}.{k}")));
    }
    for e in &raw.experiment {
        let e = e.get_ref();
        if let Some(name) = experiment_name(e) {
            out.extend(experiment_keys(e).map(|(k, _)| format!("experiment.{name}.{k}")));
        }
    }
    out
}

/// The element of `items` whose name is the longest prefix of `rest` followed by a dot (names
/// may hold dots), and the key after it.
fn find_named<'r, T>(
    items: &[Spanned<T>],
    name: impl Fn(&T) -> Option<&str>,
    rest: &'r str,
) -> Option<(usize, &'r str)> {
    let mut best: Option<(usize, usize)> = None;
    for (i, t) in items.iter().enumerate() {
        if let Some(n) = name(t.get_ref()) {
            let matches =
                rest.len() > n.len() && rest.starts_with(n) && rest.as_bytes()[n.len()] == b'.';
            if matches && best.is_none_or(|(_, l)| n.len() > l) {
                best = Some((i, n.len()));
            }
        }
    }
    best.map(|(i, l)| (i, &rest[l + 1..]))
}

/// The sweep field `key` of block `T`.
fn lookup<T: Block>(key: &str) -> Option<&'static Field<T>> {
    all::<T>().find(|(k, _)| k == key).map(|(_, f)| f)
}

/// Sets `field` of `block` to `value`, keeping the span of the value it replaces (so errors
/// point at the key in the file).
fn put<T>(block: &mut T, field: &Field<T>, value: Value) -> bool {
    fn keep<V>(slot: &mut Option<Spanned<V>>, v: V) {
        let span = slot.as_ref().map_or(0..0, Spanned::span);
        *slot = Some(Spanned::new(span, v));
    }
    match (field, value) {
        (Field::Whole(f), Value::Whole(v)) => keep(f(block), v),
        (Field::Real(f), Value::Real(v)) => keep(f(block), v),
        (Field::Number(f), Value::Real(v)) => keep(f(block), toml::Value::Float(v)),
        (Field::WholeList(f), Value::Whole(v)) => keep(f(block), vec![v]),
        _ => return false,
    }
    true
}

/// Whether the field at `path` holds whole numbers.
///
/// # Errors
/// [`GridError::UnknownPath`] listing the valid paths.
pub fn is_whole(raw: &RawScenario, path: &str) -> Result<bool, GridError> {
    let whole = |f: Option<bool>| {
        f.ok_or_else(|| GridError::UnknownPath {
            path: path.into(),
            valid: numeric_paths(raw).join(", "),
        })
    };
    fn w<T>(f: &Field<T>) -> bool {
        matches!(f, Field::Whole(_) | Field::WholeList(_))
    }
    whole(if let Some(k) = path.strip_prefix("benchmark.") {
        lookup::<RawBenchmark>(k).map(w)
    } else if let Some(rest) = path.strip_prefix("model.") {
        find_named(&raw.model, model_name, rest).and_then(|(_, k)| lookup::<RawModel>(k).map(w))
    } else if let Some(rest) = path.strip_prefix("experiment.") {
        find_named(&raw.experiment, experiment_name, rest).and_then(|(i, k)| {
            experiment_keys(raw.experiment[i].get_ref())
                .find(|(key, _)| key == k)
                .map(|(_, f)| w(f))
        })
    } else {
        lookup::<RawScenario>(path).map(w)
    })
}

/// Sets the field at `path` to `value` (typed as [`SetArg::values_for`] typed it).
///
/// # Errors
/// [`GridError::UnknownPath`] when the path names no field of this scenario or the value's type
/// is not the field's.
pub fn set(raw: &mut RawScenario, path: &str, value: Value) -> Result<(), GridError> {
    is_whole(raw, path)?;
    let done = if let Some(k) = path.strip_prefix("benchmark.") {
        lookup::<RawBenchmark>(k).is_some_and(|f| put(block(&mut raw.benchmark), f, value))
    } else if let Some(rest) = path.strip_prefix("model.") {
        find_named(&raw.model, model_name, rest).is_some_and(|(i, k)| {
            lookup::<RawModel>(k).is_some_and(|f| put(raw.model[i].get_mut(), f, value))
        })
    } else if let Some(rest) = path.strip_prefix("experiment.") {
        find_named(&raw.experiment, experiment_name, rest).is_some_and(|(i, k)| {
            let field = experiment_keys(raw.experiment[i].get_ref())
                .find(|(key, _)| key == k)
                .map(|(_, f)| f);
            field.is_some_and(|f| put(raw.experiment[i].get_mut(), f, value))
        })
    } else {
        lookup::<RawScenario>(path).is_some_and(|f| put(raw, f, value))
    };
    if done {
        Ok(())
    } else {
        Err(syntax(
            &format!("{path}={value}"),
            "the value's type is not the field's (set values typed by SetArg::values_for)",
        ))
    }
}

/// Formats a real grid value for tables, file names and cell hashes: whole numbers without a
/// point, others in shortest round-trip form.
pub fn fmt_value(x: f64) -> String {
    format!("{x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::resolve::parse;
    use crate::scenario::NAMED;

    fn reals(arg: &str) -> Vec<f64> {
        parse_set(arg).expect("parses").reals().expect("reals")
    }

    #[test]
    fn ranges_and_lists_parse() {
        let set = parse_set("model.long.attractor=0:1:0.1").expect("range");
        assert_eq!(set.path, "model.long.attractor");
        let v = set.reals().expect("reals");
        assert_eq!(v.len(), 11);
        assert_eq!(v[3], 0.3);
        assert_eq!(v[10], 1.0);
        assert_eq!(reals("benchmark.sigma=0.6,2.2"), vec![0.6, 2.2]);
        assert!(parse_set("benchmark.sigma").is_err());
        assert!(parse_set("benchmark.sigma=1:0:0.1").is_err());
        assert!(parse_set("benchmark.sigma=a,b").is_err());
        assert!(parse_set("benchmark.sigma=1,1").is_err());
        let w = parse_set("experiment.curves.votes=100:1000:300").expect("range");
        assert_eq!(w.wholes().expect("whole"), vec![100, 400, 700, 1000]);
    }

    #[test]
    fn paths_find_models_with_dots_in_their_names() {
        let mut raw = parse(NAMED[0].1, "note").expect("note parses");
        set(&mut raw, "model.long+0.21.shift", Value::Real(0.3)).expect("set");
        set(&mut raw, "model.long.tokens.sigma", Value::Real(0.7)).expect("set");
        set(
            &mut raw,
            "experiment.head-to-head.reruns",
            Value::Whole(500),
        )
        .expect("set");
        set(&mut raw, "seed", Value::Whole(5)).expect("set");
        let m = &raw.model;
        assert_eq!(
            m[2].get_ref().shift.as_ref().map(|s| *s.get_ref()),
            Some(0.3)
        );
        let tokens = m[0].get_ref().tokens.as_ref().expect("tokens");
        assert_eq!(
            tokens.get_ref().sigma.as_ref().map(|s| *s.get_ref()),
            Some(0.7)
        );
        let e = raw.experiment[4].get_ref();
        assert_eq!(e.reruns.as_ref().map(|s| *s.get_ref()), Some(500));
        assert_eq!(raw.seed.as_ref().map(|s| *s.get_ref()), Some(5));
        let err = set(&mut raw, "model.nobody.shift", Value::Real(1.0)).expect_err("unknown");
        assert!(err.to_string().contains("model.long.attractor"), "{err}");
        // A key the experiment's kind does not take is no path of it.
        let err =
            set(&mut raw, "experiment.head-to-head.votes", Value::Whole(5)).expect_err("no votes");
        assert!(matches!(err, GridError::UnknownPath { .. }), "{err}");
        // A value of the other type is refused, not converted.
        assert!(set(&mut raw, "seed", Value::Real(5.0)).is_err());
    }

    #[test]
    fn every_listed_path_sets_its_raw_field_exactly() {
        // Brute force over the paths of `note`: each sets exactly the value given, of its type,
        // and every model key of the table is among them.
        let raw = parse(NAMED[0].1, "note").expect("note parses");
        let paths = numeric_paths(&raw);
        for (key, _) in all::<RawModel>() {
            assert!(paths.contains(&format!("model.long.{key}")), "{key}");
        }
        for path in &paths {
            let mut r = parse(NAMED[0].1, "note").expect("parses");
            let v = if is_whole(&r, path).expect("listed") {
                Value::Whole(u64::MAX - 1)
            } else {
                Value::Real(0.123_456_789_012_345_6)
            };
            set(&mut r, path, v).expect("set");
            let text = format!("{r:?}");
            let before = format!("{:?}", parse(NAMED[0].1, "note").expect("parses"));
            assert_eq!(
                text.matches(&v.to_string()).count(),
                before.matches(&v.to_string()).count() + 1,
                "{path}"
            );
        }
    }

    #[test]
    fn sweep_seed_above_2_pow_53_is_exact() {
        let raw = parse(NAMED[0].1, "note").expect("note parses");
        let big = (1u64 << 53) + 1;
        let axis = parse_set(&format!("seed={big},{}", u64::MAX))
            .expect("parses")
            .values_for(&raw)
            .expect("typed");
        assert_eq!(axis.values, vec![Value::Whole(big), Value::Whole(u64::MAX)]);
        assert_eq!(axis.values[0].to_string(), "9007199254740993");
        let mut r = parse(NAMED[0].1, "note").expect("note parses");
        set(&mut r, "seed", axis.values[0]).expect("set");
        assert_eq!(r.seed.as_ref().map(|s| *s.get_ref()), Some(big));
    }

    #[test]
    fn sweep_fractional_or_negative_whole_values_are_rejected_naming_the_set() {
        let raw = parse(NAMED[0].1, "note").expect("note parses");
        for arg in [
            "experiment.head-to-head.reruns=100,2.5",
            "experiment.head-to-head.reruns=-1",
            "seed=18446744073709551616",
            "seed=1e300",
            "experiment.head-to-head.reruns=0:10:2.5",
        ] {
            let err = parse_set(arg)
                .expect("numbers")
                .values_for(&raw)
                .expect_err("not whole");
            let msg = err.to_string();
            assert!(msg.starts_with(&format!("--set {arg}: ")), "{msg}");
            assert!(
                msg.contains("is not a whole number from 0 to 18446744073709551615"),
                "{msg}"
            );
        }
        // Whole numbers spelled as reals stay accepted (and exact below 2^53).
        let axis = parse_set("experiment.head-to-head.reruns=1e3,5.0")
            .expect("numbers")
            .values_for(&raw)
            .expect("whole");
        assert_eq!(axis.values, vec![Value::Whole(1000), Value::Whole(5)]);
    }
}
