//! Hostile shard folders for `merge`, and what `sweep` and `merge` leave behind when they fail or
//! are interrupted: a tampered shard is refused (exit 2) with a message naming the file, line and
//! column, key and what would be valid; never a table of wrong numbers with exit 0.
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::common::{evalsim, refused_saying, succeeds, sweep, tiny};

/// Four cells in two shards of [`super::common::TINY`], written to `dir/shards`.
fn shards(dir: &Path) -> PathBuf {
    let f = tiny(dir);
    let out = dir.join("shards");
    for shard in ["0/2", "1/2"] {
        let args = [
            "--set",
            "model.a.shift=0,0.1,0.2,0.3",
            "-q",
            "--threads",
            "1",
            "--shard",
            shard,
        ];
        succeeds(&mut sweep(&f, &args, &out));
    }
    out
}

/// Edits shard `file` of `dir` as JSON and writes it back.
fn tamper(dir: &Path, file: &str, edit: impl FnOnce(&mut Json)) {
    let path = dir.join(file);
    let mut doc: Json = serde_json::from_str(&std::fs::read_to_string(&path).expect("read"))
        .expect("a shard is JSON");
    edit(&mut doc);
    std::fs::write(&path, serde_json::to_string_pretty(&doc).expect("JSON")).expect("write");
}

/// `merge DIR --out DIR/merged`, which must refuse with every one of `needles`; nothing is
/// written.
fn merge_refuses(dir: &Path, needles: &[&str]) -> String {
    let out = dir.join("merged");
    let err = refused_saying(
        evalsim().arg("merge").arg(dir).arg("--out").arg(&out),
        needles,
    );
    assert!(!out.exists(), "a refused merge created {}", out.display());
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// The first check of the second cell of shard 1 (cell 3).
fn check(doc: &mut Json) -> &mut Json {
    &mut doc["cells"][1]["checks"][0]
}

#[test]
fn merge_accepted_a_cell_value_not_in_the_grid() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = shards(dir.path());
    tamper(&s, "shard-1-of-2.json", |d| {
        d["cells"][0]["values"][0] = "0.7".into();
    });
    merge_refuses(
        &s,
        &[
            "shard-1-of-2.json:",
            "cells[0].values[0]",
            "`0.7` is not a value of `model.a.shift` in the grid (0, 0.1, 0.2, 0.3)",
            "cell 1 has model.a.shift=0.1",
        ],
    );
}

#[test]
fn merge_accepted_an_exact_value_that_is_not_a_number() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = shards(dir.path());
    tamper(&s, "shard-1-of-2.json", |d| {
        check(d)["values"][0] = "abc".into();
    });
    merge_refuses(
        &s,
        &[
            "shard-1-of-2.json:",
            "cells[1].checks[0].values[0]: exact `abc` is not a number; expected a number",
        ],
    );
}

#[test]
fn merge_accepted_a_nan_or_infinite_exact_value() {
    // With z made to agree, so that only the exact value itself is wrong.
    for (exact, z) in [("nan", "nan"), ("inf", "-inf"), ("-inf", "inf")] {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = shards(dir.path());
        tamper(&s, "shard-0-of-2.json", |d| {
            check(d)["values"][0] = exact.into();
            check(d)["values"][3] = z.into();
        });
        merge_refuses(
            &s,
            &[
                "shard-0-of-2.json:",
                &format!("cells[1].checks[0].values[0]: exact is {exact}"),
            ],
        );
    }
}

#[test]
fn merge_accepted_a_cell_without_checks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = shards(dir.path());
    tamper(&s, "shard-0-of-2.json", |d| {
        d["cells"][1]["checks"] = Json::Array(Vec::new());
    });
    merge_refuses(
        &s,
        &[
            "shard-0-of-2.json:",
            "cells[1].checks: cell 2 holds no checks of experiment `head-to-head`",
            "run its shard again",
        ],
    );
}

#[test]
fn merge_accepted_a_stale_z() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = shards(dir.path());
    // The simulated value moved far from the exact one, the z left as it was: the old merge
    // judged the stored z and passed it.
    tamper(&s, "shard-1-of-2.json", |d| {
        let exact: f64 = check(d)["values"][0]
            .as_str()
            .and_then(|t| t.parse().ok())
            .expect("exact");
        check(d)["values"][1] = format!("{}", exact + 0.2).into();
    });
    merge_refuses(
        &s,
        &[
            "shard-1-of-2.json:",
            "cells[1].checks[0].values[3]: z `",
            "does not match the stored exact, sim and se",
        ],
    );
}

