//! What the figures draw (issue 15 and the plan figures of issue 16): the seed-SD band of the
//! curves figure, the total SE of the seed-variance figure, sweep panels chosen by `--plot`, and
//! plan figures for a single N or a single exact value.

use std::path::Path;

use evalsim::experiments::votes::{curves, Metric};
use evalsim::scenario::Scenario;

use super::common::{evalsim, read, refused_saying, succeeds, sweep, tiny, write_file, TINY};

/// pass@k and pass^k scores of one run of k samples per problem, by enumerating every outcome
/// of the N x k samples: the exact variance of the benchmark score across seeds.
fn brute_force_sd(rates: &[f64], k: u32, metric: Metric) -> f64 {
    let bits = rates.len() * k as usize;
    let (mut s1, mut s2) = (0.0, 0.0);
    for outcome in 0u64..(1 << bits) {
        let mut prob = 1.0;
        let mut score = 0.0;
        for (i, &p) in rates.iter().enumerate() {
            let mut right = 0;
            for j in 0..k as usize {
                if (outcome >> (i * k as usize + j)) & 1 == 1 {
                    right += 1;
                    prob *= p;
                } else {
                    prob *= 1.0 - p;
                }
            }
            let hit = match metric {
                Metric::PassAtK => right > 0,
                Metric::PassHatK => right == k,
                Metric::MajAtK
                | Metric::BestAtK
                | Metric::SubmitAtK(_)
                | Metric::VerifiedAtK(_)
                | Metric::FilteredMajAtK(_) => {
                    unreachable!("not enumerated")
                }
            };
            score += f64::from(u8::from(hit)) / rates.len() as f64;
        }
        s1 += prob * score;
        s2 += prob * score * score;
    }
    (s2 - s1 * s1).max(0.0).sqrt()
}

#[test]
fn curves_seed_sd_band_matches_brute_force_enumeration() {
    let toml = r#"seed = 2
[benchmark]
rates = [0.15, 0.5, 0.8]
[[model]]
name = "a"
attractor = 0.5
[[experiment]]
kind = "curves"
k = [1, 2, 3]
votes = 100
"#;
    let s = Scenario::from_toml(toml, "band", "band.toml").expect("scenario");
    let r = curves(&s, "curves", 1, &[0], &[1, 2, 3], &[], 100, None, &|_| {});
    assert_eq!(r.problems, 3);
    let rates = [0.15, 0.5, 0.8];
    let mut checked = 0;
    for p in &r.points {
        if p.metric == Metric::MajAtK {
            // One Bernoulli(maj@k_i) per problem: sqrt(sum m (1 - m)) / N from the exact value of
            // each problem (the mean of which is the point's exact value).
            assert!(p.seed_sd > 0.0 && p.seed_sd <= 0.5 / 3f64.sqrt() + 1e-15);
            continue;
        }
        let truth = brute_force_sd(&rates, p.k, p.metric);
        assert!(
            (p.seed_sd - truth).abs() <= 1e-12 * truth,
            "{} k = {}: band {} vs brute force {truth}",
            p.metric.name(),
            p.k,
            p.seed_sd
        );
        checked += 1;
    }
    assert_eq!(checked, 6);
}

#[test]
fn curves_figure_draws_the_seed_sd_band_and_names_it() {
    let dir = tempfile::tempdir().expect("tmp");
    succeeds(
        evalsim()
            .args(["run", "note", "--quiet", "--threads", "2", "--out"])
            .arg(dir.path()),
    );
    let svg = read(&dir.path().join("curves.svg"));
    assert!(svg.contains("±1 seed SD of one run (30 problems, k samples each)"));
    let csv = read(&dir.path().join("curves.csv"));
    assert!(csv
        .lines()
        .next()
        .expect("header")
        .ends_with(",votes,seed_sd"));
    let sd = read(&dir.path().join("seed-variance-sd.svg"));
    assert!(sd.contains("exact total SE (seed and question sampling)"));
    let table = read(&dir.path().join("seed-variance.csv"));
    assert!(table.contains(",total_se,"));
}

