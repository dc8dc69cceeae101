//! The outputs of a `curves` experiment: pass@k, pass^k and maj@k (best@k, n@k) against k.
mod figures;

use super::KindReport;
use crate::experiments::votes::{Metric, VoteCurves};
use crate::experiments::{num, RunOutput};
use crate::model::VoteRule;
use crate::report::csv::estimate_row;
use crate::report::csv::header;
use crate::report::format::{pct, Unit};
use crate::report::plot::Figure;
use crate::report::summary::Rows;

pub(in crate::report::kinds) use figures::series_points;

/// The report of a `curves` result.
pub(super) struct Report<'a>(pub(super) &'a VoteCurves);

impl KindReport for Report<'_> {
    fn tables(&self, run: &RunOutput) -> Vec<(String, String)> {
        vec![(format!("{}.csv", self.0.experiment), vote_csv(run, self.0))]
    }

    fn figures(&self, run: &RunOutput) -> Vec<(String, Figure)> {
        vec![(
            self.0.experiment.clone(),
            figures::curves_figure(run, self.0),
        )]
    }

    fn caption(&self, _tail: &str) -> &'static str {
        CAPTION
    }

    fn markdown(&self) -> String {
        curves_md(self.0)
    }

    fn headline(&self, rows: &mut Rows) {
        curves(self.0, rows);
    }
}

const CAPTION: &str = "pass@k, maj@k and pass^k against k (lines exact, dots simulated with 95% CIs, bands ±1 seed SD of one run on this benchmark: the spread a rerun with another seed shows); the dashed line is maj@k's large-k limit (the share of problems above the winning threshold; at finite k maj@k can sit above it).";

pub(in crate::report::kinds) fn vote_csv(run: &RunOutput, r: &VoteCurves) -> String {
    // The extraction columns only when a series has them, and the true-value columns only when
    // some model is graded noisily, so canonical tables stay as they were.
    let extraction = r.series.iter().any(|s| s.unparsed != 0.0 || s.split != 0.0);
    let graded = r.points.iter().any(|p| p.truth.is_some());
    let mut tail: Vec<&str> = vec!["votes", "seed_sd"];
    if extraction {
        tail.extend(["unparsed", "split"]);
    }
    if graded {
        tail.extend(["true_exact", "true_sim", "true_z"]);
    }
    let fpr_sweep = r.axis == Some(crate::scenario::SweepAxis::GraderFpr);
    if fpr_sweep {
        tail.extend(["grader_fpr", "grader_fnr"]);
    }
    let mut csv = header(&["model", "attractor", "vote_rule", "k", "metric"], &tail);
    for p in &r.points {
        let s = &r.series[p.series];
        // Several attractor shares are written `a1;a2;...` in the one column.
        let attractor = if s.attractors.is_empty() {
            num(s.attractor)
        } else {
            let list: Vec<String> = s.attractors.iter().map(|&a| num(a)).collect();
            list.join(";")
        };
        let mut extra = vec![r.votes.to_string(), num(p.seed_sd)];
        if extraction {
            extra.extend([num(s.unparsed), num(s.split)]);
        }
        if graded {
            match p.truth {
                Some(t) => extra.extend([num(t.exact), num(t.sim), num(t.z)]),
                None => extra.extend([String::new(), String::new(), String::new()]),
            }
        }
        if fpr_sweep {
            let g = s.grader.unwrap_or_default();
            extra.extend([num(g.fpr), num(g.fnr)]);
        }
        csv.row(estimate_row(
            run,
            &r.experiment,
            [
                s.model.clone(),
                attractor,
                s.vote_rule.as_str().to_string(),
                p.k.to_string(),
                p.metric.name(),
            ],
            &p.estimate,
            extra,
        ));
    }
    csv.finish()
}

pub(in crate::report::kinds) fn cell(v: &VoteCurves, si: usize, k: u32, m: Metric) -> String {
    v.points
        .iter()
        .find(|p| p.series == si && p.k == k && p.metric == m)
        .map_or("".into(), |p| {
            let graded = format!(
                "{} ({} ± {})",
                pct(p.estimate.exact, 2),
                pct(p.estimate.sim, 2),
                crate::report::keep_digits(100.0 * p.estimate.se, 2)
            );
            match p.truth {
                Some(t) => format!("{graded}; true {}", pct(t.exact, 2)),
                None => graded,
            }
        })
}

