//! Outputs of `evalsim sweep` and `evalsim merge`: one tidy table over the grid, the full JSON,
//! and per experiment a figure of headline quantities against the first swept field. Built from
//! a finished [`SweepOutput`] only, so a merged sweep renders byte for byte like an unsharded one.

mod figure;

use super::plot::{self, Figure};
use super::tables::{check_fields, Csv, CHECK_COLUMNS};
use super::{Artifact, ReportError};
use crate::experiments::sweep::SweepOutput;

/// Most panels (quantities) drawn per experiment; every quantity is in `sweep.csv`.
pub const MAX_PANELS: usize = 6;
/// Most lines in one panel (the palette's eight colours); longer lists are spread.
pub const MAX_LINES: usize = 8;

/// `sweep.csv`: one row per cell and check, the swept values first.
pub fn sweep_csv(s: &SweepOutput) -> String {
    let mut header: Vec<&str> = s.manifest.grid.iter().map(|(p, _)| p.as_str()).collect();
    header.extend(CHECK_COLUMNS);
    let mut csv = Csv::new(&header);
    for c in &s.cells {
        for ch in &c.checks {
            let mut row = c.values.clone();
            row.extend(check_fields(
                [&ch.experiment, &ch.quantity, &ch.cell],
                ch.values.clone(),
                &ch.estimate(),
            ));
            csv.row(row);
        }
    }
    csv.finish()
}

fn value(s: &str) -> f64 {
    s.parse().unwrap_or(f64::NAN)
}

/// The names `--plot` accepts for this sweep: every quantity, and every `EXPERIMENT:QUANTITY`.
pub fn plot_names(s: &SweepOutput) -> Vec<String> {
    plot_names_of(
        s.cells
            .iter()
            .flat_map(|c| &c.checks)
            .map(|ch| (ch.experiment.as_str(), ch.quantity.as_str())),
    )
}