#[test]
fn sweep_plot_with_an_unknown_quantity_is_an_error_listing_the_valid_names() {
    let dir = tempfile::tempdir().expect("tmp");
    let f = tiny(dir.path());
    let out = dir.path().join("out");
    let plot = [
        "--set",
        "model.b.shift=0.1,0.5",
        "--plot",
        "P(B = A),nonsense",
    ];
    refused_saying(
        sweep(&f, &plot, &out).args(["--quiet", "--threads", "1"]),
        &["--plot \"nonsense\"", "valid quantities: P(B < A)"],
    );
    assert!(!out.exists(), "nothing written on a bad --plot");
}

#[test]
fn sweep_plot_was_validated_only_after_the_whole_grid_was_computed() {
    // 101 cells of ~3 million paired reruns each: minutes of work. A bad --plot must be
    // rejected before any of it (a cheap probe of the first cell names the quantities).
    let dir = tempfile::tempdir().expect("tmp");
    let f = dir.path().join("heavy.toml");
    std::fs::write(&f, TINY.replace("reruns = 2000", "reruns = 3000000")).expect("write");
    let out = dir.path().join("out");
    let started = std::time::Instant::now();
    let plot = ["--set", "model.b.shift=0:1:0.01", "--plot", "P(B < A),typo"];
    refused_saying(
        sweep(&f, &plot, &out)
            .args(["--threads", "1"])
            .timeout(std::time::Duration::from_secs(90)),
        &["--plot \"typo\"", "valid quantities: P(B < A), P(B = A)"],
    );
    assert!(
        started.elapsed().as_secs() < 90,
        "rejected before the grid was computed"
    );
    assert!(!out.exists(), "nothing written on a bad --plot");
}

#[test]
fn sweep_plot_chooses_the_panels_and_other_fields_are_series() {
    let dir = tempfile::tempdir().expect("tmp");
    let f = tiny(dir.path());
    let out = dir.path().join("out");
    let plot = [
        "--set",
        "model.b.shift=0.1,0.5",
        "--set",
        "benchmark.sigma=0.5,2",
        "--plot",
        "head-to-head:P(B = A)",
    ];
    succeeds(sweep(&f, &plot, &out).args(["--quiet", "--threads", "1"]));
    let svg = read(&out.join("sweep-head-to-head.svg"));
    assert!(
        svg.contains("P(B = A) [a=a b=b"),
        "the chosen quantity is drawn"
    );
    assert!(!svg.contains("P(B &lt; A) [") && !svg.contains("P(B < A) ["));
    assert!(svg.contains("benchmark sigma=0.5") && svg.contains("benchmark sigma=2"));
}

#[test]
fn plan_with_a_single_problem_count_puts_samples_on_the_x_axis() {
    let dir = tempfile::tempdir().expect("tmp");
    succeeds(
        evalsim()
            .args([
                "plan",
                "--problems",
                "30",
                "--samples",
                "4,16,64,256",
                "--simulate-reruns",
                "0",
                "--gap-logits",
                "0.2308128617177227",
                "--out",
            ])
            .arg(dir.path()),
    );
    let svg = read(&dir.path().join("plan-loss.svg"));
    assert!(svg.contains("samples per problem n (log2 scale)"));
    assert!(svg.contains("N = 30"));
    assert!(svg.contains("+0.231 logits"), "gap to 3 significant digits");
    assert!(!svg.contains("0.2308128617177227"));
    let heat = read(&dir.path().join("plan-heatmap.svg"));
    assert!(!heat.contains("0.2308128617177227"));
}

