//! What `merge` checks in a shard file before it joins it: that the file is the shard of the
//! sweep it claims (a grid whose cell count matches its axes, a shard index below the shard
//! count, every cell's index, values and seed those of that grid), and that every stored check
//! can be judged again: its numbers read as numbers, its exact value is one a check can hold and
//! its z is the one its exact, simulated value and standard error give. Each refusal names the
//! file, the line and column, the key and what would be valid.
//!
//! Why here: a tampered or damaged shard must not become a table of wrong numbers with exit 0;
//! the pass rule itself stays in [`crate::experiments::check`]. Depends on its parent `sweep`
//! (the stored types) and `sim::stream` (cell seeds).
use super::{Manifest, StoredCheck, SweepCell, SweepOutput};
use crate::experiments::check::Untested;
use crate::experiments::Estimate;
use crate::scenario::grid::MAX_CELLS;
use crate::sim::stream::{name_id, stream_id};

/// One step of a path into a JSON document: an object's key or an array's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seg<'a> {
    /// An object member.
    Key(&'a str),
    /// An array element.
    Index(usize),
}

/// A shard file: its name and its JSON text, for located messages.
#[derive(Debug, Clone, Copy)]
pub struct ShardText<'a> {
    /// The file, as it is named in messages.
    pub file: &'a str,
    /// Its text.
    pub text: &'a str,
}

impl ShardText<'_> {
    /// `file:line:column: key: what`, the position being that of the value at `path` (just the
    /// file when the value cannot be found, which a parsed document never does).
    pub fn at(&self, path: &[Seg], what: &str) -> String {
        match locate(self.text, path) {
            Some((line, col)) => format!("{}:{line}:{col}: {}: {what}", self.file, key(path)),
            None => format!("{}: {}: {what}", self.file, key(path)),
        }
    }

    /// `file:line:column` of the value at `path`.
    pub fn position(&self, path: &[Seg]) -> String {
        match locate(self.text, path) {
            Some((line, col)) => format!("{}:{line}:{col} ({})", self.file, key(path)),
            None => format!("{} ({})", self.file, key(path)),
        }
    }
}

/// `cells[3].checks[2].values[0]`.
pub fn key(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if out.is_empty() => out.push_str(k),
            Seg::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Just past the string that starts at `i` (a `"`).
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match b.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// Just past the JSON value that starts at `i`.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b.get(j)? {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while b
                .get(j)
                .is_some_and(|c| !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
            {
                j += 1;
            }
            Some(j)
        }
    }
}

/// The 1-based line and column (in characters) where the value at `path` starts in the JSON
/// document `text`, or `None` when there is no such value.
pub fn locate(text: &str, path: &[Seg]) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let mut i = ws(b, 0);
    for seg in path {
        match *seg {
            Seg::Key(wanted) => {
                if b.get(i) != Some(&b'{') {
                    return None;
                }
                i += 1;
                loop {
                    i = ws(b, i);
                    if b.get(i) != Some(&b'"') {
                        return None;
                    }
                    let end = string_end(b, i)?;
                    let name: String = serde_json::from_str(text.get(i..end)?).ok()?;
                    i = ws(b, end);
                    if b.get(i) != Some(&b':') {
                        return None;
                    }
                    i = ws(b, i + 1);
                    if name == wanted {
                        break;
                    }
                    i = ws(b, value_end(b, i)?);
                    if b.get(i) != Some(&b',') {
                        return None;
                    }
                    i += 1;
                }
            }
            Seg::Index(n) => {
                if b.get(i) != Some(&b'[') {
                    return None;
                }
                i = ws(b, i + 1);
                for _ in 0..n {
                    i = ws(b, value_end(b, i)?);
                    if b.get(i) != Some(&b',') {
                        return None;
                    }
                    i = ws(b, i + 1);
                }
                if matches!(b.get(i), None | Some(b']')) {
                    return None;
                }
            }
        }
    }
    let before = text.get(..i)?;
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Some((line, col))
}

/// The values of cell `index` of `grid`, one per axis (the last axis varies fastest).
pub fn cell_values(grid: &[(String, Vec<String>)], index: usize) -> Vec<&str> {
    let mut rest = index;
    let mut out = vec![""; grid.len()];
    for (ai, (_, values)) in grid.iter().enumerate().rev() {
        if values.is_empty() {
            continue;
        }
        out[ai] = values[rest % values.len()].as_str();
        rest /= values.len();
    }
    out
}

