//! Reliability at the edges of the file system and the process (issue 20): output names, temp
//! files, all-or-nothing writes, the output folder's lock, resource limits, default folders,
//! thread counts and what error messages echo. Each test runs the binary from outside.
use std::path::Path;
use std::process::Command;

fn evalsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_evalsim"))
}

/// Every entry of `dir` with its contents (folders as `<dir>`).
fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| {
            let p = e.expect("entry").path();
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            let bytes = if p.is_dir() {
                b"<dir>".to_vec()
            } else {
                std::fs::read(&p).expect("read")
            };
            (name, bytes)
        })
        .collect();
    v.sort();
    v
}

fn no_temp_files(dir: &Path) {
    for (name, _) in listing(dir) {
        assert!(!name.contains(".tmp-"), "temporary file left: {name}");
    }
}

/// A small valid scenario with one curves experiment.
const SMALL: &str = "seed = 3\n[benchmark]\nproblems = 5\nmu = 0.0\nsigma = 1.0\n[[model]]\nname = \"m\"\nshift = 0.0\nattractor = 0.5\n[[experiment]]\nkind = \"curves\"\nk = [1, 2]\nvotes = 100\n";

fn run_note(out: &Path, seed: &str) -> std::process::Output {
    evalsim()
        .args([
            "run",
            "note",
            "--no-figures",
            "--quiet",
            "--seed",
            seed,
            "--out",
        ])
        .arg(out)
        .output()
        .expect("runs")
}

#[test]
fn output_names_collide_every_file_an_experiment_writes_is_known_at_load() {
    // The load-time reservation is only as good as the list of files: every file a run of every
    // kind writes must be one of the run's files or of its experiment's `output_files`.
    let dir = tempfile::tempdir().expect("tempdir");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/every_kind.toml");
    let out = dir.path().join("out");
    let status = evalsim()
        .arg("run")
        .arg(&fixture)
        .arg("--quiet")
        .arg("--out")
        .arg(&out)
        .status()
        .expect("runs");
    assert!(status.success());
    let scenario =
        evalsim::scenario::Scenario::load(&fixture.display().to_string()).expect("loads");
    let mut expected: Vec<String> = evalsim::scenario::RUN_FILES
        .iter()
        .map(|s| s.to_string())
        .collect();
    for e in &scenario.experiments {
        expected.extend(e.spec.kind().output_files(&e.name));
    }
    expected.sort();
    let written: Vec<String> = listing(&out).into_iter().map(|(n, _)| n).collect();
    assert_eq!(written, expected);
}

#[test]
fn output_names_collide_figures_of_a_longer_name_stay_in_their_own_section() {
    // `a` and `a-sd`: the report used to list `a-sd.png` under `a` as well.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("two.toml");
    let text = format!("{SMALL}name = \"a\"\n[[experiment]]\nkind = \"curves\"\nname = \"a-sd\"\nk = [1]\nvotes = 100\n");
    std::fs::write(&file, text).expect("write");
    let out = dir.path().join("out");
    let ok = evalsim()
        .arg("run")
        .arg(&file)
        .args(["--quiet", "--out"])
        .arg(&out)
        .status()
        .expect("runs");
    assert!(ok.success());
    let md = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert_eq!(md.matches("(a-sd.png)").count(), 1, "{md}");
    assert_eq!(md.matches("(a.png)").count(), 1, "{md}");
}

#[cfg(unix)]
#[test]
fn temp_files_follow_symlinks_no_longer_a_planted_link_changes_nothing_outside_out() {
    // The old temp name `.<file>.tmp-<pid>` was predictable: links planted at it for the next
    // pids pointed outside the folder. Temp names are now unpredictable and created exclusively,
    // so the victim file stays as it was whatever is planted.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("mkdir");
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious").expect("write");
    let next = std::process::id();
    for pid in next..next + 300 {
        for f in [
            "checks.csv",
            "results.json",
            "summary.json",
            "report.md",
            "curves.csv",
        ] {
            let _ = std::os::unix::fs::symlink(&victim, out.join(format!(".{f}.tmp-{pid}")));
        }
    }
    let o = run_note(&out, "5");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(&victim).expect("victim"),
        "precious"
    );
    assert!(std::fs::symlink_metadata(out.join("checks.csv"))
        .expect("checks")
        .is_file());
}

