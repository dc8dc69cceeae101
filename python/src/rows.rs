//! Rows from Python (a list of dicts, or the columns of a DataFrame) written as canonical JSONL,
//! the text the library's canonical reader reads: every check and message on a value is the
//! reader's, as for a `.jsonl` file holding the same rows (line N is row N, counted from 1).
//! Values are written as JSON: None and NaN as null, bools, integers, floats (shortest text that
//! reads back to the same number) and strings; anything else is an error naming row and column.
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};

use crate::bad;

fn number(out: &mut Vec<u8>, x: f64) {
    if x.is_nan() {
        out.extend_from_slice(b"null");
    } else if x.is_infinite() {
        // Not JSON; the reader reports the row as malformed JSON with the value in the message.
        out.extend_from_slice(if x > 0.0 { b"Infinity" } else { b"-Infinity" });
    } else {
        // The shortest text that reads back to the same f64, as serde_json writes it.
        out.extend_from_slice(zmij::Buffer::new().format_finite(x).as_bytes());
    }
}

fn integer(out: &mut Vec<u8>, i: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
}

fn string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        let _ = serde_json::to_writer(&mut *out, s);
    } else {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    }
}

/// One Python value as JSON.
fn value(
    out: &mut Vec<u8>,
    v: &Bound<'_, PyAny>,
    source: &str,
    row: usize,
    key: &str,
) -> PyResult<()> {
    if v.is_none() {
        out.extend_from_slice(b"null");
    } else if let Ok(b) = v.downcast::<PyBool>() {
        out.extend_from_slice(if b.is_true() { b"true" } else { b"false" });
    } else if let Ok(s) = v.downcast::<PyString>() {
        string(out, &s.to_cow()?);
    } else if let Ok(f) = v.downcast::<PyFloat>() {
        number(out, f.value());
    } else if v.is_instance_of::<PyInt>() {
        match v.extract::<i64>() {
            Ok(i) => integer(out, i),
            // Python ints of any size, written as their digits.
            Err(_) => out.extend_from_slice(v.str()?.to_cow()?.as_bytes()),
        }
    } else if v.get_type().name()?.to_cow()?.contains("bool") {
        let b: bool = v.extract()?;
        out.extend_from_slice(if b { b"true" } else { b"false" });
    } else if let Ok(i) = v.extract::<i64>() {
        integer(out, i);
    } else if let Ok(x) = v.extract::<f64>() {
        number(out, x);
    } else {
        return Err(bad(format!(
            "{source}:{row}: field `{key}` holds a value of type {}; expected a string, a number, True/False or None",
            v.get_type().name()?
        )));
    }
    Ok(())
}

/// A list of dicts with string keys as canonical JSONL, one line per dict.
#[pyfunction]
pub(crate) fn records_jsonl<'py>(
    py: Python<'py>,
    source: &str,
    records: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut out = Vec::with_capacity(records.len() * 64);
    for (i, r) in records.iter().enumerate() {
        let row = i + 1;
        let dict = r.downcast::<PyDict>().map_err(|_| {
            bad(format!(
                "{source}:{row}: a row of type {}; expected a dict of column -> value",
                r.get_type()
                    .name()
                    .map_or_else(|_| "?".into(), |n| n.to_string())
            ))
        })?;
        out.push(b'{');
        for (j, (k, v)) in dict.iter().enumerate() {
            let key: String = k
                .extract()
                .map_err(|_| bad(format!("{source}:{row}: a key that is not a string: {k}")))?;
            if j > 0 {
                out.push(b',');
            }
            string(&mut out, &key);
            out.push(b':');
            value(&mut out, &v, source, row, &key)?;
        }
        out.extend_from_slice(b"}\n");
    }
    Ok(PyBytes::new(py, &out))
}

/// One column: a numpy array of int64, float64 or bool, or a list of Python values.
enum Column<'a, 'py> {
    Int(&'a [i64]),
    Float(&'a [f64]),
    Bool(&'a [bool]),
    List(&'a Bound<'py, PyList>),
}

/// Columns (equal lengths) as canonical JSONL, one line per row with every column.
#[pyfunction]
pub(crate) fn columns_jsonl<'py>(
    py: Python<'py>,
    source: &str,
    names: Vec<String>,
    columns: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let ints: Vec<Option<PyReadonlyArray1<'py, i64>>> =
        columns.iter().map(|c| c.extract().ok()).collect();
    let floats: Vec<Option<PyReadonlyArray1<'py, f64>>> =
        columns.iter().map(|c| c.extract().ok()).collect();
    let bools: Vec<Option<PyReadonlyArray1<'py, bool>>> =
        columns.iter().map(|c| c.extract().ok()).collect();
    let mut cols = Vec::with_capacity(columns.len());
    for (j, c) in columns.iter().enumerate() {
        cols.push(if let Some(a) = &ints[j] {
            Column::Int(a.as_slice()?)
        } else if let Some(a) = &floats[j] {
            Column::Float(a.as_slice()?)
        } else if let Some(a) = &bools[j] {
            Column::Bool(a.as_slice()?)
        } else if let Ok(l) = c.downcast::<PyList>() {
            Column::List(l)
        } else {
            return Err(bad(format!(
                "{source}: column `{}`: expected a numpy array of int64, float64 or bool, or a list",
                names[j]
            )));
        });
    }
    let len = |c: &Column| match c {
        Column::Int(a) => a.len(),
        Column::Float(a) => a.len(),
        Column::Bool(a) => a.len(),
        Column::List(l) => l.len(),
    };
    let rows = cols.first().map_or(0, len);
    if cols.iter().any(|c| len(c) != rows) {
        return Err(bad(format!("{source}: columns of different lengths")));
    }
    let keys: Vec<Vec<u8>> = names
        .iter()
        .map(|n| {
            let mut k = Vec::new();
            string(&mut k, n);
            k.push(b':');
            k
        })
        .collect();
    let mut out = Vec::with_capacity(rows * 16 * cols.len().max(1));
    for i in 0..rows {
        out.push(b'{');
        for (j, c) in cols.iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&keys[j]);
            match c {
                Column::Int(a) => integer(&mut out, a[i]),
                Column::Float(a) => number(&mut out, a[i]),
                Column::Bool(a) => out.extend_from_slice(if a[i] { b"true" } else { b"false" }),
                Column::List(l) => value(&mut out, &l.get_item(i)?, source, i + 1, &names[j])?,
            }
        }
        out.extend_from_slice(b"}\n");
    }
    Ok(PyBytes::new(py, &out))
}