/// The seed `sweep` gives the cell with these values: `stream_id(base, [hash of "path=value,
/// ..."])`, the base being the swept `seed` when there is one, else the master seed.
fn cell_seed(manifest: &Manifest, values: &[&str]) -> Option<u64> {
    let mut base = manifest.seed;
    let mut parts = Vec::with_capacity(values.len());
    for ((path, _), v) in manifest.grid.iter().zip(values) {
        if path == "seed" {
            base = v.parse().ok()?;
        }
        parts.push(format!("{path}={v}"));
    }
    Some(stream_id(base, &[name_id(&parts.join(", "))]))
}

const NAMES: [&str; 4] = ["exact", "sim", "se", "z"];

fn list(values: &[String]) -> String {
    const SHOWN: usize = 12;
    let mut out = values
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if values.len() > SHOWN {
        out.push_str(&format!(", ... ({} values)", values.len()));
    }
    out
}

/// Checks the manifest and shard index of one shard against themselves: distinct swept paths,
/// distinct finite values, a cell count that is the product of the axes' lengths, and a shard
/// `[I, N]` with I < N. Returns `(I, N)`.
///
/// # Errors
/// A located message naming the key and what would be valid.
pub fn check_manifest(f: ShardText, s: &SweepOutput) -> Result<(usize, usize), String> {
    use Seg::{Index as I, Key as K};
    let m = &s.manifest;
    if m.grid.is_empty() {
        return Err(f.at(
            &[K("manifest"), K("grid")],
            "is empty; a sweep has one swept path or more",
        ));
    }
    let mut product: usize = 1;
    for (ai, (path, values)) in m.grid.iter().enumerate() {
        if m.grid[..ai].iter().any(|(p, _)| p == path) {
            return Err(f.at(
                &[K("manifest"), K("grid"), I(ai), I(0)],
                &format!("the path `{path}` is swept twice; a grid sweeps each path once"),
            ));
        }
        if values.is_empty() {
            return Err(f.at(
                &[K("manifest"), K("grid"), I(ai), I(1)],
                &format!("`{path}` has no values; a swept path has one value or more"),
            ));
        }
        for (vi, v) in values.iter().enumerate() {
            let at = [K("manifest"), K("grid"), I(ai), I(1), I(vi)];
            if !v.parse::<f64>().is_ok_and(f64::is_finite) {
                return Err(f.at(
                    &at,
                    &format!("`{v}` is not a value of `{path}`; a swept value is a finite number"),
                ));
            }
            if values[..vi].contains(v) {
                return Err(f.at(
                    &at,
                    &format!(
                        "`{v}` is listed twice for `{path}`; the values of a path are distinct"
                    ),
                ));
            }
            if path == "seed" && v.parse::<u64>().is_err() {
                return Err(f.at(
                    &at,
                    &format!(
                        "`{v}` is not a seed; a seed is a whole number from 0 to {}",
                        u64::MAX
                    ),
                ));
            }
        }
        product = product.saturating_mul(values.len());
    }
    if m.cells != product || product > MAX_CELLS {
        let sizes: Vec<String> = m.grid.iter().map(|(_, v)| v.len().to_string()).collect();
        return Err(f.at(
            &[K("manifest"), K("cells")],
            &format!(
                "is {}, but the grid's values make {} = {product} cells (at most {MAX_CELLS}); expected {product}",
                m.cells,
                sizes.join(" x "),
            ),
        ));
    }
    match s.shard {
        Some([i, n]) if i < n => Ok((i, n)),
        Some([i, n]) => Err(f.at(
            &[K("shard")],
            &format!("[{i}, {n}] is not a shard; expected [I, N] with 0 <= I < N (the file of --shard I/N)"),
        )),
        None => Err(f.at(
            &[K("manifest")],
            "the file has no `shard` key: it is a whole sweep, not a shard; merge joins shard-I-of-N.json files",
        )),
    }
}

