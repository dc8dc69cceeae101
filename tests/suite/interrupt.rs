//! Interruption: SIGINT or SIGTERM during a long run stops it quickly with exit code 130 or
//! 143, and leaves every file in the output folder complete (or absent), never truncated.
#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// About 3 * 10^9 simulated votes: minutes of work, so the signal always lands mid-run.
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

fn evalsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_evalsim"))
}

/// Every file in `dir` parses: CSV (header and rows of the same width), JSON, PNG, SVG, Markdown;
/// no temporary file is left.
fn assert_all_complete(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.expect("entry").path();
        let name = p.file_name().expect("name").to_string_lossy().into_owned();
        assert!(!name.contains(".tmp-"), "temporary file left: {name}");
        let bytes = std::fs::read(&p).expect("read");
        match p.extension().and_then(|x| x.to_str()) {
            Some("csv") => {
                let text = String::from_utf8(bytes).expect("utf8");
                assert!(text.ends_with('\n'), "{name} truncated");
                let mut lines = text.lines();
                let width = lines.next().expect("header").split(',').count();
                assert!(width > 3, "{name}: header");
                for l in lines {
                    assert_eq!(l.split(',').count(), width, "{name}: ragged row {l}");
                }
            }
            Some("json") => {
                serde_json::from_slice::<serde_json::Value>(&bytes).expect("JSON parses");
            }
            Some("png") => {
                image::load_from_memory(&bytes).expect("PNG decodes");
            }
            Some("svg") => {
                assert!(String::from_utf8(bytes)
                    .expect("utf8")
                    .trim_end()
                    .ends_with("</svg>"));
            }
            Some("md") => assert!(bytes.ends_with(b"\n"), "{name} truncated"),
            _ => {}
        }
    }
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| {
            let p = e.expect("entry").path();
            (
                p.file_name().expect("name").to_string_lossy().into_owned(),
                std::fs::read(&p).expect("read"),
            )
        })
        .collect();
    v.sort();
    v
}

/// Starts the long run into `out`, sends `signal` after about a second, and returns the exit
/// code and how long the run took to stop after the signal.
fn interrupt_long_run(out: &Path, signal: &str) -> (Option<i32>, Duration, String) {
    let dir = out.parent().expect("parent");
    let file = dir.join("long.toml");
    std::fs::write(&file, LONG).expect("write");
    let mut child = evalsim()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(1200));
    assert!(
        child.try_wait().expect("poll").is_none(),
        "the long run ended before the signal"
    );
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .expect("kill");
    assert!(status.success());
    let sent = Instant::now();
    let deadline = sent + Duration::from_secs(60);
    let code = loop {
        if let Some(s) = child.try_wait().expect("poll") {
            break s.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the run did not stop within 60 s of {signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let waited = sent.elapsed();
    let out = child.wait_with_output().expect("output");
    (
        code,
        waited,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sigint_stops_with_130_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let (code, waited, stderr) = interrupt_long_run(&out, "INT");
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(waited < Duration::from_secs(20), "took {waited:?} to stop");
    assert!(!out.exists() || std::fs::read_dir(&out).expect("dir").count() == 0);
}

#[test]
fn sigterm_stops_with_143_and_keeps_earlier_files_complete() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    // A finished run in the same folder, and a file of the user's.
    let ok = evalsim()
        .args(["run", "note", "--quiet", "--out"])
        .arg(&out)
        .status()
        .expect("note");
    assert!(ok.success());
    std::fs::write(out.join("mine.txt"), "user data").expect("user file");
    let before = listing(&out);
    let (code, _, stderr) = interrupt_long_run(&out, "TERM");
    assert_eq!(code, Some(143), "{stderr}");
    assert!(stderr.contains("interrupted by SIGTERM"), "{stderr}");
    assert_eq!(
        listing(&out),
        before,
        "an interrupted run changed the output folder"
    );
    assert_all_complete(&out);
}
