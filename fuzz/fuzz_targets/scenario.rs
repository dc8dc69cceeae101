//! Fuzz target: arbitrary bytes, as UTF-8, into `Scenario::from_toml`. Loading must never panic;
//! when a scenario loads, its exact curves (pass@k, pass^k, maj@k) are computed and must be
//! probabilities with maj@k <= pass@k. Large cells are skipped so every input stays cheap.
#![no_main]

use evalsim::exact::maj::maj_at_k_all;
use evalsim::exact::pass::{pass_at_k, pass_hat_k};
use evalsim::scenario::{ExperimentSpec, Scenario};
use libfuzzer_sys::fuzz_target;

/// Skip cells whose exact maj@k costs more than this many (problem x k) steps.
const CHEAP: usize = 20_000;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let scenario = match Scenario::from_toml(text, "fuzz", "fuzz.toml") {
        Ok(s) => s,
        Err(e) => {
            // Every message must render and name the file.
            let msg = e.to_string();
            assert!(msg.contains("fuzz.toml"), "{msg}");
            return;
        }
    };
    let n = scenario.benchmark.problems;
    if n > CHEAP {
        return;
    }
    let bench = scenario.benchmark.rates();
    assert_eq!(bench.len(), n);
    for exp in &scenario.experiments {
        let (models, ks, rule): (Vec<usize>, &[u32], _) = match &exp.spec {
            ExperimentSpec::Curves {
                models,
                k,
                vote_rule,
                ..
            } => (models.clone(), k, *vote_rule),
            ExperimentSpec::AttractorSweep {
                model,
                k,
                vote_rule,
                ..
            } => (vec![*model], k, *vote_rule),
            _ => continue,
        };
        for &m in &models {
            let model = &scenario.models[m];
            let rates = model.rates_on(&scenario.benchmark);
            assert_eq!(rates.len(), n);
            for &k in ks {
                if n * k as usize > CHEAP {
                    continue;
                }
                let rule = rule.unwrap_or(model.vote_rule);
                let maj = maj_at_k_all(&rates, model.attractor, k, rule);
                for (&p, &mj) in rates.iter().zip(&maj) {
                    let pass = pass_at_k(p, k);
                    let hat = pass_hat_k(p, k);
                    assert!((0.0..=1.0).contains(&p), "rate {p}");
                    assert!((0.0..=1.0).contains(&pass), "pass@{k} {pass} at p={p}");
                    assert!((0.0..=1.0).contains(&hat), "pass^{k} {hat} at p={p}");
                    assert!((0.0..=1.0).contains(&mj), "maj@{k} {mj} at p={p}");
                    assert!(mj <= pass + 1e-9, "maj@{k} {mj} > pass@{k} {pass} at p={p}");
                }
            }
        }
    }
});
