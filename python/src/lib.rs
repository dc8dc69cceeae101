//! `evalsim._native`: the Rust side of the Python package. It converts Python values to the
//! library's inputs and back and computes nothing itself: the exact functions are those of
//! `evalsim::exact` and `evalsim::analyze::estimators`, the commands those of
//! `evalsim::cli::embed` (the command line's own pipelines). Heavy work runs with the GIL
//! released, on a worker thread, while the calling thread watches for Ctrl-C (see [`heavy`]).
#![forbid(unsafe_code)]

use std::sync::mpsc;
use std::time::Duration;

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use rayon::prelude::*;

use evalsim::cli::embed;
use evalsim::model::VoteRule;

mod rows;

create_exception!(
    _native,
    EvalsimError,
    PyValueError,
    "An error evalsim reports: bad input, named as the command line names it (file, line, \
     field or flag, and what is valid). `code` is the command line's exit code for it."
);

fn error(message: String, code: u8) -> PyErr {
    let err = EvalsimError::new_err(message);
    Python::with_gil(|py| {
        let _ = err.value(py).setattr("code", code);
    });
    err
}

fn bad(message: String) -> PyErr {
    error(message, 2)
}

/// Runs `work` on a worker thread with the GIL released; the calling thread wakes every 50 ms
/// to let Python handle signals. On Ctrl-C (`KeyboardInterrupt`, or any exception a signal
/// handler raises) the exception is raised at once when the work cannot stop (`stoppable`
/// false: the estimators of `analyze` and `fit`, which then finish in the background and whose
/// result is dropped). Work that can stop (`plan`, `run`: the simulations check
/// [`evalsim::interrupt::requested`] between batches) is asked to
/// ([`evalsim::interrupt::request_sigint`]) and waited for, so that it no longer runs when the
/// exception is raised; the request is then cleared for the next call.
fn heavy<T: Send + 'static>(
    py: Python<'_>,
    stoppable: bool,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = mpsc::channel();
    // `allow_threads` needs a Sync closure: the receiver is only used from this thread.
    let rx = std::sync::Mutex::new(rx);
    let wait = |timeout: Duration| match rx.lock() {
        Ok(rx) => rx.recv_timeout(timeout),
        Err(_) => Err(mpsc::RecvTimeoutError::Disconnected),
    };
    std::thread::Builder::new()
        .name("evalsim".into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| error(format!("cannot start a worker thread: {e}"), 3))?;
    loop {
        match py.allow_threads(|| wait(Duration::from_millis(50))) {
            Ok(out) => return Ok(out),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(error("the worker thread panicked".into(), 3))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if let Err(signal) = py.check_signals() {
            if stoppable {
                evalsim::interrupt::request_sigint();
                py.allow_threads(|| {
                    while let Err(mpsc::RecvTimeoutError::Timeout) = wait(Duration::from_secs(3600))
                    {
                    }
                });
                evalsim::interrupt::clear();
            }
            return Err(signal);
        }
    }
}

/// Element `i` of a broadcast input (length 1 or `len`).
fn at<T: Copy>(x: &[T], i: usize) -> T {
    if x.len() == 1 {
        x[0]
    } else {
        x[i]
    }
}

/// The common length of inputs of length 1 or n.
fn common_len(name: &str, lens: &[usize]) -> PyResult<usize> {
    let n = lens.iter().copied().max().unwrap_or(0);
    if lens.iter().any(|&l| l != n && l != 1) {
        return Err(bad(format!(
            "{name}: inputs of lengths {lens:?} do not broadcast (each must have length 1 or {n})"
        )));
    }
    Ok(if lens.contains(&0) { 0 } else { n })
}

fn count(name: &str, what: &str, i: usize, x: i64) -> PyResult<usize> {
    usize::try_from(x).map_err(|_| {
        bad(format!(
            "{name}: element {i}: {what} = {x}; expected a non-negative integer"
        ))
    })
}

