//! `evalsim analyze` on hostile or damaged harness logs, each derived in the test from a fixture
//! the harness wrote (tests/fixtures/harness) by mutating a copy: a flipped CRC, a duplicated
//! entry or sample, a second header, an entry that inflates to gigabytes, scores removed, a byte
//! order mark. Each is refused with a message naming the file and the entry (or key), or read
//! with one clear warning; never a wrong number with exit 0.
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{evalsim, refused_saying, write_file};

const HARNESS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/harness/");

fn harness(rel: &str) -> PathBuf {
    Path::new(HARNESS).join(rel)
}

/// One entry of a zip archive as stored: compressed bytes and the directory's fields.
#[derive(Clone)]
struct Entry {
    name: String,
    method: u16,
    crc: u32,
    size: u32,
    data: Vec<u8>,
}

impl Entry {
    /// A stored (uncompressed) entry holding `bytes`, with their CRC-32.
    fn stored(name: &str, bytes: &[u8]) -> Entry {
        Entry {
            name: name.to_string(),
            method: 0,
            crc: crc32fast::hash(bytes),
            size: u32::try_from(bytes.len()).expect("small"),
            data: bytes.to_vec(),
        }
    }

    /// The entry's JSON (zstd, as inspect_ai writes, or stored).
    fn json(&self) -> Value {
        let bytes = match self.method {
            93 => {
                let mut rest: &[u8] = &self.data;
                let mut out = Vec::new();
                while !rest.is_empty() {
                    let mut dec = ruzstd::decoding::StreamingDecoder::new(&mut rest).expect("zstd");
                    dec.read_to_end(&mut out).expect("zstd");
                }
                out
            }
            0 => self.data.clone(),
            m => panic!("method {m}"),
        };
        serde_json::from_slice(&bytes).expect("json")
    }
}

/// The entries of a fixture archive, in order, as stored.
fn entries(path: &Path) -> Vec<Entry> {
    let mut archive = zip::ZipArchive::new(std::fs::File::open(path).expect("open")).expect("zip");
    (0..archive.len())
        .map(|i| {
            let mut f = archive.by_index_raw(i).expect("entry");
            let method = match f.compression() {
                zip::CompressionMethod::Stored => 0,
                zip::CompressionMethod::Deflated => 8,
                zip::CompressionMethod::ZSTD => 93,
                other => panic!("{other}"),
            };
            let mut data = Vec::new();
            f.read_to_end(&mut data).expect("read");
            Entry {
                name: f.name().expect("name").to_string(),
                method,
                crc: f.crc32(),
                size: u32::try_from(f.size()).expect("small"),
                data,
            }
        })
        .collect()
}

/// Writes `entries` as a zip archive (local headers, central directory, end record; no ZIP64),
/// duplicates and wrong CRCs included, as given.
fn write_zip(path: &Path, entries: &[Entry]) {
    let mut out: Vec<u8> = Vec::new();
    let mut central: Vec<u8> = Vec::new();
    for e in entries {
        let offset = u32::try_from(out.len()).expect("small");
        let csize = u32::try_from(e.data.len()).expect("small");
        let name_len = u16::try_from(e.name.len()).expect("short");
        let common = |v: &mut Vec<u8>| {
            v.extend_from_slice(&20u16.to_le_bytes()); // version needed
            v.extend_from_slice(&0u16.to_le_bytes()); // flags
            v.extend_from_slice(&e.method.to_le_bytes());
            v.extend_from_slice(&0u16.to_le_bytes()); // time
            v.extend_from_slice(&0x21u16.to_le_bytes()); // date: 1980-01-01
            v.extend_from_slice(&e.crc.to_le_bytes());
            v.extend_from_slice(&csize.to_le_bytes());
            v.extend_from_slice(&e.size.to_le_bytes());
            v.extend_from_slice(&name_len.to_le_bytes());
            v.extend_from_slice(&0u16.to_le_bytes()); // extra
        };
        out.extend_from_slice(b"PK\x03\x04");
        common(&mut out);
        out.extend_from_slice(e.name.as_bytes());
        out.extend_from_slice(&e.data);
        central.extend_from_slice(b"PK\x01\x02");
        central.extend_from_slice(&20u16.to_le_bytes()); // version made by
        common(&mut central);
        central.extend_from_slice(&[0; 6]); // comment length, disk, internal attributes
        central.extend_from_slice(&0u32.to_le_bytes()); // external attributes
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(e.name.as_bytes());
    }
    let count = u16::try_from(entries.len()).expect("few");
    let cd_offset = u32::try_from(out.len()).expect("small");
    let cd_size = u32::try_from(central.len()).expect("small");
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06");
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&cd_size.to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    std::fs::write(path, out).expect("write");
}