/// Checks one cell of a shard (at `cells[ci]` of the file) against the grid of its manifest:
/// an index inside the grid, the grid's values for that index, the seed `sweep` derives for
/// them, and every check (see [`check_stored`]).
///
/// # Errors
/// A located message naming the key and what would be valid.
pub fn check_cell(f: ShardText, m: &Manifest, ci: usize, c: &SweepCell) -> Result<(), String> {
    use Seg::{Index as I, Key as K};
    check_index(f, m, ci, c)?;
    let expected = cell_values(&m.grid, c.index);
    if c.values.len() != m.grid.len() {
        let paths: Vec<&str> = m.grid.iter().map(|(p, _)| p.as_str()).collect();
        return Err(f.at(
            &[K("cells"), I(ci), K("values")],
            &format!(
                "holds {} values; expected {}, one per swept path ({})",
                c.values.len(),
                m.grid.len(),
                paths.join(", ")
            ),
        ));
    }
    for (ai, ((path, values), (v, want))) in m
        .grid
        .iter()
        .zip(c.values.iter().zip(&expected))
        .enumerate()
    {
        if v != want {
            let why = if values.contains(v) {
                format!("`{v}` is not the value of `{path}` in cell {}", c.index)
            } else {
                format!(
                    "`{v}` is not a value of `{path}` in the grid ({})",
                    list(values)
                )
            };
            return Err(f.at(
                &[K("cells"), I(ci), K("values"), I(ai)],
                &format!("{why}; cell {} has {path}={want}", c.index),
            ));
        }
    }
    if let Some(seed) = cell_seed(m, &expected) {
        if seed != c.seed {
            return Err(f.at(
                &[K("cells"), I(ci), K("seed")],
                &format!(
                    "{} is not the seed of cell {}; expected {seed}, derived from the master seed {} and the cell's values",
                    c.seed, c.index, m.seed
                ),
            ));
        }
    }
    for (ki, check) in c.checks.iter().enumerate() {
        check_stored(f, &[K("cells"), I(ci), K("checks"), I(ki)], check)?;
    }
    Ok(())
}

/// Checks that the cell at `cells[ci]` has an index inside the grid.
///
/// # Errors
/// A located message naming the valid indexes.
pub fn check_index(f: ShardText, m: &Manifest, ci: usize, c: &SweepCell) -> Result<(), String> {
    use Seg::{Index as I, Key as K};
    if c.index >= m.cells {
        return Err(f.at(
            &[K("cells"), I(ci), K("index")],
            &format!(
                "cell index {} is outside the grid; expected an index from 0 to {}",
                c.index,
                m.cells.saturating_sub(1)
            ),
        ));
    }
    Ok(())
}