#[test]
fn exit_2_after_a_partial_write_no_longer_a_folder_in_the_way_keeps_the_old_set() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    assert!(run_note(&out, "1").status.success());
    // A folder where summary.json goes: the new run must replace nothing.
    std::fs::remove_file(out.join("summary.json")).expect("rm");
    std::fs::create_dir(out.join("summary.json")).expect("mkdir");
    let before = listing(&out);
    let o = run_note(&out, "2");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("summary.json") && stderr.contains("folder"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(listing(&out), before, "the old set was changed");
    no_temp_files(&out);
}

#[test]
fn concurrent_runs_into_one_folder_the_second_is_refused_while_the_lock_is_held() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("mkdir");
    // Hold the folder's lock as a running evalsim does.
    let held = evalsim::report::OutputDir::lock(&out).expect("lock");
    let o = run_note(&out, "1");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("in use by another evalsim run"), "{stderr}");
    assert_eq!(std::fs::read_dir(&out).expect("dir").count(), 0);
    drop(held);
    assert!(run_note(&out, "1").status.success());
}

#[cfg(unix)]
#[test]
fn temp_files_left_by_sigkill_are_removed_and_the_lock_does_not_outlive_the_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let file = dir.path().join("long.toml");
    std::fs::write(
        &file,
        "[benchmark]\nrates = [0.2, 0.4]\n[[model]]\nname = \"m\"\nattractor = 0.5\n[[experiment]]\nkind = \"curves\"\nk = [1, 2, 4, 8, 16, 32, 64, 128]\nvotes = 100_000_000\n",
    )
    .expect("write");
    let mut child = evalsim()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    // The killed run holds the lock; SIGKILL cannot be caught.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !out.is_dir() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    // What a run killed while staging leaves behind, and a user's look-alike.
    let stale = ".checks.csv.tmp-evalsim-4194303-0-17f0a3c2b1d";
    std::fs::write(out.join(stale), "half a fi").expect("stale");
    std::fs::write(out.join(".checks.csv.tmp-1"), "not ours").expect("user file");
    let o = run_note(&out, "1");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!out.join(stale).exists(), "stale temporary file kept");
    assert_eq!(
        std::fs::read_to_string(out.join(".checks.csv.tmp-1")).expect("kept"),
        "not ours"
    );
}

#[cfg(unix)]
#[test]
fn resource_limits_a_file_size_limit_is_reported_with_the_file_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    assert!(run_note(&out, "1").status.success());
    let before = listing(&out);
    // 8 blocks (4 KiB in sh's 512-byte blocks, 8 KiB in bash's): results.json is larger.
    let o = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 8 && exec \"$0\" run note --no-figures --quiet --seed 2 --out \"$1\"")
        .arg(env!("CARGO_BIN_EXE_evalsim"))
        .arg(&out)
        .output()
        .expect("sh");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("ulimit -f")
            && stderr.contains("File too large")
            && stderr.contains("out/"),
        "{stderr}"
    );
    assert_eq!(listing(&out), before, "the old set was changed");
    no_temp_files(&out);
}

#[test]
fn a_default_output_folder_from_a_dotted_stem_stays_under_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("...toml"), SMALL).expect("write");
    let o = evalsim()
        .current_dir(dir.path())
        .args(["run", "...toml", "--no-figures", "--quiet"])
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.path().join("out/scenario/checks.csv").is_file());
    assert!(!dir.path().join("checks.csv").exists(), "wrote into out/..");
}

#[test]
fn threads_above_the_documented_maximum_are_refused() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let max = 256.max(4 * cores);
    for t in [(max + 1).to_string(), "65535".into(), "0".into()] {
        let o = evalsim()
            .args(["check", "note", "--quiet", "--threads", &t])
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(&format!("from 1 to {max}")), "{stderr}");
    }
}

#[test]
fn control_bytes_are_escaped_in_error_messages() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("esc\u{1b}[2Jname.toml");
    let text = format!("{SMALL}name = \"a\\u001b[31mred\\u0000\"\n");
    std::fs::write(&file, text).expect("write");
    let o = evalsim().arg("check").arg(&file).output().expect("runs");
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("\\u{1b}[31mred\\u{0}"), "{stderr}");
    assert!(stderr.contains("esc\\u{1b}[2Jname.toml"), "{stderr}");
    assert!(
        !o.stderr.iter().any(|&b| b < 0x20 && b != b'\n'),
        "raw control bytes: {stderr:?}"
    );
}

#[test]
fn negative_zero_is_written_as_zero_in_tables() {
    assert_eq!(evalsim::experiments::num(-0.0), "0");
    assert_eq!(evalsim::experiments::num(0.0), "0");
    assert_eq!(evalsim::experiments::num(-1.5), "-1.5");
}