/// "k = 2-16, 64" from the k values where best@k leads maj@k (runs of consecutive entries of
/// the experiment's k list joined).
fn k_ranges(all: &[u32], leads: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    let mut prev_in = false;
    for &k in all {
        let on = leads.contains(&k);
        match (on, prev_in, runs.last_mut()) {
            (true, true, Some(last)) => last.1 = k,
            (true, _, _) => runs.push((k, k)),
            _ => {}
        }
        prev_in = on;
    }
    runs.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn curves_md(v: &VoteCurves) -> String {
    let mut md = String::new();
    for (si, s) in v.series.iter().enumerate() {
        md += &if s.attractors.is_empty() && s.unparsed == 0.0 && s.split == 0.0 {
            format!(
                "Model `{}`: pass@1 {}, attractor share a = {}, vote rule `{}`; maj@k tends to {} (the share of problems with p > a/(1+a) = {:.3}).\n\n",
                s.model, pct(s.pass_at_1, 2), s.attractor, s.vote_rule.as_str(), pct(s.ceiling, 2), s.threshold
            )
        } else {
            format!(
                "Model `{}`: graded pass@1 {}, answers {}, vote rule `{}`; maj@k tends to {} (the share of problems with p max(s, 1 - s) > a_j (1 - p) for every attractor j, i.e. p > {:.3}).\n\n",
                s.model, pct(s.pass_at_1, 2), s.modes_label(), s.vote_rule.as_str(), pct(s.ceiling, 2), s.threshold
            )
        };
        if let Some(g) = &s.grader {
            md += &format!("Graded by a noisy grader (fpr {}, fnr {}): every cell is the graded value, what the harness prints, with the true value after it.\n\n", g.fpr, g.fnr);
        }
        let best = s.verifier.is_some();
        if let (Some(verifier), Some(c), Some(leads)) = (&s.verifier, s.best_ceiling, &s.best_leads)
        {
            let lead = if leads.is_empty() {
                "best@k is never above maj@k at these k".to_string()
            } else if leads.len() == v.k.len() {
                "best@k is above maj@k at every k listed".to_string()
            } else {
                format!(
                    "best@k is above maj@k at k = {} and at or below it elsewhere (the crossovers)",
                    k_ranges(&v.k, leads)
                )
            };
            md += &format!(
                "Verifier {}: best@k tends to {}; {lead}.\n\n",
                verifier.describe(),
                pct(c, 2)
            );
        }
        if best {
            md += "| k | pass@k | pass^k | maj@k | best@k |\n|---:|---:|---:|---:|---:|\n";
        } else {
            md += "| k | pass@k | pass^k | maj@k |\n|---:|---:|---:|---:|\n";
        }
        for &k in &v.k {
            md += &format!(
                "| {k} | {} | {} | {} |",
                cell(v, si, k, Metric::PassAtK),
                cell(v, si, k, Metric::PassHatK),
                cell(v, si, k, Metric::MajAtK)
            );
            if best {
                md += &format!(" {} |", cell(v, si, k, Metric::BestAtK));
            }
            md += "\n";
        }
        md += "\n";
    }
    md
}

fn curves(v: &VoteCurves, rows: &mut Rows) {
    let kmax = *v.k.last().unwrap_or(&1);
    for (si, s) in v.series.iter().enumerate() {
        let tag = if v.series.iter().filter(|t| t.model == s.model).count() > 1 {
            format!("{} {}", s.model, s.modes_label())
        } else {
            s.model.clone()
        };
        // pass@1 from the curve's point at k = 1 (graded and true for a graded model), else exact.
        let first = v
            .points
            .iter()
            .find(|p| p.series == si && p.k == 1 && p.metric == Metric::PassAtK);
        match first {
            Some(p) => match &p.truth {
                Some(t) => {
                    rows.push(
                        format!("{tag} pass@1 (graded)"),
                        Unit::Percent,
                        p.estimate.exact,
                        Some(p.estimate.sim),
                    );
                    rows.push(
                        format!("{tag} pass@1 (true)"),
                        Unit::Percent,
                        t.exact,
                        Some(t.sim),
                    );
                }
                None => rows.push(
                    format!("{tag} pass@1"),
                    Unit::Percent,
                    p.estimate.exact,
                    Some(p.estimate.sim),
                ),
            },
            None => rows.push(format!("{tag} pass@1"), Unit::Percent, s.pass_at_1, None),
        }
        // n@k between maj@k and best@k; 1@k under random ties is maj@k itself.
        let submitted = v.points.iter().filter_map(|p| match p.metric {
            Metric::SubmitAtK(n) if p.series == si && p.k == kmax => {
                (n > 1 || s.vote_rule != VoteRule::Random).then_some(p.metric)
            }
            Metric::VerifiedAtK(n) if p.series == si && p.k == kmax => (n > 1).then_some(p.metric),
            _ => None,
        });
        let metrics: Vec<Metric> = [Metric::PassAtK, Metric::MajAtK]
            .into_iter()
            .chain(submitted)
            .chain([Metric::BestAtK])
            .collect();
        for metric in metrics {
            for p in v
                .points
                .iter()
                .filter(|p| p.series == si && p.k == kmax && p.metric == metric)
            {
                let graded = if p.truth.is_some() { " (graded)" } else { "" };
                rows.push(
                    format!(
                        "{tag} {}{graded}",
                        metric.name().replace('k', &kmax.to_string())
                    ),
                    Unit::Percent,
                    p.estimate.exact,
                    Some(p.estimate.sim),
                );
            }
        }
        rows.push(
            format!("{tag} large-k limit of maj@k"),
            Unit::Percent,
            s.ceiling,
            None,
        );
    }
}