/// An unbiased estimator of one problem (`evalsim::analyze::estimators`) over arrays. Real
/// inputs repeat (one n for every problem, c among n + 1 values), so within a chunk each
/// distinct (n, c, k) is computed once by the library's function and then looked up; the
/// result is the same bit for bit. One chunk per worker thread (at least 4,096 elements), so
/// that a value is computed at most once per thread. An error names the first element that has
/// one.
fn estimator(
    py: Python<'_>,
    name: &'static str,
    f: fn(usize, usize, usize) -> evalsim::analyze::Result<f64>,
    n: &[i64],
    c: &[i64],
    k: &[i64],
) -> PyResult<Vec<f64>> {
    let len = common_len(name, &[n.len(), c.len(), k.len()])?;
    let one = |i: usize| -> PyResult<f64> {
        let (ni, ci, ki) = (at(n, i), at(c, i), at(k, i));
        let (nu, cu, ku) = (
            count(name, "n", i, ni)?,
            count(name, "c", i, ci)?,
            count(name, "k", i, ki)?,
        );
        f(nu, cu, ku).map_err(|e| {
            bad(format!(
                "{name}: element {i} (n = {ni}, c = {ci}, k = {ki}): {e}"
            ))
        })
    };
    let size = len.div_ceil(rayon::current_num_threads().max(1)).max(4096);
    let chunk = |start: usize| -> Option<Vec<f64>> {
        let mut seen: rustc_hash::FxHashMap<(i64, i64, i64), f64> = Default::default();
        (start..len.min(start + size))
            .map(|i| {
                let key = (at(n, i), at(c, i), at(k, i));
                match seen.get(&key) {
                    Some(&v) => Some(v),
                    None => {
                        let v = one(i).ok()?;
                        seen.insert(key, v);
                        Some(v)
                    }
                }
            })
            .collect()
    };
    let done: Option<Vec<Vec<f64>>> = py.allow_threads(|| {
        (0..len.div_ceil(size))
            .into_par_iter()
            .map(|b| chunk(b * size))
            .collect()
    });
    match done {
        Some(parts) => Ok(parts.concat()),
        // Some element failed: find the first, for its message.
        None => (0..len).map(one).collect(),
    }
}

/// Unbiased pass@k of each (n, c, k): see `evalsim.pass_at_k`.
#[pyfunction]
fn pass_at_k<'py>(
    py: Python<'py>,
    n: PyReadonlyArray1<'py, i64>,
    c: PyReadonlyArray1<'py, i64>,
    k: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let out = estimator(
        py,
        "pass_at_k",
        evalsim::analyze::pass_at_k,
        n.as_slice()?,
        c.as_slice()?,
        k.as_slice()?,
    )?;
    Ok(out.into_pyarray(py))
}

/// Unbiased pass^k of each (n, c, k): see `evalsim.pass_hat_k`.
#[pyfunction]
fn pass_hat_k<'py>(
    py: Python<'py>,
    n: PyReadonlyArray1<'py, i64>,
    c: PyReadonlyArray1<'py, i64>,
    k: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let out = estimator(
        py,
        "pass_hat_k",
        evalsim::analyze::pass_hat_k,
        n.as_slice()?,
        c.as_slice()?,
        k.as_slice()?,
    )?;
    Ok(out.into_pyarray(py))
}

fn rate(name: &str, what: &str, i: usize, p: f64) -> PyResult<f64> {
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(bad(format!(
            "{name}: element {i}: {what} = {p}; expected a probability in [0, 1]"
        )))
    }
}

fn samples(name: &str, what: &str, i: usize, k: i64) -> PyResult<u32> {
    match u32::try_from(k) {
        Ok(k) if k >= 1 => Ok(k),
        _ => Err(bad(format!(
            "{name}: element {i}: {what} = {k}; expected a whole number from 1 to {}",
            u32::MAX
        ))),
    }
}

/// pass@k = 1 - (1 - p)^k of rates (`evalsim::exact::pass::pass_at_k`).
#[pyfunction]
fn exact_pass_at_k<'py>(
    py: Python<'py>,
    p: PyReadonlyArray1<'py, f64>,
    k: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    of_rates(
        py,
        "exact_pass_at_k",
        evalsim::exact::pass::pass_at_k,
        p.as_slice()?,
        k.as_slice()?,
    )
}

