//! The key table: every scenario key written once, with its table, what values are valid, its
//! default, a one-line doc, whether `sweep --set` may vary it, and which experiment kinds take
//! it (experiment keys) or honour it (model keys).
//!
//! What reads it: the kinds' key lists ([`names_of_kind`]) and the "does not apply"
//! error, the keys an experiment sets ([`present`]), the unknown-key message
//! (the valid keys of the table and the nearest one), the quoted-string options of enum keys,
//! the refusal of a model key an experiment does not honour, the sweep fields
//! ([`super::grid`]), the key comments of `evalsim init`, and `docs/keys.md`
//! ([`markdown`], compared with the file by the test suite).
//!
//! A numeric key also carries its [`Domain`]: the resolver's one range check reads it, and its
//! `valid` text is written from it ([`Key::valid`]), so the check, the error, `docs/keys.md` and
//! the `init` comments state the same bounds.
//!
//! **Adding a key** is one [`Key`] line here plus the code that uses it: the raw field in
//! [`super::raw`] (serde reads the file into it) and where [`super::resolve`] reads it (through
//! the range check for a numeric key, with any rule on other keys beside it).
use std::ops::Range;

use toml::Spanned;

use super::raw::{ExperimentKind, RawBenchmark, RawExperiment, RawModel, RawScenario};

/// The TOML table a key sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// The top level of the file.
    Top,
    /// `[benchmark]`.
    Benchmark,
    /// A `[[model]]`.
    Model,
    /// `[model.tokens]`.
    Tokens,
    /// `[model.verifier]`.
    Verifier,
    /// `[model.grader]`.
    Grader,
    /// `[model.confidence]`.
    Confidence,
    /// An `[[experiment]]`.
    Experiment,
}

impl Table {
    /// Every table, in file order.
    pub const ALL: [Table; 8] = [
        Table::Top,
        Table::Benchmark,
        Table::Model,
        Table::Tokens,
        Table::Verifier,
        Table::Grader,
        Table::Confidence,
        Table::Experiment,
    ];

    /// The header as written in a file.
    pub fn header(self) -> &'static str {
        match self {
            Table::Top => "the top level",
            Table::Benchmark => "[benchmark]",
            Table::Model => "[[model]]",
            Table::Tokens => "[model.tokens]",
            Table::Verifier => "[model.verifier]",
            Table::Grader => "[model.grader]",
            Table::Confidence => "[model.confidence]",
            Table::Experiment => "[[experiment]]",
        }
    }

    /// The table a located key names (`benchmark.mu`, `model[2].tokens.sigma`,
    /// `experiment[1].k`, `seed`), or `None` for a key path of no table.
    pub fn of_path(path: &str) -> Option<Table> {
        let head: Vec<&str> = path
            .split('.')
            .map(|p| p.split('[').next().unwrap_or(p))
            .collect();
        Some(match head.as_slice() {
            [_] => Table::Top,
            ["benchmark", _] => Table::Benchmark,
            ["model", "tokens", _] => Table::Tokens,
            ["model", "verifier", _] => Table::Verifier,
            ["model", "grader", _] => Table::Grader,
            ["model", "confidence", _] => Table::Confidence,
            ["model", _] => Table::Model,
            ["experiment", _] => Table::Experiment,
            _ => return None,
        })
    }

    /// The prefix of a sweep path inside the block the table belongs to (`tokens.` for
    /// `model.NAME.tokens.sigma`).
    fn sweep_prefix(self) -> &'static str {
        match self {
            Table::Tokens => "tokens.",
            Table::Verifier => "verifier.",
            Table::Grader => "grader.",
            Table::Confidence => "confidence.",
            _ => "",
        }
    }
}

/// A numeric field of the raw block `T`, with its own type: a function from the block to the
/// field. What `sweep --set` writes.
pub enum Field<T> {
    /// A whole number >= 0, exact to `u64::MAX` (seed, problems, votes, reruns, traces).
    Whole(fn(&mut T) -> &mut Option<Spanned<u64>>),
    /// A real number (shift, mu, sigma, ...); the validator checks its range.
    Real(fn(&mut T) -> &mut Option<Spanned<f64>>),
    /// A real number stored where the file may also give a list (`attractor`): the swept value
    /// replaces the list with that one number.
    Number(fn(&mut T) -> &mut Option<Spanned<toml::Value>>),
    /// A list of whole numbers (`submissions`): the swept value replaces the list with that one
    /// number, so each cell has one entry.
    WholeList(fn(&mut T) -> &mut Option<Spanned<Vec<u64>>>),
}

// By hand: a derive would ask `T: Copy` of the block type, which only the function pointers hold.
impl<T> Clone for Field<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Field<T> {}

/// Whether and how `sweep --set` may vary a key.
#[derive(Clone, Copy)]
pub enum Sweep {
    /// Not a sweep field (names, lists, words).
    No,
    /// A top-level field.
    Top(Field<RawScenario>),
    /// A `[benchmark]` field.
    Benchmark(Field<RawBenchmark>),
    /// A field of a model or of one of its blocks (through [`block`]).
    Model(Field<RawModel>),
    /// An experiment field.
    Experiment(Field<RawExperiment>),
}

