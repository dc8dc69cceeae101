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
