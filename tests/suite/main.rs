//! The integration suite, one binary (one link step instead of one per file keeps CI fast).
//! Each module is one concern; fixtures live in `tests/fixtures` and `tests/bad_scenarios`.

mod analyze_answers;
mod analyze_cli;
mod bad_scenarios;
mod calibration;
mod clamped_output;
mod cli;
mod common;
mod curves_band;
mod determinism;
mod docs_commands;
mod edge_props;
mod edges;
mod figure_content;
mod figure_ranges;
mod file_system;
mod graded_plan;
mod graded_single;
mod harness_logs;
mod hostile_merge;
mod interrupt;
mod interval_coverage;
mod modes;
mod note;
mod numerical_edges;
mod plan_fixed_coverage;
mod plan_halfwidth_coverage;
mod plan_shift_sd;
mod plan_sweep;
mod properties;
mod report_terminal;
mod run_noise;
mod scenario_props;
mod shift_sd;
mod synth;
mod verifier;