#[test]
fn merge_with_colliding_cell_indexes_did_not_name_the_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = shards(dir.path());
    // Shard 0's second cell (2) relabelled as cell 1, which shard 1 holds.
    tamper(&s, "shard-0-of-2.json", |d| {
        d["cells"][1]["index"] = 1.into();
    });
    let err = merge_refuses(&s, &["cell index 1 appears twice", "cells[1].index"]);
    assert!(
        err.contains("shard-0-of-2.json:") && err.contains("shard-1-of-2.json:"),
        "{err}"
    );
    assert!(!err.contains("the shards hold"), "{err}");
}

#[test]
fn untampered_shards_still_merge() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = shards(dir.path());
    let out = dir.path().join("merged");
    evalsim()
        .arg("merge")
        .arg(&s)
        .arg("--out")
        .arg(&out)
        .args(["-q", "--no-figures"])
        .assert()
        .code(predicates::ord::lt(2));
    assert!(out.join("sweep.csv").is_file());
}

/// About 3 * 10^9 simulated votes per cell: minutes of work, so the signal lands mid-sweep.
#[cfg(unix)]
const LONG: &str = r#"title = "long"
[benchmark]
rates = [0.2, 0.4, 0.6, 0.8]
[[model]]
name = "m"
attractor = 0.5
[[experiment]]
kind = "curves"
k = [1, 2, 4, 8, 16, 32, 64, 128]
votes = 100_000_000
"#;

/// `sh -c "ulimit -f 1; exec evalsim ARGS..."`: every file evalsim writes beyond 512 bytes fails.
#[cfg(unix)]
fn with_file_size_limit(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let mut c = std::process::Command::new("sh");
    c.arg("-c")
        .arg("ulimit -f 1; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_evalsim"))
        .args(args);
    for k in [
        "SLURM_ARRAY_TASK_ID",
        "JOB_COMPLETION_INDEX",
        "AWS_BATCH_JOB_ARRAY_INDEX",
    ] {
        c.env_remove(k);
    }
    c.output().expect("sh runs")
}

#[cfg(unix)]
#[test]
fn sigterm_during_a_long_sweep_left_a_temp_file_behind() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().expect("tempdir");
    let file = super::common::write_file(dir.path(), "long.toml", LONG);
    let out = dir.path().join("out");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_evalsim"))
        .arg("sweep")
        .arg(&file)
        .args(["--set", "model.m.attractor=0.5,0.6", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(1200));
    assert!(child.try_wait().expect("poll").is_none(), "ended early");
    let sent = std::process::Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .expect("kill");
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("poll").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the sweep did not stop within 60 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let done = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("interrupted by SIGTERM"), "{stderr}");
    assert!(
        !out.exists(),
        "an interrupted sweep left {:?}",
        std::fs::read_dir(&out).map(|d| d.count())
    );
}

#[cfg(unix)]
#[test]
fn a_failed_sweep_or_run_left_an_empty_out_folder_it_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = tiny(dir.path());
    let new = dir.path().join("new");
    let out = new.join("deeper");
    for args in [
        vec![
            "sweep".as_ref(),
            f.as_os_str(),
            "--set".as_ref(),
            "model.a.shift=0,0.1".as_ref(),
        ],
        vec!["run".as_ref(), f.as_os_str(), "--no-figures".as_ref()],
    ] {
        let args = [
            &args[..],
            &["-q".as_ref(), "--out".as_ref(), out.as_os_str()],
        ]
        .concat();
        let done = with_file_size_limit(&args);
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("ulimit -f"), "{stderr}");
        assert!(!new.exists(), "{args:?} left {}", new.display());
    }
    // A folder that was there before stays.
    std::fs::create_dir(&new).expect("mkdir");
    let done = with_file_size_limit(&[
        "run".as_ref(),
        f.as_os_str(),
        "-q".as_ref(),
        "--out".as_ref(),
        new.as_os_str(),
    ]);
    assert_eq!(done.status.code(), Some(2));
    assert!(new.is_dir());
}