/// The names `--plot` accepts for checks of these `(experiment, quantity)` pairs.
pub fn plot_names_of<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (experiment, quantity) in pairs {
        for n in [quantity.to_string(), format!("{experiment}:{quantity}")] {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names
}

/// Checks the names given to `--plot` against the sweep's quantities.
///
/// # Errors
/// A message naming the first unknown name and listing the valid ones.
pub fn check_plot_names(s: &SweepOutput, wanted: &[String]) -> Result<(), String> {
    check_plot_names_in(&plot_names(s), wanted)
}

/// Checks the names given to `--plot` against `valid` (from [`plot_names_of`]).
///
/// # Errors
/// A message naming the first unknown name and listing the valid ones.
pub fn check_plot_names_in(valid: &[String], wanted: &[String]) -> Result<(), String> {
    let quantities = || {
        valid
            .iter()
            .filter(|n| !n.contains(':'))
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if wanted.is_empty() {
        return Err(format!(
            "--plot: give at least one quantity; valid quantities: {}",
            quantities()
        ));
    }
    match wanted.iter().find(|w| !valid.contains(w)) {
        None => Ok(()),
        Some(bad) => Err(format!(
            "--plot {bad:?}: no such quantity in this sweep; valid quantities: {} (or EXPERIMENT:QUANTITY for one experiment's, e.g. {:?})",
            quantities(),
            valid.iter().find(|n| n.contains(':')).map_or("", String::as_str)
        )),
    }
}

/// Splits the text of `--plot` (comma-separated quantity names) into names.
pub fn parse_plot(text: &str) -> Vec<String> {
    text.split(',')
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// One figure per experiment: up to [`MAX_PANELS`] of its quantities (spread over its list)
/// against the first swept field, one line per combination of the other fields; exact values as
/// lines, simulated ones as points with 95% intervals.
pub fn sweep_figures(s: &SweepOutput) -> Vec<(String, Figure)> {
    sweep_figures_of(s, None)
}

/// [`sweep_figures`] with the panels chosen by `--plot`: only checks whose quantity (or
/// `experiment:quantity`) is listed; those that change across the grid first. Experiments with
/// none of the listed quantities get no figure.
pub fn sweep_figures_of(s: &SweepOutput, plot: Option<&[String]>) -> Vec<(String, Figure)> {
    if s.manifest.grid.is_empty() {
        return Vec::new();
    }
    experiments(s)
        .into_iter()
        .filter_map(|exp| figure::experiment_figure(s, exp, plot))
        .collect()
}

/// The name of the j-th quantity of an experiment across the cells, from its names in cell order:
/// the one name when the cells agree; `n@k` when they differ only in a leading whole number
/// (a sweep of `submissions`: `2@k`, `3@k`, ...; `2@k by verifier` gives `n@k by verifier`);
/// otherwise every name joined by " / ".
fn cell_quantity(names: &[&str]) -> String {
    if let [one] = names {
        return (*one).to_string();
    }
    let split = |q: &str| {
        let digits = q.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0).then(|| q[digits..].to_string())
    };
    let rests: Vec<Option<String>> = names.iter().map(|q| split(q)).collect();
    match rests.first() {
        Some(Some(rest)) if rests.iter().all(|r| r.as_deref() == Some(rest.as_str())) => {
            format!("n{rest}")
        }
        _ => names.join(" / "),
    }
}

/// At most `lines` of the checks `js`, chosen as a grid: each check's cell words of the form
/// `name=value` that not all of them share are its coordinates (`a=0.5 k=16`), and the
/// dimension with the most values loses values (its ends kept, the rest evenly spread) until the
/// product fits. So the lines are every chosen `a` at every chosen `k`, not arbitrary pairs.
fn grid_pick(js: &[usize], words_of: &dyn Fn(usize) -> Vec<String>, lines: usize) -> Vec<usize> {
    if js.len() <= lines {
        return js.to_vec();
    }
    if lines == 0 {
        return Vec::new();
    }
    let coords: Vec<Vec<(String, String)>> = js
        .iter()
        .map(|&j| {
            words_of(j)
                .into_iter()
                .filter_map(|w| {
                    w.split_once('=')
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                })
                .collect()
        })
        .collect();
    let mut dims: Vec<(String, Vec<String>)> = Vec::new();
    for c in &coords {
        for (k, v) in c {
            match dims.iter_mut().find(|(d, _)| d == k) {
                Some((_, vals)) if !vals.contains(v) => vals.push(v.clone()),
                Some(_) => {}
                None => dims.push((k.clone(), vec![v.clone()])),
            }
        }
    }
    let mut keep: Vec<Vec<String>> = dims.iter().map(|(_, v)| v.clone()).collect();
    let product = |keep: &[Vec<String>]| keep.iter().map(Vec::len).product::<usize>();
    while product(&keep) > lines {
        let Some(d) = (0..keep.len())
            .filter(|&d| keep[d].len() > 1)
            .max_by_key(|&d| (keep[d].len(), std::cmp::Reverse(d)))
        else {
            break;
        };
        let all = &dims[d].1;
        let m = keep[d].len() - 1;
        keep[d] = (0..m)
            .map(|i| all[i * (all.len() - 1) / (m - 1).max(1)].clone())
            .collect();
    }
    let inside = |c: &Vec<(String, String)>| {
        c.iter().all(|(k, v)| {
            dims.iter()
                .position(|(d, _)| d == k)
                .is_none_or(|d| keep[d].contains(v))
        })
    };
    let picked: Vec<usize> = js
        .iter()
        .zip(&coords)
        .filter(|(_, c)| inside(c))
        .map(|(&j, _)| j)
        .collect();
    if picked.len() <= lines {
        picked
    } else {
        (0..lines)
            .map(|i| picked[i * (picked.len() - 1) / (lines - 1).max(1)])
            .collect()
    }
}

/// The experiments of a sweep, in the order their checks first appear.
fn experiments(s: &SweepOutput) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for c in &s.cells {
        for ch in &c.checks {
            if !out.contains(&ch.experiment.as_str()) {
                out.push(&ch.experiment);
            }
        }
    }
    out
}

/// For each swept field, whether it moves experiment `exp`: two cells that differ only in that
/// field give a different exact value of one of its checks (beyond 1e-12 relative).
pub fn fields_moving(s: &SweepOutput, exp: &str) -> Vec<bool> {
    let exact = |c: &crate::experiments::sweep::SweepCell| -> Vec<f64> {
        c.checks
            .iter()
            .filter(|ch| ch.experiment == exp)
            .map(|ch| ch.estimate().exact)
            .collect()
    };
    let differ = |a: &[f64], b: &[f64]| {
        a.len() != b.len()
            || a.iter().zip(b).any(|(x, y)| {
                (x.is_finite() || y.is_finite())
                    && !(x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs()))
            })
    };
    (0..s.manifest.grid.len())
        .map(|fi| {
            s.cells.iter().enumerate().any(|(i, a)| {
                s.cells[i + 1..].iter().any(|b| {
                    a.values
                        .iter()
                        .zip(&b.values)
                        .enumerate()
                        .all(|(fj, (x, y))| fj == fi || x == y)
                        && a.values.get(fi) != b.values.get(fi)
                        && differ(&exact(a), &exact(b))
                })
            })
        })
        .collect()
}

/// Per experiment, the swept fields that move none of its exact values (for a warning).
pub fn idle_fields(s: &SweepOutput) -> Vec<(String, Vec<String>)> {
    experiments(s)
        .into_iter()
        .filter_map(|exp| {
            let idle: Vec<String> = fields_moving(s, exp)
                .iter()
                .zip(&s.manifest.grid)
                .filter(|(m, _)| !**m)
                .map(|(_, (p, _))| p.clone())
                .collect();
            (!idle.is_empty()).then(|| (exp.to_string(), idle))
        })
        .collect()
}

