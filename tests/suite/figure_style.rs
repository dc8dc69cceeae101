//! One figure style over every figure evalsim draws: every shipped scenario (with small
//! simulation sizes), a sweep, a plan, `analyze` and `fit`. Titles and panel captions each at
//! one size, a short list of text sizes in all, a legend entry only for what is drawn, ticks
//! only at computed k, and no blank quarter in a grid of panels.
use std::path::{Path, PathBuf};

use evalsim::experiments::run_all;
use evalsim::report::kinds;
use evalsim::report::plot::{CAPTION_SIZE, CUT_LABEL, TITLE_SIZE};
use evalsim::scenario::Scenario;

use super::common::{evalsim, read, succeeds};

const SHIPPED: [&str; 9] = [
    "note",
    "concentrated",
    "contamination",
    "modes",
    "verifier",
    "extraction",
    "submissions",
    "judge",
    "confidence",
];

/// A shipped scenario with every simulation size cut to 100 (the figures are the same kind).
fn shrunk(name: &str) -> String {
    let text = read(&Path::new("scenarios").join(format!("{name}.toml")));
    text.lines()
        .map(|l| {
            let key = l.split('=').next().unwrap_or("").trim();
            if matches!(key, "votes" | "reruns" | "traces") {
                format!("{key} = 100")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One `<text>` element of an SVG: its font size, whether bold, and its content.
struct Text {
    size: f64,
    bold: bool,
    content: String,
}

fn texts(svg: &str) -> Vec<Text> {
    svg.split("<text")
        .skip(1)
        .map(|t| {
            let attr = |name: &str| {
                t.split(&format!(" {name}=\""))
                    .nth(1)
                    .and_then(|r| r.split('"').next())
                    .map(str::to_string)
            };
            let size = attr("font-size")
                .and_then(|s| s.parse().ok())
                .expect("every text has a font size");
            let content = t
                .split_once('>')
                .map_or("", |(_, r)| r.split("</text>").next().unwrap_or(""))
                .to_string();
            Text {
                size,
                bold: attr("font-weight").as_deref() == Some("bold"),
                content,
            }
        })
        .collect()
}

fn svgs_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("output folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .flat_map(|p| if p.is_dir() { svgs_in(&p) } else { vec![p] })
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .collect();
    out.sort();
    out
}

/// Every SVG figure of the commands this style covers, written under `dir`.
fn every_figure(dir: &Path) -> Vec<(PathBuf, String)> {
    for name in SHIPPED {
        let f = dir.join(format!("{name}.toml"));
        std::fs::write(&f, shrunk(name)).expect("write");
        succeeds(
            evalsim()
                .args(["run", "--quiet"])
                .arg(&f)
                .arg("--out")
                .arg(dir.join(format!("run-{name}"))),
        );
    }
    succeeds(
        evalsim()
            .args(["plan", "--problems", "30,100", "--samples", "1,4"])
            .args(["--simulate-reruns", "200", "--out"])
            .arg(dir.join("plan")),
    );
    succeeds(
        evalsim()
            .args(["analyze", "--quiet", "--bootstrap", "0", "--k", "1,2,4,8"])
            .arg("tests/fixtures/fit/humaneval_164.jsonl")
            .arg("--out")
            .arg(dir.join("analyze")),
    );
    succeeds(
        evalsim()
            .args(["analyze", "--quiet", "--bootstrap", "0", "--compare"])
            .args(["--metric", "acc", "--reruns", "0"])
            .arg("tests/fixtures/harness/lm_eval/group-a")
            .arg("tests/fixtures/harness/lm_eval/group-b")
            .arg("--out")
            .arg(dir.join("analyze-compare")),
    );
    succeeds(
        evalsim()
            .args(["fit", "tests/fixtures/fit/humaneval_164.jsonl", "--out"])
            .arg(dir.join("fit")),
    );
    let note = dir.join("note.toml");
    succeeds(
        evalsim()
            .arg("sweep")
            .arg(&note)
            .args(["--set", "benchmark.sigma=0.6,2.2", "--quiet", "--out"])
            .arg(dir.join("sweep")),
    );
    svgs_in(dir)
        .into_iter()
        .map(|p| {
            let svg = read(&p);
            (p, svg)
        })
        .collect()
}

#[test]
fn every_figure_has_one_title_size_one_caption_size_and_only_drawn_legend_entries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let figures = every_figure(dir.path());
    assert!(figures.len() >= 30, "only {} figures", figures.len());
    // The SVG backend writes sizes in its own unit: the title's size fixes the scale.
    let first = texts(&figures[0].1);
    let title = first.iter().find(|t| t.bold).expect("a bold title").size;
    let scale = title / TITLE_SIZE;
    let caption = CAPTION_SIZE * scale;
    let mut sizes: Vec<f64> = Vec::new();
    for (path, svg) in &figures {
        let name = path.display();
        let ts = texts(svg);
        assert!(ts.iter().any(|t| t.bold), "{name}: no title");
        for t in &ts {
            if t.bold {
                assert!(
                    (t.size - title).abs() < 1e-9,
                    "{name}: title {:?} at {}",
                    t.content,
                    t.size
                );
            } else {
                assert!(
                    t.size < caption + 1e-9,
                    "{name}: {:?} at {} above the captions' {caption}",
                    t.content,
                    t.size
                );
            }
            if !sizes.iter().any(|s| (s - t.size).abs() < 1e-9) {
                sizes.push(t.size);
            }
        }
        assert!(
            ts.iter()
                .any(|t| !t.bold && (t.size - caption).abs() < 1e-9),
            "{name}: no panel caption at the caption size"
        );
        // The cut-at-the-frame entry only where a triangle is drawn besides its swatch.
        if ts.iter().any(|t| t.content == CUT_LABEL) {
            assert!(
                svg.matches("<polygon").count() >= 2,
                "{name}: says cut, draws none"
            );
        }
    }
    // Title, caption, axis labels, tick labels, legends and notes: five sizes in all.
    assert!(sizes.len() <= 5, "text sizes {sizes:?}");
    // analyze --k 1,2,4,8: ticks only at computed k.
    for (path, svg) in figures
        .iter()
        .filter(|(p, _)| p.starts_with(dir.path().join("analyze")))
    {
        for k in ["3", "5", "6", "7"] {
            assert!(
                !texts(svg).iter().any(|t| t.content == k),
                "{}: a tick at k = {k}, which was not computed",
                path.display()
            );
        }
    }
}

#[test]
fn verifier_curves_left_a_quarter_of_the_figure_blank() {
    for name in SHIPPED {
        let s = Scenario::from_toml(&shrunk(name), name, &format!("{name}.toml")).expect("loads");
        let run = run_all(&s, &|_| {});
        for r in &run.results {
            for (stem, fig) in kinds::of(r).figures(&run) {
                let cells = fig.panels.len().div_ceil(fig.columns) * fig.columns;
                let empty = cells - fig.panels.len();
                assert!(
                    4 * empty < cells,
                    "{name}/{stem}: {empty} of {cells} cells empty"
                );
            }
        }
    }
}

#[test]
fn modes_story_weak_overtaking_strong_in_maj_at_k_was_split_across_two_panels() {
    let s = Scenario::from_toml(&shrunk("modes"), "modes", "modes.toml").expect("loads");
    let run = run_all(&s, &|_| {});
    let curves = run
        .results
        .iter()
        .flat_map(|r| kinds::of(r).figures(&run))
        .find(|(stem, _)| stem == "curves")
        .expect("a curves figure");
    let one_axis = curves
        .1
        .panels
        .iter()
        .find(|p| p.title.contains("maj@k of the models above on one axis"))
        .expect("a panel with every model's maj@k");
    let labels: Vec<&str> = one_axis
        .lines
        .iter()
        .filter_map(|l| l.label.as_deref())
        .collect();
    for model in ["strong", "weak"] {
        assert!(labels.iter().any(|l| l.starts_with(model)), "{labels:?}");
    }
}

#[test]
fn plan_figures_joined_discrete_designs_with_lines_that_read_as_results() {
    let s = Scenario::from_toml(&shrunk("concentrated"), "concentrated", "concentrated.toml")
        .expect("loads");
    let run = run_all(&s, &|_| {});
    let plans: Vec<_> = run
        .results
        .iter()
        .filter_map(|r| match r {
            evalsim::experiments::ExperimentResult::Plan(p) => Some(p),
            _ => None,
        })
        .collect();
    assert!(!plans.is_empty(), "concentrated has a plan experiment");
    for p in plans {
        let figures = [
            evalsim::report::planning::loss_figure(p, Some("concentrated")),
            evalsim::report::planning::detectable_figure(p, Some("concentrated")),
        ];
        for fig in &figures {
            let mut exact = 0;
            for panel in &fig.panels {
                // Only reference levels (one y across the frame) may be lines; each design's
                // exact value is a point of its own.
                for line in &panel.lines {
                    assert!(
                        line.points.windows(2).all(|w| w[0].1 == w[1].1),
                        "{}: {:?} joins designs with a line",
                        fig.title,
                        line.label
                    );
                }
                exact += panel.points.iter().map(|q| q.points.len()).sum::<usize>();
            }
            assert!(exact > 0, "{}: no exact points drawn", fig.title);
        }
    }
}

/// The shipped contamination scenario's `public-board`: P(memoriser < independent) is about
/// 0.02% at n = 4, so sim -/+ 1.96 SE reached below 0 and the dot's interval was drawn as cut
/// at the frame (a triangle and a legend entry for a value inside the axis).
#[test]
fn a_head_to_head_probability_near_zero_was_drawn_cut_at_the_frame() {
    let s = Scenario::load("contamination").expect("built in");
    let run = run_all(&s, &|_| {});
    let (_, fig) = run
        .results
        .iter()
        .flat_map(|r| kinds::of(r).figures(&run))
        .find(|(stem, _)| stem == "public-board")
        .expect("the public-board figure");
    let bars = fig.panels[0].markers.iter().flat_map(|m| &m.points);
    let mut near_zero = 0;
    for &(_, y, lo, hi) in bars {
        assert!((0.0..=100.0).contains(&lo) && lo <= y && y <= hi && hi <= 100.0);
        near_zero += usize::from(lo == 0.0);
    }
    assert!(near_zero >= 2, "the scenario no longer has rates near 0");
}
