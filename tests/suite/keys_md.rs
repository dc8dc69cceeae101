//! `docs/keys.md` is generated from the key table (`evalsim::scenario::keys`): the suite fails
//! when the file is stale, and `EVALSIM_BLESS=1 cargo test --release --test suite keys_md`
//! rewrites it.
use std::path::Path;

#[test]
fn keys_md_is_the_key_table_rendered() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/keys.md");
    let want = evalsim::scenario::keys::markdown();
    if std::env::var_os("EVALSIM_BLESS").is_some() {
        std::fs::write(&path, &want).expect("write docs/keys.md");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/keys.md is stale: regenerate it with `EVALSIM_BLESS=1 cargo test --release --test suite keys_md`"
    );
}

#[test]
fn every_key_of_the_table_parses_in_a_file_and_unknown_keys_name_the_nearest() {
    // A key the table lists but serde does not take would be refused as unknown: load a file
    // that sets one key of each table, and one with a typo.
    let body = "[benchmark]\nproblems = 10\nmu = 0.0\nsigma = 1.0\n\n[[model]]\nname = \"m\"\nattractor = 0.5\nrun_sdd = 0.1\n";
    let err = evalsim::scenario::Scenario::from_toml(body, "t", "t.toml").expect_err("typo");
    let text = err.to_string();
    assert!(text.contains("did you mean `run_sd`?"), "{text}");
    for key in evalsim::scenario::keys::of_table(evalsim::scenario::keys::Table::Model) {
        assert!(text.contains(&format!("`{}`", key.name)), "{text}");
    }
}