/// pass^k = p^k of rates (`evalsim::exact::pass::pass_hat_k`).
#[pyfunction]
fn exact_pass_hat_k<'py>(
    py: Python<'py>,
    p: PyReadonlyArray1<'py, f64>,
    k: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    of_rates(
        py,
        "exact_pass_hat_k",
        evalsim::exact::pass::pass_hat_k,
        p.as_slice()?,
        k.as_slice()?,
    )
}

fn of_rates<'py>(
    py: Python<'py>,
    name: &'static str,
    f: fn(f64, u32) -> f64,
    p: &[f64],
    k: &[i64],
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let len = common_len(name, &[p.len(), k.len()])?;
    let one = |i: usize| -> PyResult<f64> {
        Ok(f(
            rate(name, "p", i, at(p, i))?,
            samples(name, "k", i, at(k, i))?,
        ))
    };
    let out: Vec<f64> = py.allow_threads(|| {
        (0..len)
            .into_par_iter()
            .with_min_len(4096)
            .map(one)
            .collect::<PyResult<_>>()
    })?;
    Ok(out.into_pyarray(py))
}

fn vote_rule(rule: &str) -> PyResult<VoteRule> {
    match rule {
        "random" => Ok(VoteRule::Random),
        "strict" => Ok(VoteRule::Strict),
        "absolute" => Ok(VoteRule::Absolute),
        r => Err(bad(format!(
            "rule = {r:?}: expected \"random\" (ties split evenly), \"strict\" (a tie is not a win) or \"absolute\" (more than k/2 votes)"
        ))),
    }
}

/// Exact maj@k of rates with attractor shares (`evalsim::exact::maj`): one `maj_at_k_all` when
/// the share and k are the same for every element (bit for bit `maj_at_k` of each), else
/// `maj_at_k` element by element.
#[pyfunction]
fn exact_maj_at_k<'py>(
    py: Python<'py>,
    p: PyReadonlyArray1<'py, f64>,
    k: PyReadonlyArray1<'py, i64>,
    attractor: PyReadonlyArray1<'py, f64>,
    rule: &str,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    const NAME: &str = "exact_maj_at_k";
    let rule = vote_rule(rule)?;
    let (p, k, a) = (p.as_slice()?, k.as_slice()?, attractor.as_slice()?);
    let len = common_len(NAME, &[p.len(), k.len(), a.len()])?;
    for i in 0..len {
        rate(NAME, "p", i, at(p, i))?;
        rate(NAME, "attractor", i, at(a, i))?;
        samples(NAME, "k", i, at(k, i))?;
    }
    let out: Vec<f64> = py.allow_threads(|| {
        if k.len() == 1 && a.len() == 1 {
            let rates: Vec<f64> = (0..len).map(|i| at(p, i)).collect();
            evalsim::exact::maj::maj_at_k_all(&rates, a[0], k[0] as u32, rule)
        } else {
            (0..len)
                .into_par_iter()
                .map(|i| evalsim::exact::maj::maj_at_k(at(p, i), at(a, i), at(k, i) as u32, rule))
                .collect()
        }
    });
    Ok(out.into_pyarray(py))
}

fn check_rates(name: &str, rates: &[f64]) -> PyResult<()> {
    if rates.is_empty() {
        return Err(bad(format!(
            "{name}: no rates given; expected one per problem"
        )));
    }
    for (i, &p) in rates.iter().enumerate() {
        rate(name, "rate", i, p)?;
    }
    Ok(())
}

/// Seed SD of the benchmark score (`evalsim::exact::noise::seed_sd`).
#[pyfunction]
fn seed_sd(rates: PyReadonlyArray1<'_, f64>, n: i64) -> PyResult<f64> {
    let rates = rates.as_slice()?;
    check_rates("seed_sd", rates)?;
    let n = samples("seed_sd", "n", 0, n)?;
    Ok(evalsim::exact::noise::seed_sd(rates, n))
}

/// Question-sampling SE (`evalsim::exact::noise::question_se`).
#[pyfunction]
fn question_se(rates: PyReadonlyArray1<'_, f64>) -> PyResult<f64> {
    let rates = rates.as_slice()?;
    check_rates("question_se", rates)?;
    Ok(evalsim::exact::noise::question_se(rates))
}