/// The span of an experiment key the file sets, if it sets it.
pub type Present = fn(&RawExperiment) -> Option<Range<usize>>;

mod domain;
mod table;
pub use domain::{
    above, at_least, closed, closed_open, finite, open, open_closed, whole, Bounds, Domain, End,
    ListRule,
};
pub use table::{
    KEYS, MAX_ATTRACTORS, MAX_COMPARISONS, MAX_GAPS, MAX_JUDGE_LOGIT, MAX_PLAN_SAMPLES,
    MAX_SEPARATION, MAX_THRESHOLD,
};

/// One scenario key.
#[derive(Clone, Copy)]
pub struct Key {
    /// Its table.
    pub table: Table,
    /// Its name in the file.
    pub name: &'static str,
    /// What values are valid, as text: a `{}` in it stands for the bounds of [`Key::domain`]
    /// and a `{n}` for its list length, so the text and the check read the same data (see
    /// [`Key::valid`]).
    pub valid: &'static str,
    /// The machine-readable domain of a key whose validity is a numeric range (`None` for
    /// words, names and keys with a check of their own); the resolver's range checks read it.
    pub domain: Option<Domain>,
    /// Conditions beyond the range that involve other keys (", with `shift` only"), shown after
    /// [`Key::valid`] in the docs and the `init` comments; checked by the resolver's own code.
    pub note: &'static str,
    /// Its default ("required" when there is none).
    pub default: &'static str,
    /// One line on what it means.
    pub doc: &'static str,
    /// Whether `sweep --set` may vary it.
    pub sweep: Sweep,
    /// Experiment keys: the kinds that take it. Model keys: the kinds that honour it when it
    /// is set (empty: every kind).
    pub kinds: &'static [ExperimentKind],
    /// Experiment keys: whether a file sets it (`None` for `kind` and `name`, which every kind
    /// takes).
    pub present: Option<Present>,
}

impl Key {
    /// The path `sweep --set` uses inside the key's block (`tokens.sigma`).
    pub fn sweep_name(&self) -> String {
        format!("{}{}", self.table.sweep_prefix(), self.name)
    }

    /// Whether an experiment of `kind` takes (or honours) this key.
    pub fn for_kind(&self, kind: ExperimentKind) -> bool {
        self.kinds.is_empty() || self.kinds.contains(&kind)
    }

    /// What values are valid, with the bounds of [`Key::domain`] written in.
    pub fn valid(&self) -> String {
        match &self.domain {
            Some(d) => self
                .valid
                .replace("{n}", &d.length_text())
                .replace("{}", &d.bounds_text()),
            None => self.valid.to_string(),
        }
    }

    /// [`Key::valid`] followed by the conditions on other keys ([`Key::note`]).
    pub fn valid_with_note(&self) -> String {
        format!("{}{}", self.valid(), self.note)
    }

    /// The comment `evalsim init` writes after the key: the doc, then what is valid and the
    /// default.
    pub fn comment(&self) -> String {
        let valid = self.valid_with_note();
        if self.default.starts_with("required") {
            format!("{}; {valid} ({})", self.doc, self.default)
        } else {
            format!("{}; {valid} (default {})", self.doc, self.default)
        }
    }
}

/// The nested block `b` (e.g. `[model.tokens]`), created empty when the file has none.
pub fn block<T: Default>(b: &mut Option<Spanned<T>>) -> &mut T {
    b.get_or_insert_with(|| Spanned::new(0..0, T::default()))
        .get_mut()
}

/// The keys an experiment of `kind` takes besides `kind` and `name`, by name.
pub fn names_of_kind(kind: ExperimentKind) -> Vec<&'static str> {
    of_kind(kind).map(|k| k.name).collect()
}

/// The optional keys an experiment sets, with their spans, in table order.
pub fn present(e: &RawExperiment) -> Vec<(&'static str, Range<usize>)> {
    let mut out: Vec<(&'static str, Range<usize>)> = Vec::new();
    for key in KEYS {
        if let Some(span) = key.present.and_then(|p| p(e)) {
            if !out.iter().any(|(name, _)| *name == key.name) {
                out.push((key.name, span));
            }
        }
    }
    out
}

/// The keys of one table, in table order (a name that has one line per kind appears once).
pub fn of_table(table: Table) -> impl Iterator<Item = &'static Key> {
    let mut seen: Vec<&str> = Vec::new();
    KEYS.iter().filter(move |k| {
        let fresh = k.table == table && !seen.contains(&k.name);
        if fresh {
            seen.push(k.name);
        }
        fresh
    })
}