/// `evalsim analyze FILE ARGS --no-figures --bootstrap 0 --out DIR/out`.
fn analyze(file: &Path, args: &[&str], dir: &Path) -> assert_cmd::Command {
    let mut c = evalsim();
    c.arg("analyze")
        .arg(file)
        .args(args)
        .args(["--no-figures", "--bootstrap", "0", "--out"])
        .arg(dir.join("out"));
    c
}

/// Runs `cmd`, which must succeed; returns (stdout, stderr).
fn output(cmd: &mut assert_cmd::Command) -> (String, String) {
    let out = cmd.output().expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (stdout, stderr)
}

fn sample_names(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e.name.starts_with("samples/"))
        .map(|e| e.name.clone())
        .collect()
}

#[test]
fn an_eval_with_a_bad_crc_was_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut all = entries(&harness("inspect/epochs-eval.eval"));
    let target = sample_names(&all)[1].clone();
    let e = all.iter_mut().find(|e| e.name == target).expect("entry");
    e.crc ^= 0x0000_ff00;
    let bad = dir.path().join("bad-crc.eval");
    write_zip(&bad, &all);
    refused_saying(
        &mut analyze(&bad, &[], dir.path()),
        &["bad-crc.eval", &target, "CRC-32"],
    );
    assert!(!dir.path().join("out").exists(), "nothing written");
}

#[test]
fn duplicate_entry_names_collapsed_four_samples_into_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut all = entries(&harness("inspect/epochs-eval.eval"));
    let names = sample_names(&all);
    for e in all.iter_mut().filter(|e| names[..4].contains(&e.name)) {
        e.name = names[0].clone();
    }
    let dup = dir.path().join("dup.eval");
    write_zip(&dup, &all);
    refused_saying(
        &mut analyze(&dup, &[], dir.path()),
        &["dup.eval", &names[0], "more than once"],
    );
}

#[test]
fn a_second_header_json_passed_without_a_word() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut all = entries(&harness("inspect/epochs-eval.eval"));
    let header = all
        .iter()
        .find(|e| e.name == "header.json")
        .expect("header")
        .clone();
    let mut other = header.json();
    other["eval"]["model"] = Value::from("someone/else");
    all.insert(
        0,
        Entry::stored("header.json", other.to_string().as_bytes()),
    );
    let two = dir.path().join("two-headers.eval");
    write_zip(&two, &all);
    refused_saying(
        &mut analyze(&two, &[], dir.path()),
        &["two-headers.eval", "header.json", "more than once"],
    );
    // In a `.json` log: a second `eval` (or any top-level key) is refused by name.
    let text = std::fs::read_to_string(harness("inspect/epochs-json.json")).expect("read");
    let twice = text.replacen('{', "{\"eval\": {\"model\": \"someone/else\"}, ", 1);
    let log = write_file(dir.path(), "two-evals.json", &twice);
    refused_saying(
        &mut analyze(&log, &[], dir.path()),
        &["two-evals.json", "`eval`", "one `eval`"],
    );
}

#[test]
fn a_duplicate_sample_id_and_epoch_passed_without_a_word() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut all = entries(&harness("inspect/epochs-eval.eval"));
    let first = all
        .iter()
        .find(|e| e.name.starts_with("samples/"))
        .expect("sample")
        .clone();
    let sample = first.json();
    let (id, epoch) = (sample["id"].as_str().expect("id"), &sample["epoch"]);
    all.push(Entry {
        name: "samples/copy.json".to_string(),
        ..first.clone()
    });
    let copy = dir.path().join("copied-sample.eval");
    write_zip(&copy, &all);
    refused_saying(
        &mut analyze(&copy, &[], dir.path()),
        &[
            "copied-sample.eval",
            "samples/copy.json",
            &format!("`{id}` of epoch {epoch}"),
        ],
    );
    // The same sample twice in a `.json` log's `samples` array.
    let mut log: Value = serde_json::from_str(
        &std::fs::read_to_string(harness("inspect/epochs-json.json")).expect("read"),
    )
    .expect("json");
    let samples = log["samples"].as_array_mut().expect("samples");
    samples.push(samples[0].clone());
    let (id, epoch) = (samples[0]["id"].clone(), samples[0]["epoch"].clone());
    let path = write_file(dir.path(), "twice.json", &log.to_string());
    refused_saying(
        &mut analyze(&path, &[], dir.path()),
        &[
            "twice.json",
            &format!("`{}` of epoch {epoch}", id.as_str().expect("id")),
        ],
    );
}

