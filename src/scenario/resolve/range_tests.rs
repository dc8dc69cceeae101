//! The key table's numeric domains against the resolver, driven by the table itself: every
//! numeric key is set just inside and just outside each end of its domain in an otherwise valid
//! scenario, and the resolver must accept the first and refuse the second, naming the key and
//! the bounds.
use super::*;
use crate::scenario::keys::{Bounds, Domain, End, Key, KEYS};

/// A value to write into a scenario: a real or a whole number.
#[derive(Debug, Clone, Copy)]
enum V {
    R(f64),
    W(u64),
}

impl V {
    fn toml(self) -> String {
        match self {
            V::R(x) if x.is_nan() => "nan".into(),
            V::R(x) if x == f64::INFINITY => "inf".into(),
            V::R(x) if x == f64::NEG_INFINITY => "-inf".into(),
            V::R(x) => format!("{x:?}"),
            V::W(x) => x.to_string(),
        }
    }
}

/// The values just inside and just outside every end of `d` (reals: also NaN and the
/// infinities outside). Whole numbers beyond TOML's integers are left out.
fn probes(d: &Domain) -> (Vec<V>, Vec<V>) {
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    match d.bounds {
        Bounds::Real(lo, hi) => {
            match lo {
                End::Closed(a) => (inside.push(V::R(a)), outside.push(V::R(a.next_down()))),
                End::Open(a) => (inside.push(V::R(a.next_up())), outside.push(V::R(a))),
                End::Unbounded => ((), ()),
            };
            match hi {
                End::Closed(b) => (inside.push(V::R(b)), outside.push(V::R(b.next_up()))),
                End::Open(b) => (inside.push(V::R(b.next_down())), outside.push(V::R(b))),
                End::Unbounded => ((), ()),
            };
            outside.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY].map(V::R));
        }
        Bounds::Whole(lo, hi) => {
            inside.push(V::W(lo));
            if lo > 0 {
                outside.push(V::W(lo - 1));
            }
            if hi <= i64::MAX as u64 {
                inside.push(V::W(hi));
            }
            if hi < i64::MAX as u64 {
                outside.push(V::W(hi + 1));
            }
        }
    }
    (inside, outside)
}

fn admits(d: &Domain, v: V) -> bool {
    match v {
        V::R(x) => d.admits_real(x),
        V::W(x) => d.admits_whole(x),
    }
}

#[test]
fn every_numeric_key_domain_admits_its_ends_and_refuses_just_outside() {
    let mut seen = 0;
    for key in KEYS {
        let Some(d) = key.domain else {
            assert!(
                !key.valid.contains("{}"),
                "{}: bounds text without a domain",
                key.name
            );
            continue;
        };
        seen += 1;
        let (inside, outside) = probes(&d);
        for v in inside {
            assert!(admits(&d, v), "{} {:?} refuses {v:?}", key.name, d);
        }
        for v in outside {
            assert!(!admits(&d, v), "{} {:?} admits {v:?}", key.name, d);
        }
        // The text states the bounds unless there are none to state.
        let bounded = !matches!(d.bounds, Bounds::Real(End::Unbounded, End::Unbounded));
        assert_eq!(
            key.valid.contains("{}"),
            bounded,
            "{}: {}",
            key.name,
            key.valid
        );
        assert!(
            d.list.is_some() || !key.valid.contains("{n}"),
            "{}: a list length in the text of a single value",
            key.name
        );
    }
    assert!(seen >= 60, "only {seen} numeric keys");
}

