//! The output folder: unusable folders are a clear error (exit 2); files evalsim did not write
//! are never touched.
use assert_cmd::Command;
use predicates::prelude::*;

fn evalsim() -> Command {
    Command::cargo_bin("evalsim").expect("binary")
}

#[test]
fn user_files_in_the_output_folder_are_untouched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("mkdir");
    // Names that look like evalsim's, and one that is evalsim's temporary-name pattern.
    let mine = [
        ("notes.txt", "my notes"),
        ("curves.csv.bak", "old"),
        (".checks.csv.tmp-1", "not ours"),
        ("report.txt", "keep"),
    ];
    for (f, text) in mine {
        std::fs::write(out.join(f), text).expect("write");
    }
    std::fs::create_dir(out.join("sub")).expect("subdir");
    std::fs::write(out.join("sub/data.csv"), "a,b\n").expect("write");
    evalsim()
        .args(["run", "note", "--no-figures", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    for (f, text) in mine {
        assert_eq!(
            std::fs::read_to_string(out.join(f)).expect("kept"),
            text,
            "{f}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(out.join("sub/data.csv")).expect("kept"),
        "a,b\n"
    );
    assert!(out.join("checks.csv").is_file());
}

#[test]
fn output_folder_under_a_regular_file_is_bad_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").expect("write");
    for out in [file.clone(), file.join("sub")] {
        evalsim()
            .args(["run", "note", "--no-figures", "--quiet", "--out"])
            .arg(&out)
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("cannot write")
                    .and(predicate::str::contains("plain-file"))
                    .and(predicate::str::contains("--out"))
                    .and(predicate::str::contains("panicked").not()),
            );
    }
    assert_eq!(std::fs::read_to_string(&file).expect("kept"), "x");
}

#[cfg(unix)]
#[test]
fn read_only_output_folder_is_bad_input_unless_root() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("ro");
    std::fs::create_dir(&out).expect("mkdir");
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    // Root ignores permissions: then there is nothing to test here.
    let probe = out.join(".probe");
    if std::fs::write(&probe, "x").is_ok() {
        let _ = std::fs::remove_file(&probe);
        eprintln!("running as root: read-only folders are writable, skipped");
        return;
    }
    evalsim()
        .args(["run", "note", "--no-figures", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot write").and(predicate::str::contains("ro")));
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o755)).expect("chmod back");
    assert_eq!(std::fs::read_dir(&out).expect("dir").count(), 0);
}