/// A zstd frame of RLE blocks that inflates to `blocks` x 128 KiB of `byte` (4 bytes a block).
fn zstd_bomb(blocks: usize, byte: u8) -> Vec<u8> {
    let mut v = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x38]; // magic; no size; window 128 KiB
    for i in 0..blocks {
        let last = u32::from(i + 1 == blocks);
        let header = (128 * 1024) << 3 | 1 << 1 | last; // RLE block of 128 KiB
        v.extend_from_slice(&header.to_le_bytes()[..3]);
        v.push(byte);
    }
    v
}

/// A raw deflate stream that inflates to `mib` MiB of `byte`: one sync-flushed segment for 1 MiB,
/// repeated (each copy refers only to the bytes just before it), then the final block.
fn deflate_bomb(mib: usize, byte: u8) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress};
    let mut c = Compress::new(Compression::best(), false);
    let input = vec![byte; 1 << 20];
    let mut segment = Vec::with_capacity(1 << 16);
    c.compress_vec(&input, &mut segment, FlushCompress::Sync)
        .expect("deflate");
    let mut tail = Vec::with_capacity(64);
    c.compress_vec(&[], &mut tail, FlushCompress::Finish)
        .expect("deflate");
    let mut out = Vec::with_capacity(segment.len() * mib + tail.len());
    for _ in 0..mib {
        out.extend_from_slice(&segment);
    }
    out.extend_from_slice(&tail);
    out
}

/// The epochs fixture with its second sample replaced by `data` (method `method`), which
/// claims the sample's size and CRC.
fn with_bomb(dir: &Path, name: &str, method: u16, data: Vec<u8>) -> PathBuf {
    let mut all = entries(&harness("inspect/epochs-eval.eval"));
    let target = sample_names(&all)[1].clone();
    let e = all.iter_mut().find(|e| e.name == target).expect("entry");
    e.method = method;
    e.data = data;
    let path = dir.join(name);
    write_zip(&path, &all);
    path
}

#[test]
fn a_small_zstd_entry_inflating_to_gigabytes_was_read_into_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 8 GiB of spaces (valid JSON whitespace) in 256 KiB.
    let bomb = with_bomb(dir.path(), "zstd-bomb.eval", 93, zstd_bomb(65_536, b' '));
    assert!(std::fs::metadata(&bomb).expect("meta").len() < 1 << 20);
    let start = std::time::Instant::now();
    refused_saying(
        &mut analyze(&bomb, &[], dir.path()),
        &["zstd-bomb.eval", "samples/", "more than 256 MiB"],
    );
    assert!(start.elapsed().as_secs() < 30, "{:?}", start.elapsed());
}

#[test]
fn a_small_deflate_entry_inflating_to_gigabytes_was_read_into_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bomb = with_bomb(dir.path(), "deflate-bomb.eval", 8, deflate_bomb(1024, b' '));
    assert!(std::fs::metadata(&bomb).expect("meta").len() < 4 << 20);
    let start = std::time::Instant::now();
    refused_saying(
        &mut analyze(&bomb, &[], dir.path()),
        &["deflate-bomb.eval", "samples/", "more than 256 MiB"],
    );
    assert!(start.elapsed().as_secs() < 30, "{:?}", start.elapsed());
}

/// The errored fixture's samples with every score removed and, when `error` is given, that
/// error recorded on every sample; the header's results removed.
fn unscored(dir: &Path, name: &str, error: Option<&Value>) -> PathBuf {
    let mut all = entries(&harness("inspect/errored.eval"));
    for e in all.iter_mut() {
        if e.name.starts_with("samples/") || e.name == "header.json" {
            let mut v = e.json();
            let o = v.as_object_mut().expect("object");
            o.remove("scores");
            o.remove("results");
            if let (Some(err), true) = (error, e.name.starts_with("samples/")) {
                o.insert("error".to_string(), err.clone());
            }
            *e = Entry::stored(&e.name, v.to_string().as_bytes());
        }
    }
    all.retain(|e| e.name != "reductions.json");
    let path = dir.join(name);
    write_zip(&path, &all);
    path
}