/// Checks one stored check at `at`: every number reads as one; a judged check's exact value is
/// a number (infinite only when the simulated value equals it), its standard error is not
/// negative and finite unless the two agree, its trial weight is finite and not negative, and
/// its z is the one [`Estimate::new`] gives its exact value, simulated value and standard error.
///
/// # Errors
/// A located message naming the key and what would be valid.
pub fn check_stored(f: ShardText, at: &[Seg], c: &StoredCheck) -> Result<(), String> {
    use Seg::{Index as I, Key as K};
    let path = |tail: &[Seg<'static>]| [at, tail].concat();
    let mut v = [0.0f64; 4];
    for (k, text) in c.values.iter().enumerate() {
        v[k] = text.parse().map_err(|_| {
            f.at(
                &path(&[K("values"), I(k)]),
                &format!(
                    "{} `{text}` is not a number; expected a number (`inf`, `-inf` or `nan` where it is not finite)",
                    NAMES[k]
                ),
            )
        })?;
    }
    let step: f64 = c.step.parse().unwrap_or(f64::NAN);
    if !(step.is_finite() && step >= 0.0) {
        return Err(f.at(
            &path(&[K("step")]),
            &format!(
                "step `{}` is not a trial weight; expected a finite number, 0 or more (0 when the checked number is not a count)",
                c.step
            ),
        ));
    }
    let [exact, sim, se, z] = v;
    let judged = c.untested.as_deref().and_then(Untested::parse).is_none();
    if judged {
        let value = |k: usize, what: String| Err(f.at(&path(&[K("values"), I(k)]), &what));
        if exact.is_nan() {
            return value(
                0,
                "exact is nan; expected a number (a checked exact value is finite, or infinite when the simulated value is the same infinity)".into(),
            );
        }
        if exact.is_infinite() && sim != exact {
            return value(
                0,
                format!("exact is {} but sim is {}; expected a finite exact value (an infinite one is checked only against the same infinity)", c.values[0], c.values[1]),
            );
        }
        if se < 0.0 || (se.is_infinite() && sim != exact) {
            return value(
                2,
                format!("se `{}` is not a standard error; expected a finite number, 0 or more (an infinite se would pass any simulated value)", c.values[2]),
            );
        }
    }
    let derived = Estimate::new(exact, sim, se).z;
    if derived != z && !(derived.is_nan() && z.is_nan()) {
        return Err(f.at(
            &path(&[K("values"), I(3)]),
            &format!(
                "z `{}` does not match the stored exact, sim and se, which give z = {}; expected {} (a shard's z is (sim - exact) / se of its own numbers: was the file edited?)",
                c.values[3],
                super::num(derived),
                super::num(derived)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use Seg::{Index as I, Key as K};

    #[test]
    fn locate_finds_keys_and_elements_in_any_layout() {
        let text =
            "{\"a\": 1,\n  \"b\" : [ {\"x\": \"s,]\"}, {\"x\": [1, 2],\n \"y\": \"\\\"q\"} ]}";
        assert_eq!(locate(text, &[K("a")]), Some((1, 7)));
        assert_eq!(locate(text, &[K("b"), I(1), K("x"), I(1)]), Some((2, 35)));
        assert_eq!(locate(text, &[K("b"), I(1), K("y")]), Some((3, 7)));
        assert_eq!(locate(text, &[K("b"), I(2)]), None);
        assert_eq!(locate(text, &[K("c")]), None);
        assert_eq!(
            key(&[K("cells"), I(3), K("values"), I(0)]),
            "cells[3].values[0]"
        );
    }

    #[test]
    fn cell_values_vary_the_last_axis_fastest() {
        let grid = vec![
            ("a".to_string(), vec!["1".to_string(), "2".to_string()]),
            (
                "b".to_string(),
                vec!["x".to_string(), "y".to_string(), "z".to_string()],
            ),
        ];
        assert_eq!(cell_values(&grid, 0), ["1", "x"]);
        assert_eq!(cell_values(&grid, 4), ["2", "y"]);
    }

    fn stored(values: [&str; 4], step: &str) -> StoredCheck {
        StoredCheck {
            experiment: "e".into(),
            quantity: "q".into(),
            cell: "c".into(),
            values: values.map(String::from),
            step: step.into(),
            untested: None,
        }
    }

    #[test]
    fn merge_trusted_a_stored_z_that_its_numbers_do_not_give() {
        let f = ShardText {
            file: "shard-0-of-1.json",
            text: "{}",
        };
        let good = Estimate::new(0.5, 0.53, 0.01);
        let z = crate::experiments::num(good.z);
        assert!(check_stored(f, &[], &stored(["0.5", "0.53", "0.01", &z], "0")).is_ok());
        // A stale z: the numbers say z = 6, the file says 1.
        let stale = stored(["0.5", "0.56", "0.01", "1"], "0");
        let e = check_stored(f, &[], &stale).expect_err("stale z");
        assert!(e.contains("values[3]") && e.contains("expected 6"), "{e}");
        // Judged by its numbers, not by the stored z: it fails the one pass rule.
        assert!(!stale.passed(), "a stored z of 1 hid z = 6");
        // Both infinite with no se, as run stores them, is valid.
        assert!(check_stored(f, &[], &stored(["inf", "inf", "nan", "0"], "0")).is_ok());
        for (values, step, key) in [
            (["abc", "0.5", "0.1", "0"], "0", "values[0]"),
            (["nan", "0.5", "0.1", "nan"], "0", "values[0]"),
            (["inf", "0.5", "0.1", "-inf"], "0", "values[0]"),
            (["0.5", "0.9", "inf", "0"], "0", "values[2]"),
            (["0.5", "0.5", "-1", "0"], "0", "values[2]"),
            (["0.5", "0.5", "0.1", "0"], "-1", "step"),
            (["0.5", "0.5", "0.1", "0"], "x", "step"),
        ] {
            let e = check_stored(f, &[], &stored(values, step)).expect_err("refused");
            assert!(e.contains(key) && e.contains("expected"), "{values:?}: {e}");
        }
    }
}