/// A model line, block or experiment as (key, value) pairs, in file order.
type Lines = Vec<(&'static str, String)>;

fn set(lines: &mut Lines, key: &'static str, value: String) {
    match lines.iter_mut().find(|(k, _)| *k == key) {
        Some(line) => line.1 = value,
        None => lines.push((key, value)),
    }
}

fn drop(lines: &mut Lines, key: &str) {
    lines.retain(|(k, _)| *k != key);
}

fn lines(pairs: &[(&'static str, &str)]) -> Lines {
    pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

/// A valid scenario in which `key` (as an experiment of `kind` reads it) is set to `value`.
fn scenario(key: &Key, kind: Option<ExperimentKind>, value: &str) -> String {
    let tokens = "median_tokens = 100.0\nhard_growth = 0.5\nwrong_factor = 1.5\nsigma = 0.5\n";
    let mut bench = lines(&[("problems", "4"), ("mu", "0.0"), ("sigma", "1.0")]);
    let mut a = lines(&[("name", "\"a\""), ("shift", "0.0"), ("attractor", "0.5")]);
    let mut blocks: Vec<(&str, Lines)> = vec![("tokens", lines(&[]))];
    let mut exp: Lines = Vec::new();
    let contaminate = |bench: &mut Lines, a: &mut Lines| {
        set(bench, "contaminated", "0.5".into());
        set(bench, "contaminated_models", "[\"a\"]".into());
        set(a, "memorized_rate", "0.9".into());
    };
    if let Some(kind) = kind {
        exp = lines(&[("kind", &format!("\"{}\"", kind.as_str()))]);
        let base: &[(&'static str, &str)] = match kind {
            ExperimentKind::Curves => &[("k", "[1]"), ("votes", "1")],
            ExperimentKind::AttractorSweep => &[
                ("model", "\"a\""),
                ("attractor", "[0.5]"),
                ("k", "[1]"),
                ("votes", "1"),
            ],
            ExperimentKind::SeedVariance => &[("model", "\"a\""), ("n", "[1]"), ("reruns", "1")],
            ExperimentKind::VoteSpread => &[("model", "\"a\""), ("k", "[1]"), ("reruns", "1")],
            ExperimentKind::HeadToHead => &[
                ("a", "\"a\""),
                ("b", "\"b\""),
                ("n", "[1]"),
                ("reruns", "1"),
            ],
            ExperimentKind::Budget => &[
                ("models", "[\"a\"]"),
                ("budgets", "[100.0, 200.0]"),
                ("traces", "1"),
            ],
            ExperimentKind::Cost => &[
                ("models", "[\"a\"]"),
                ("k", "[1]"),
                ("votes", "1"),
                ("traces", "1"),
            ],
            ExperimentKind::Plan => &[
                ("model", "\"a\""),
                ("gap_logits", "[0.2]"),
                ("check_cells", "\"none\""),
                ("check_population", "\"none\""),
            ],
            ExperimentKind::Contamination => &[
                ("model", "\"a\""),
                ("n", "[1]"),
                ("fresh", "[5]"),
                ("max_fresh", "10"),
                ("reruns", "1"),
            ],
            ExperimentKind::Judge => &[
                ("a", "\"a\""),
                ("b", "\"b\""),
                ("judge_family", "\"a\""),
                ("comparisons", "4"),
                ("reruns", "1"),
            ],
            ExperimentKind::Confidence => &[("models", "[\"a\"]"), ("k", "[1]"), ("votes", "1")],
        };
        exp.extend(lines(base));
        if kind == ExperimentKind::Contamination {
            contaminate(&mut bench, &mut a);
        }
        if kind == ExperimentKind::Confidence {
            blocks.push(("confidence", lines(&[("separation", "1.0")])));
        }
        match (kind, key.name) {
            (ExperimentKind::AttractorSweep, "split" | "grader_fpr") => drop(&mut exp, "attractor"),
            (ExperimentKind::Plan, "gap_points") => drop(&mut exp, "gap_logits"),
            (ExperimentKind::Plan, "k") => set(&mut exp, "metric", "\"maj\"".into()),
            _ => {}
        }
        set(&mut exp, key.name, value.into());
    }
    match (key.table, key.name) {
        (Table::Top, _) | (Table::Experiment, _) => {}
        (Table::Benchmark, "rates") => bench = lines(&[("rates", value)]),
        (Table::Benchmark, "contaminated") => {
            contaminate(&mut bench, &mut a);
            set(&mut bench, "contaminated", value.into());
        }
        (Table::Benchmark, name) => set(&mut bench, name, value.into()),
        (Table::Model, "memorized_rate") => {
            contaminate(&mut bench, &mut a);
            set(&mut a, "memorized_rate", value.into());
        }
        (Table::Model, "rates") => {
            set(&mut bench, "problems", "1".into());
            drop(&mut a, "shift");
            set(&mut a, "rates", value.into());
        }
        (Table::Model, name) => set(&mut a, name, value.into()),
        (Table::Tokens, name) => {
            blocks.clear();
            let mut t: Lines = tokens
                .lines()
                .map(|l| l.split_once(" = ").expect("key = value"))
                .map(|(k, v)| (k, v.to_string()))
                .collect();
            set(&mut t, name, value.into());
            blocks.push(("tokens", t));
        }
        (Table::Verifier, name) => {
            let mut v = if name == "separation" {
                lines(&[("kind", "\"score\"")])
            } else {
                lines(&[("kind", "\"threshold\""), ("tpr", "0.9"), ("fpr", "0.1")])
            };
            set(&mut v, name, value.into());
            blocks.push(("verifier", v));
        }
        (Table::Grader, name) => blocks.push(("grader", vec![(name, value.into())])),
        (Table::Confidence, name) => {
            blocks.retain(|(b, _)| *b != "confidence");
            let mut c = lines(&[("separation", "1.0")]);
            set(&mut c, name, value.into());
            blocks.push(("confidence", c));
        }
    }
    let write =
        |lines: &Lines| -> String { lines.iter().map(|(k, v)| format!("{k} = {v}\n")).collect() };
    let mut text = String::new();
    if key.table == Table::Top {
        text.push_str(&format!("{} = {value}\n", key.name));
    }
    text.push_str(&format!("[benchmark]\n{}", write(&bench)));
    text.push_str(&format!("[[model]]\n{}", write(&a)));
    for (name, lines) in &blocks {
        let body = if *name == "tokens" && lines.is_empty() {
            tokens.to_string()
        } else {
            write(lines)
        };
        text.push_str(&format!("[model.{name}]\n{body}"));
    }
    text.push_str(&format!(
        "[[model]]\nname = \"b\"\nshift = 0.25\nattractor = 0.5\n[model.tokens]\n{tokens}"
    ));
    if kind.is_some() {
        text.push_str(&format!("[[experiment]]\n{}", write(&exp)));
    }
    text
}

/// The key as errors name it in [`scenario`]'s file.
fn path(key: &Key) -> String {
    match key.table {
        Table::Top => key.name.to_string(),
        Table::Benchmark => format!("benchmark.{}", key.name),
        Table::Model => format!("model[1].{}", key.name),
        Table::Experiment => format!("experiment[1].{}", key.name),
        t => format!(
            "model[1].{}.{}",
            &t.header()[7..t.header().len() - 1],
            key.name
        ),
    }
}

/// What a refusal of `d` says the bounds are.
fn bounds_in_message(d: &Domain) -> String {
    match d.bounds {
        Bounds::Whole(lo, u64::MAX) => format!(">= {lo}"),
        Bounds::Whole(lo, hi) => format!("between {lo} and {hi}"),
        Bounds::Real(End::Unbounded, End::Unbounded) => "finite".into(),
        bounds => Domain { bounds, list: None }.bounds_text(),
    }
}

/// Values just inside an end that a rule on other keys refuses, with the rule: the
/// resolver must refuse them without its range message.
const REFUSED_BY_ANOTHER_RULE: &[(&str, Option<ExperimentKind>, &str, &str)] = &[
    (
        "median_tokens",
        None,
        "5e-324",
        "token_range: the squared lengths underflow",
    ),
    (
        "wrong_factor",
        None,
        "5e-324",
        "token_range: the squared lengths underflow",
    ),
    (
        "n",
        CONTAMINATION,
        "[100000]",
        "n x (public + fresh) at most 40,000",
    ),
    (
        "fresh",
        CONTAMINATION,
        "[100000]",
        "n x (public + fresh) at most 40,000",
    ),
    (
        "max_fresh",
        CONTAMINATION,
        "100000",
        "n x (public + fresh) at most 40,000",
    ),
];

const CONTAMINATION: Option<ExperimentKind> = Some(ExperimentKind::Contamination);

#[test]
fn key_ranges_were_written_twice() {
    let mut failures = Vec::new();
    let mut cases = 0;
    for key in KEYS {
        let Some(d) = key.domain else { continue };
        let kinds: Vec<Option<ExperimentKind>> = if key.table == Table::Experiment {
            key.kinds.iter().map(|&k| Some(k)).collect()
        } else {
            vec![None]
        };
        let (inside, outside) = probes(&d);
        // A list holds the probe and, when it needs two entries, an end of the other side.
        let write = |v: V, low: bool| -> String {
            let Some(rule) = d.list else { return v.toml() };
            if rule.min < 2 {
                return format!("[{}]", v.toml());
            }
            let (lo, hi) = (probes(&d).0[0], *probes(&d).0.last().expect("two ends"));
            match low {
                true => format!("[{}, {}]", v.toml(), hi.toml()),
                false => format!("[{}, {}]", lo.toml(), v.toml()),
            }
        };
        for kind in kinds {
            let what = format!("{} ({kind:?})", path(key));
            for (i, &v) in inside.iter().enumerate() {
                let value = write(v, i == 0);
                let text = scenario(key, kind, &value);
                cases += 1;
                let result = Scenario::from_toml(&text, "t", "t.toml");
                let excused = REFUSED_BY_ANOTHER_RULE
                    .iter()
                    .any(|(k, of, val, _)| *k == key.name && *of == kind && *val == value);
                match (result, excused) {
                    (Ok(_), false) => {}
                    (Err(e), true) if !e.to_string().contains(&bounds_in_message(&d)) => {}
                    (Err(e), _) => failures.push(format!("{what} = {value} refused: {e}\n{text}")),
                    (Ok(_), true) => failures.push(format!(
                        "{what} = {value} is accepted: drop it from REFUSED_BY_ANOTHER_RULE"
                    )),
                }
            }
            for (i, &v) in outside.iter().enumerate() {
                let value = write(v, i == 0);
                let text = scenario(key, kind, &value);
                cases += 1;
                match Scenario::from_toml(&text, "t", "t.toml") {
                    Ok(_) => failures.push(format!("{what} = {value} accepted\n{text}")),
                    Err(e) => {
                        let e = e.to_string();
                        let want = [path(key), bounds_in_message(&d)];
                        if !want.iter().all(|w| e.contains(w.as_str())) {
                            failures.push(format!("{what} = {value}: {e} lacks {want:?}"));
                        }
                    }
                }
            }
        }
    }
    assert!(cases > 300, "only {cases} cases");
    assert!(
        failures.is_empty(),
        "{}\n\n{} failures",
        failures.join("\n\n"),
        failures.len()
    );
}