/// A command's output as (files as [(name, bytes)], text, warnings, exit code).
type Output<'py> = (Vec<(String, Bound<'py, PyBytes>)>, String, Vec<String>, u8);

fn output<'py>(py: Python<'py>, out: Result<embed::Output, embed::Error>) -> PyResult<Output<'py>> {
    let out = out.map_err(|e| error(e.message, e.code))?;
    let files = out
        .files
        .into_iter()
        .map(|a| (a.file, PyBytes::new(py, &a.bytes)))
        .collect();
    Ok((files, out.text, out.warnings, out.code))
}

/// Inputs from Python: a path (str) or (name, canonical JSONL bytes).
fn inputs(sources: &Bound<'_, PyList>) -> PyResult<Vec<embed::Input>> {
    let mut out = Vec::with_capacity(sources.len());
    for s in sources.iter() {
        if let Ok(path) = s.extract::<std::path::PathBuf>() {
            out.push(embed::Input::File(path));
        } else {
            let (name, jsonl): (String, Vec<u8>) = s.extract()?;
            out.push(embed::Input::Rows { name, jsonl });
        }
    }
    Ok(out)
}

/// `evalsim analyze FLAGS` of the sources.
#[pyfunction]
fn analyze<'py>(
    py: Python<'py>,
    flags: Vec<String>,
    sources: &Bound<'py, PyList>,
) -> PyResult<Output<'py>> {
    let inputs = inputs(sources)?;
    let out = heavy(py, false, move || embed::analyze(&flags, &inputs))?;
    output(py, out)
}

/// `evalsim fit FLAGS` of the sources.
#[pyfunction]
fn fit<'py>(
    py: Python<'py>,
    flags: Vec<String>,
    sources: &Bound<'py, PyList>,
) -> PyResult<Output<'py>> {
    let inputs = inputs(sources)?;
    let out = heavy(py, false, move || embed::fit(&flags, &inputs))?;
    output(py, out)
}

/// `evalsim plan FLAGS`.
#[pyfunction]
fn plan(py: Python<'_>, flags: Vec<String>) -> PyResult<Output<'_>> {
    let out = heavy(py, true, move || embed::plan(&flags))?;
    output(py, out)
}

/// `evalsim run SCENARIO FLAGS`, the scenario a name or path, or TOML text when `is_text`.
#[pyfunction]
fn run(
    py: Python<'_>,
    scenario: String,
    is_text: bool,
    flags: Vec<String>,
) -> PyResult<Output<'_>> {
    let out = heavy(py, true, move || embed::run(&scenario, is_text, &flags))?;
    output(py, out)
}

/// Writes files [(name, bytes)] into `dir` as the commands write their output folder.
#[pyfunction]
fn write(py: Python<'_>, dir: std::path::PathBuf, files: Vec<(String, Vec<u8>)>) -> PyResult<()> {
    let artifacts: Vec<evalsim::report::Artifact> = files
        .into_iter()
        .map(|(file, bytes)| evalsim::report::Artifact { file, bytes })
        .collect();
    py.allow_threads(|| embed::write(&dir, &artifacts))
        .map(|_| ())
        .map_err(|e| error(e.message, e.code))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("EvalsimError", m.py().get_type::<EvalsimError>())?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(pass_at_k, m)?)?;
    m.add_function(wrap_pyfunction!(pass_hat_k, m)?)?;
    m.add_function(wrap_pyfunction!(exact_pass_at_k, m)?)?;
    m.add_function(wrap_pyfunction!(exact_pass_hat_k, m)?)?;
    m.add_function(wrap_pyfunction!(exact_maj_at_k, m)?)?;
    m.add_function(wrap_pyfunction!(seed_sd, m)?)?;
    m.add_function(wrap_pyfunction!(question_se, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(write, m)?)?;
    m.add_function(wrap_pyfunction!(rows::records_jsonl, m)?)?;
    m.add_function(wrap_pyfunction!(rows::columns_jsonl, m)?)?;
    Ok(())
}