#[test]
fn plan_maj_without_simulation_draws_the_exact_value_as_a_mark() {
    let dir = tempfile::tempdir().expect("tmp");
    succeeds(
        evalsim()
            .args([
                "plan",
                "--metric",
                "maj",
                "--k",
                "5",
                "--attractor",
                "0.3",
                "--problems",
                "30",
                "--simulate-reruns",
                "0",
                "--out",
            ])
            .arg(dir.path()),
    );
    let svg = read(&dir.path().join("plan-loss.svg"));
    // A hollow diamond: a closed polyline of five points, as wide as it is tall (one in the
    // plot, one in the legend).
    let diamonds = svg
        .split("<polyline")
        .skip(1)
        .filter_map(|p| p.split("points=\"").nth(1)?.split('"').next())
        .filter(|pts| {
            let xy: Vec<(i64, i64)> = pts
                .split_whitespace()
                .filter_map(|q| {
                    let (x, y) = q.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect();
            xy.len() == 5
                && xy[0] == xy[4]
                && xy[1].0 - xy[3].0 == xy[2].1 - xy[0].1
                && xy[1].0 > xy[3].0
        })
        .count();
    assert!(diamonds >= 2, "one exact value is drawn as a mark");
    assert!(svg.contains("k = 5 (exact)"));
}

#[test]
fn progress_ticks_add_up_to_the_weighted_planned_draws() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let s = Scenario::from_toml(TINY, "tiny", "tiny.toml").expect("scenario");
    let planned: u64 = (0..s.experiments.len())
        .map(|i| evalsim::experiments::planned_draws(&s, i))
        .sum();
    let done = AtomicU64::new(0);
    evalsim::experiments::run_all(&s, &|n| {
        done.fetch_add(n, Ordering::Relaxed);
    });
    assert_eq!(done.load(Ordering::Relaxed), planned);
    // Weighted: a head-to-head rerun counts its measured cost, not 1.
    let draws = evalsim::experiments::planned_draws_unweighted(&s, 0);
    assert_eq!(
        planned,
        draws * evalsim::experiments::draw_cost_ns(&s.experiments[0].spec)
    );
}

#[test]
fn sweep_drew_one_panel_per_k_instead_of_one_per_quantity() {
    // The bug: a sweep drew one panel per check, so maj@k at four k values filled four panels of
    // the same quantity. Now one panel per quantity, its k values as labelled series.
    let dir = tempfile::tempdir().expect("tmp");
    let f = dir.path().join("votes.toml");
    std::fs::write(
        &f,
        r#"seed = 3
[benchmark]
problems = 6
mu = 0.0
sigma = 1.0
[[model]]
name = "m"
attractor = 0.5
[[experiment]]
kind = "curves"
models = ["m"]
k = [1, 3, 5, 9]
votes = 200
"#,
    )
    .expect("write");
    let out = dir.path().join("out");
    let plot = ["--set", "model.m.attractor=0,0.4,0.8", "--plot", "maj@k"];
    succeeds(sweep(&f, &plot, &out).args(["--quiet", "--threads", "1"]));
    let svg = read(&out.join("sweep-curves.svg"));
    // One panel title for maj@k, naming what its lines share; the k values are the legend.
    assert_eq!(svg.matches("maj@k [model=m").count(), 1, "one maj@k panel");
    for k in ["k=3", "k=5", "k=9"] {
        // Legend entries are text elements of their own (a line each in the SVG).
        assert!(
            svg.lines().any(|l| l.trim() == k),
            "{k} is a labelled series"
        );
    }
}

/// Width and height of a PNG, from its IHDR chunk.
fn png_size(p: &Path) -> (u32, u32) {
    let b = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

#[test]
fn dpi_flag_scales_the_png_and_leaves_the_svg_alone() {
    let dir = tempfile::tempdir().expect("tmp");
    for (name, dpi) in [("plain", None), ("print", Some("192"))] {
        let mut cmd = evalsim();
        cmd.args([
            "plan",
            "--seed",
            "7",
            "--simulate-reruns",
            "0",
            "--threads",
            "1",
        ])
        .arg("--out")
        .arg(dir.path().join(name));
        if let Some(d) = dpi {
            cmd.args(["--dpi", d]);
        }
        cmd.assert().success();
    }
    let (w, h) = png_size(&dir.path().join("plain/plan-loss.png"));
    assert_eq!(
        png_size(&dir.path().join("print/plan-loss.png")),
        (2 * w, 2 * h)
    );
    assert_eq!(
        read(&dir.path().join("plain/plan-loss.svg")),
        read(&dir.path().join("print/plan-loss.svg"))
    );
}

/// Regression: a plan inside a scenario drew its three figures without the scenario's name in
/// the title (every other experiment's figure names it); `evalsim plan` has no scenario and
/// names none. With the model's own shift_sd the loss panels no longer read "B = A + gap".
#[test]
fn plan_figures_in_a_scenario_name_the_scenario() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = write_file(
        dir.path(),
        "titled.toml",
        "seed = 5\n[benchmark]\nproblems = 30\nmu = 0.2\nsigma = 2.2\n[[model]]\nname = \"long\"\nshift = 0.0\nattractor = 0.5\nshift_sd = 1.0\n[[experiment]]\nkind = \"plan\"\ngap_points = [3.0]\nproblems = [30, 100]\nsamples = [4]\nreruns = 0\n",
    );
    let out = dir.path().join("out");
    succeeds(
        evalsim()
            .args(["run", "--threads", "2", "-q", "--out"])
            .arg(&out)
            .arg(&file),
    );
    for fig in ["plan-loss.svg", "plan-detectable.svg", "plan-heatmap.svg"] {
        let svg = read(&out.join(fig));
        assert!(svg.contains("scenario titled"), "{fig} names the scenario");
    }
    let loss = read(&out.join("plan-loss.svg"));
    assert!(loss.contains("B&apos;s shift = A&apos;s") || loss.contains("B's shift = A's"));
    assert!(!loss.contains("B = A +"));
}

/// Regression: with one sample per problem the analyze curves panel stacked four marks at k = 1
/// (pass@1, pass^1, maj@1 and first-answer maj@1, all equal) under four legend entries of which
/// one colour was visible. It now draws one mark that says the four coincide.
#[test]
fn analyze_with_one_sample_draws_one_mark_not_four() {
    let dir = tempfile::tempdir().expect("tmp");
    succeeds(
        evalsim()
            .args(["analyze", "tests/fixtures/harness/lm_eval/group-a"])
            .args(["--metric", "acc", "-q", "--out"])
            .arg(dir.path()),
    );
    let svg = read(&dir.path().join("curves.svg"));
    assert!(
        svg.contains("pass@1 (= pass^1 = maj@1 at n = 1)"),
        "one labelled mark"
    );
    assert!(!svg.contains("maj@k of the first k answers"));
    assert!(!svg.contains("pass^k<"));
}

#[test]
fn sweep_curves_drew_one_legend_three_times() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("out");
    let args = [
        "--set",
        "model.long.attractor=0,0.5",
        "--set",
        "benchmark.sigma=0.6,2.2",
        "--quiet",
    ];
    succeeds(&mut sweep(Path::new("note"), &args, &out));
    let svg = read(&out.join("sweep-curves.svg"));
    let entry = "model=long k=1, benchmark sigma=0.6";
    assert_eq!(
        svg.matches(entry).count(),
        1,
        "one legend for identical panels"
    );
}

/// The PNG scale was a process-wide setting that only the command line's entry point set, so
/// `--dpi` among the flags of the host-program entry points (the Python binding's `compare`
/// passes extra flags through) drew PNGs at 96 dpi. Now each render is given its raster.
#[test]
fn dpi_among_the_flags_of_the_host_entry_points_was_ignored() {
    let size = |flags: &[&str]| {
        let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        let out = evalsim::cli::embed::plan(&flags).expect("plan runs");
        let png = out
            .files
            .iter()
            .find(|a| a.file.ends_with("-loss.png"))
            .expect("a loss figure");
        let be = |i: usize| {
            u32::from_be_bytes([
                png.bytes[i],
                png.bytes[i + 1],
                png.bytes[i + 2],
                png.bytes[i + 3],
            ])
        };
        (be(16), be(20))
    };
    let base = ["--simulate-reruns=0", "--threads=1"];
    let (w, h) = size(&base);
    let (w2, h2) = size(&[base[0], base[1], "--dpi=192"]);
    assert_eq!(
        (w2, h2),
        (2 * w, 2 * h),
        "at 192 dpi a PNG has twice the pixels per side"
    );
}
