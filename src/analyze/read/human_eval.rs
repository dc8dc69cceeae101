//! human-eval `*_results.jsonl` (written by `evaluate_functional_correctness`): `task_id` and
//! `passed` per line, samples in file order.
//!
//! Depends on [`super::fields`], the shared JSONL iterator and [`crate::analyze::data`]'s
//! builder; computes no statistics.
use std::io::BufRead;

use serde_json::{Map, Value};

use super::fields::Ctx;
use super::{read_jsonl_lines, FormatReader, ReadOptions};
use crate::analyze::data::{DatasetBuilder, Sample};
use crate::analyze::Result;

/// The human-eval results reader.
pub(super) struct HumanEval;

impl FormatReader for HumanEval {
    fn read(
        &self,
        input: &mut dyn BufRead,
        builder: &mut DatasetBuilder,
        _options: &ReadOptions,
    ) -> Result<()> {
        read_jsonl_lines(input, builder, human_eval_json)
    }
}

fn human_eval_json(source: &str, line: usize, obj: &Map<String, Value>) -> Result<Sample> {
    let ctx = Ctx { source, line };
    let passed = ctx.opt_bool(obj, "passed")?.ok_or_else(|| {
        if obj.contains_key("completion") {
            ctx.missing(
                "passed",
                "evaluated samples: this is a human-eval samples file not yet evaluated; run \
                 `evaluate_functional_correctness FILE` first and analyse the \
                 `FILE_results.jsonl` it writes",
            )
        } else {
            ctx.missing("passed", "true/false (human-eval `*_results.jsonl`)")
        }
    })?;
    Ok(Sample {
        problem_id: ctx.id(obj, "task_id")?,
        correct: Some(passed),
        ..Sample::default()
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{counts, fixture, read_str};
    use super::super::Format;
    use super::*;

    #[test]
    fn human_eval_results() {
        let d = read_str(
            Format::HumanEval,
            &fixture("humaneval_samples.jsonl_results.jsonl"),
            &ReadOptions::default(),
        )
        .unwrap();
        let m = &d.models[0];
        assert_eq!(
            counts(m),
            vec![
                ("HumanEval/0".to_string(), 3, 2, vec![1]),
                ("HumanEval/1".to_string(), 3, 0, vec![1, 1, 1]),
            ]
        );
        assert!(!m.has_answers && !m.has_tokens);
        let flags: Vec<bool> = m.problems[0].correct_flags().collect();
        assert_eq!(flags, vec![true, false, true]);
    }
}