/// The key `name` of `table` as an experiment of `kind` reads it (`kind` only matters for
/// experiment keys and the honoured kinds of model keys).
pub fn find(table: Table, name: &str, kind: Option<ExperimentKind>) -> Option<&'static Key> {
    KEYS.iter().find(|k| {
        k.table == table
            && k.name == name
            && (table != Table::Experiment || kind.is_none_or(|kind| k.for_kind(kind)))
    })
}

/// The keys an experiment of `kind` takes besides `kind` and `name`, in table order.
pub fn of_kind(kind: ExperimentKind) -> impl Iterator<Item = &'static Key> {
    KEYS.iter()
        .filter(move |k| k.table == Table::Experiment && k.present.is_some() && k.for_kind(kind))
}

/// The key names of `table` nearest to `unknown` (one edit away, or a prefix either way), for
/// "did you mean".
pub fn nearest(table: Table, unknown: &str) -> Option<&'static str> {
    of_table(table)
        .map(|k| k.name)
        .filter(|name| name.len() > 1 && unknown.len() > 1)
        .min_by_key(|name| edit_distance(name, unknown))
        .filter(|name| edit_distance(name, unknown) <= 2.max(unknown.len() / 4))
}

/// Levenshtein distance of two short ASCII words (one row of the table).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(cur)
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// `docs/keys.md`: the reference page of every key, generated from [`KEYS`]. The suite checks
/// the file is current; `EVALSIM_BLESS=1 cargo test --release --test suite keys_md` rewrites it.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Scenario keys\n\n\
         Generated from the key table in `src/scenario/keys/table.rs` (the suite fails when this page is \
         stale; `EVALSIM_BLESS=1 cargo test --release --test suite keys_md` rewrites it). \
         \"sweep\" marks the keys `evalsim sweep --set` may vary ([sweep.md](sweep.md)); the last \
         section lists the keys of each experiment kind.\n",
    );
    let cell = |s: &str| s.replace('|', "\\|");
    for table in Table::ALL {
        let heading = if table == Table::Top {
            "Top level"
        } else {
            table.header()
        };
        out.push_str(&format!("\n## {heading}\n\n"));
        if table == Table::Experiment {
            out.push_str(
                "| key | kinds | valid | default | meaning | sweep |\n|---|---|---|---|---|---|\n",
            );
        } else if table == Table::Model {
            out.push_str("| key | valid | default | meaning | honoured by | sweep |\n|---|---|---|---|---|---|\n");
        } else {
            out.push_str("| key | valid | default | meaning | sweep |\n|---|---|---|---|---|\n");
        }
        for k in KEYS.iter().filter(|k| k.table == table) {
            let kinds = if k.kinds.is_empty() {
                "every kind".to_string()
            } else {
                k.kinds
                    .iter()
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let sweep = if matches!(k.sweep, Sweep::No) {
                ""
            } else {
                "sweep"
            };
            let row = match table {
                Table::Experiment => vec![
                    format!("`{}`", k.name),
                    kinds,
                    cell(&k.valid_with_note()),
                    cell(k.default),
                    cell(k.doc),
                    sweep.into(),
                ],
                Table::Model => vec![
                    format!("`{}`", k.name),
                    cell(&k.valid_with_note()),
                    cell(k.default),
                    cell(k.doc),
                    kinds,
                    sweep.into(),
                ],
                _ => vec![
                    format!("`{}`", k.name),
                    cell(&k.valid_with_note()),
                    cell(k.default),
                    cell(k.doc),
                    sweep.into(),
                ],
            };
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
    }
    out.push_str("\n## Keys of each experiment kind\n\nEvery kind also takes `kind` and `name`; a key a kind does not take is refused with the list of those it takes.\n\n| kind | keys |\n|---|---|\n");
    for kind in ExperimentKind::ALL {
        let names: Vec<String> = names_of_kind(kind)
            .iter()
            .map(|n| format!("`{n}`"))
            .collect();
        out.push_str(&format!("| `{}` | {} |\n", kind.as_str(), names.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_experiment_key_is_taken_by_some_kind_and_has_its_presence() {
        for k in KEYS.iter().filter(|k| k.table == Table::Experiment) {
            let fixed = k.name == "kind" || k.name == "name";
            assert_eq!(k.present.is_none(), fixed, "{}", k.name);
            assert_eq!(k.kinds.is_empty(), fixed, "{}", k.name);
        }
    }

    #[test]
    fn a_key_with_one_line_per_kind_never_gives_one_kind_two_lines() {
        for kind in ExperimentKind::ALL {
            let names: Vec<&str> = of_kind(kind).map(|k| k.name).collect();
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(names.len(), unique.len(), "{kind:?}: {names:?}");
        }
    }

    #[test]
    fn nearest_suggests_the_key_one_typo_away() {
        assert_eq!(nearest(Table::Model, "shfit"), Some("shift"));
        assert_eq!(nearest(Table::Experiment, "votse"), Some("votes"));
        assert_eq!(nearest(Table::Top, "titel"), Some("title"));
        assert_eq!(nearest(Table::Benchmark, "spread"), None);
    }
}