/// A swept path in words for titles and axes: `model.long.attractor` -> "long: attractor",
/// `benchmark.sigma` -> "benchmark sigma", underscores as spaces.
pub fn field_words(path: &str) -> String {
    let words = |t: &str| t.replace('_', " ");
    match path.split('.').collect::<Vec<_>>().as_slice() {
        ["model", name, rest @ ..] if !rest.is_empty() => {
            format!("{name}: {}", words(&rest.join(" ")))
        }
        ["benchmark", rest @ ..] if !rest.is_empty() => {
            format!("benchmark {}", words(&rest.join(" ")))
        }
        _ => words(path),
    }
}

/// Every output of a whole sweep: `sweep.csv`, `sweep.json` and the figures.
///
/// # Errors
/// [`ReportError`] when a figure or JSON document cannot be produced.
pub fn render_sweep(
    s: &SweepOutput,
    figures: Option<plot::Raster>,
) -> Result<Vec<Artifact>, ReportError> {
    render_sweep_of(s, figures, None)
}

/// [`render_sweep`] with the figures' panels chosen by `--plot` (names checked by
/// [`check_plot_names`] first).
///
/// # Errors
/// [`ReportError`] when a figure or JSON document cannot be produced.
pub fn render_sweep_of(
    s: &SweepOutput,
    figures: Option<plot::Raster>,
    plot: Option<&[String]>,
) -> Result<Vec<Artifact>, ReportError> {
    let mut out = vec![
        Artifact {
            file: "sweep.csv".into(),
            bytes: sweep_csv(s).into_bytes(),
        },
        Artifact {
            file: "sweep.json".into(),
            bytes: super::json("sweep.json", s)?,
        },
    ];
    if let Some(raster) = figures {
        use rayon::prelude::*;
        let drawn = sweep_figures_of(s, plot)
            .par_iter()
            .map(|(stem, fig)| {
                plot::render_both(fig, raster).map(|(png, svg)| (stem.clone(), png, svg))
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (stem, png, svg) in drawn {
            out.extend(Artifact::figure(&stem, png, svg));
        }
    }
    Ok(out)
}

/// A shard's one file, `shard-I-of-N.json`.
///
/// # Errors
/// [`ReportError::Json`] when it cannot be serialised.
pub fn render_shard(s: &SweepOutput) -> Result<Artifact, ReportError> {
    let [i, n] = s.shard.unwrap_or([0, 1]);
    let file = format!("shard-{i}-of-{n}.json");
    Ok(Artifact {
        bytes: super::json(&file, s)?,
        file,
    })
}

#[cfg(test)]
mod tests {
    use super::{cell_quantity, grid_pick};

    #[test]
    fn a_swept_submissions_named_its_panel_after_the_first_cell() {
        assert_eq!(cell_quantity(&["maj@k"]), "maj@k");
        assert_eq!(cell_quantity(&["2@k", "3@k", "10@k"]), "n@k");
        assert_eq!(
            cell_quantity(&["2@k by verifier", "5@k by verifier"]),
            "n@k by verifier"
        );
        assert_eq!(cell_quantity(&["2@k", "maj@k"]), "2@k / maj@k");
    }

    /// `attractor-sweep`'s checks `a=A k=K` for 5 shares and 7 k, in the order they are stored.
    fn words() -> Vec<Vec<String>> {
        let mut v = Vec::new();
        for a in ["0", "0.25", "0.5", "0.75", "0.9"] {
            for k in [1, 2, 4, 8, 16, 32, 64] {
                v.push(vec![
                    "model=long".to_string(),
                    format!("a={a}"),
                    format!("k={k}"),
                ]);
            }
        }
        v
    }

    #[test]
    fn sweep_lines_were_arbitrary_pairs_of_share_and_k() {
        let w = words();
        let js: Vec<usize> = (0..w.len()).collect();
        let of = |j: usize| w[j].clone();
        let picked = grid_pick(&js, &of, 8);
        assert!(picked.len() <= 8 && picked.len() >= 4, "{picked:?}");
        // Every kept share appears with every kept k: a full grid.
        let a: std::collections::BTreeSet<&str> =
            picked.iter().map(|&j| w[j][1].as_str()).collect();
        let k: std::collections::BTreeSet<&str> =
            picked.iter().map(|&j| w[j][2].as_str()).collect();
        assert_eq!(a.len() * k.len(), picked.len(), "{picked:?}");
        // The ends of each dimension are kept.
        for end in ["a=0", "a=0.9", "k=1", "k=64"] {
            assert!(a.contains(end) || k.contains(end), "{end} dropped");
        }
    }

    #[test]
    fn sweep_lines_fit_without_choice_are_all_kept() {
        let w = words();
        let js: Vec<usize> = (0..6).collect();
        assert_eq!(grid_pick(&js, &|j| w[j].clone(), 8), js);
        assert!(grid_pick(&js, &|j| w[j].clone(), 0).is_empty());
    }
}