#[test]
fn an_unscored_inspect_log_got_the_canonical_readers_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let all = entries(&harness("inspect/errored.eval"));
    let n = sample_names(&all).len();
    // Without scores, and with the fixture's own errors still on the errored samples.
    let log = unscored(dir.path(), "unscored.eval", None);
    let err = refused_saying(
        &mut analyze(&log, &[], dir.path()),
        &[
            "unscored.eval",
            &format!("an inspect_ai log with {n} sample(s), none scored"),
            "inspect score",
        ],
    );
    assert!(!err.contains("problem_id"), "{err}");
}

#[test]
fn an_inspect_log_whose_samples_all_errored_got_the_canonical_readers_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let all = entries(&harness("inspect/errored.eval"));
    let error = all
        .iter()
        .filter(|e| e.name.starts_with("samples/"))
        .map(Entry::json)
        .find_map(|s| s.get("error").filter(|e| !e.is_null()).cloned())
        .expect("the fixture has an errored sample");
    let n = sample_names(&all).len();
    let log = unscored(dir.path(), "all-errored.eval", Some(&error));
    let err = refused_saying(
        &mut analyze(&log, &[], dir.path()),
        &[
            "all-errored.eval",
            &format!("{n} sample(s), none scored: {n} ended in an error"),
            "inspect eval-retry",
        ],
    );
    assert!(!err.contains("problem_id"), "{err}");
}

#[test]
fn a_json_file_of_no_known_format_got_expected_problem_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    // One inspect sample taken out of its archive, as JSON lines and as a `.json` document.
    let all = entries(&harness("inspect/epochs-eval.eval"));
    let sample = all
        .iter()
        .find(|e| e.name.starts_with("samples/"))
        .expect("sample")
        .json();
    let line = write_file(dir.path(), "sample.jsonl", &format!("{sample}\n"));
    refused_saying(
        &mut analyze(&line, &[], dir.path()),
        &[
            "sample.jsonl:1",
            "evalsim reads canonical rows",
            "lm-eval",
            "looks like one inspect_ai sample",
        ],
    );
    let doc = write_file(dir.path(), "sample.json", &sample.to_string());
    refused_saying(
        &mut analyze(&doc, &[], dir.path()),
        &[
            "sample.json",
            "evalsim reads canonical rows",
            "looks like one inspect_ai sample",
        ],
    );
    let other = write_file(
        dir.path(),
        "other.jsonl",
        "{\"question\": 1, \"label\": 0}\n",
    );
    let err = refused_saying(
        &mut analyze(&other, &[], dir.path()),
        &["other.jsonl:1", "none of them", "`label`, `question`"],
    );
    assert!(!err.contains("missing field"), "{err}");
}

/// `bytes` with a UTF-8 byte order mark in front.
fn with_bom(bytes: &[u8]) -> Vec<u8> {
    [b"\xEF\xBB\xBF".as_slice(), bytes].concat()
}

#[test]
fn a_csv_with_a_byte_order_mark_was_misread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("bom.csv");
    std::fs::write(&csv, with_bom(b"problem_id,correct\na,1\na,0\nb,1\nb,1\n")).expect("write");
    output(&mut analyze(&csv, &[], dir.path()));
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/summary.json")).expect("summary"),
    )
    .expect("json");
    assert_eq!(s["models"][0]["summary"]["pass_at_1"], 0.75);
}

#[test]
fn a_jsonl_with_a_byte_order_mark_was_misread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let jsonl = dir.path().join("bom.jsonl");
    let rows =
        "{\"problem_id\": \"a\", \"correct\": true}\n{\"problem_id\": \"a\", \"correct\": false}\n";
    std::fs::write(&jsonl, with_bom(rows.as_bytes())).expect("write");
    output(&mut analyze(&jsonl, &[], dir.path()));
    // An lm-eval samples file with a mark is still recognised as lm-eval.
    let src = harness("lm_eval/gen/fixture-lm");
    let samples = std::fs::read_dir(&src)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .find(|p| p.to_string_lossy().contains("samples_"))
        .expect("samples");
    let copy = dir.path().join("samples_bom.jsonl");
    std::fs::write(&copy, with_bom(&std::fs::read(&samples).expect("read"))).expect("write");
    output(&mut analyze(&copy, &[], dir.path()));
}

/// A copy of the lm-eval output folder `rel` in `dir` (files only, one level below).
fn copy_lm_eval(rel: &str, dir: &Path) -> PathBuf {
    let to = dir.join("run");
    for sub in std::fs::read_dir(harness(rel)).expect("dir") {
        let sub = sub.expect("entry").path();
        let target = to.join(sub.file_name().expect("name"));
        std::fs::create_dir_all(&target).expect("mkdir");
        for f in std::fs::read_dir(&sub).expect("dir") {
            let f = f.expect("entry").path();
            std::fs::copy(&f, target.join(f.file_name().expect("name"))).expect("copy");
        }
    }
    to
}

/// The file in `dir` (one level down) whose name starts with `prefix`.
fn find(dir: &Path, prefix: &str) -> PathBuf {
    for sub in std::fs::read_dir(dir).expect("dir") {
        for f in std::fs::read_dir(sub.expect("entry").path()).expect("dir") {
            let f = f.expect("entry").path();
            if f.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
            {
                return f;
            }
        }
    }
    panic!("{prefix} in {}", dir.display())
}

#[test]
fn an_lm_eval_results_json_with_a_byte_order_mark_was_misread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = copy_lm_eval("lm_eval/gen", dir.path());
    let results = find(&run, "results_");
    let bytes = std::fs::read(&results).expect("read");
    std::fs::write(&results, with_bom(&bytes)).expect("write");
    let (stdout, stderr) = output(&mut analyze(&run, &[], dir.path()));
    assert!(stdout.contains("agree"), "{stdout}");
    assert!(!stderr.contains("warning"), "{stderr}");
    // The samples file alone finds the results beside it, mark and all.
    let samples = find(&run, "samples_");
    let (stdout, _) = output(&mut analyze(&samples, &[], dir.path()));
    assert!(stdout.contains("agree"), "{stdout}");
}

#[test]
fn score_key_on_a_non_dict_score_was_silently_ignored() {
    let dir = tempfile::tempdir().expect("tempdir");
    refused_saying(
        &mut analyze(
            &harness("inspect/epochs-eval.eval"),
            &["--score-key", "exact"],
            dir.path(),
        ),
        &[
            "epochs-eval.eval",
            "--score-key `exact`",
            "cannot apply",
            "scores.match.value",
        ],
    );
}

#[test]
fn lm_eval_samples_of_a_task_the_results_do_not_list_were_read_silently() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = copy_lm_eval("lm_eval/mc", dir.path());
    let samples = find(&run, "samples_fx_mc_a_");
    let stray_name = samples
        .file_name()
        .expect("name")
        .to_string_lossy()
        .replace("fx_mc_a", "fx_stray");
    let stray = samples.with_file_name(&stray_name);
    std::fs::copy(&samples, &stray).expect("copy");
    refused_saying(
        &mut analyze(&run, &["--metric", "acc"], dir.path()),
        &[&stray_name, "task `fx_stray`", "`fx_mc_a`"],
    );
    // The stray file alone: read (it is what was asked for), with a warning naming the task.
    let (_, stderr) = output(&mut analyze(&stray, &["--metric", "acc"], dir.path()));
    assert!(
        stderr.contains("task `fx_stray` is not in the run's results"),
        "{stderr}"
    );
}

#[test]
fn a_harness_warning_was_printed_more_than_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The errored-sample warning: once, on stderr.
    let (stdout, stderr) = output(&mut analyze(
        &harness("inspect/errored.eval"),
        &[],
        dir.path(),
    ));
    assert_eq!(stderr.matches("skipped").count(), 1, "{stderr}");
    assert!(
        !stdout.contains("skipped") && !stdout.contains("warning"),
        "{stdout}"
    );
    // A cross-check that fails (the header's accuracy altered): one warning, on stderr.
    let mut all = entries(&harness("inspect/epochs-eval.eval"));
    let header = all
        .iter_mut()
        .find(|e| e.name == "header.json")
        .expect("header");
    let mut v = header.json();
    for score in v["results"]["scores"].as_array_mut().expect("scores") {
        score["metrics"]["accuracy"]["value"] = Value::from(0.123);
    }
    *header = Entry::stored("header.json", v.to_string().as_bytes());
    let altered = dir.path().join("altered.eval");
    write_zip(&altered, &all);
    let (stdout, stderr) = output(&mut analyze(&altered, &[], dir.path()));
    assert_eq!(stderr.matches("they should agree").count(), 1, "{stderr}");
    assert!(
        !stdout.contains("they should agree") && !stdout.contains("warning"),
        "{stdout}"
    );
    assert!(
        stdout.contains("DIFFER"),
        "the check's own line stays: {stdout}"
    );
}
