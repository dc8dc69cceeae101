//! The one range check of every numeric key: a value, or each entry of a list, passes when its
//! key's [`Domain`] in the key table admits it, and a list has the length and order the domain
//! gives. The bounds live in the table only; the messages write them as the table's `valid` text
//! does. Checks that involve other keys stay with the code that resolves those keys.
use std::fmt::Display;

use super::experiment::ExpCtx;
use super::*;
use crate::scenario::keys::{Bounds, Domain, Key, ListRule};

/// A value a numeric key holds: a real or a whole number, with the domain's pass rule for it.
pub(super) trait Value: Copy + PartialOrd + Display {
    /// Whether `d` admits `x` ([`Domain::admits_real`] or [`Domain::admits_whole`]).
    fn admitted(d: &Domain, x: Self) -> bool;
}

impl Value for f64 {
    fn admitted(d: &Domain, x: f64) -> bool {
        d.admits_real(x)
    }
}

impl Value for u64 {
    fn admitted(d: &Domain, x: u64) -> bool {
        d.admits_whole(x)
    }
}

/// The table line of key `name` of `table`, as an experiment of `kind` reads it.
///
/// # Panics
/// If the table has no such key with a domain: every caller names a numeric key of the table,
/// which `key_ranges_were_written_twice` exercises.
pub(super) fn line(table: Table, name: &str, kind: Option<ExperimentKind>) -> &'static Key {
    keys::find(table, name, kind)
        .filter(|k| k.domain.is_some())
        .unwrap_or_else(|| panic!("the key table has no numeric key `{name}` in {table:?}"))
}

/// The domain of a table line found by [`line`].
pub(super) fn domain(key: &Key) -> Domain {
    key.domain
        .expect("found by `line`, which keeps numeric keys only")
}

impl Resolver<'_> {
    /// One value of `key` (its table line), named `path` in errors: admitted by its domain.
    pub(super) fn value<T: Value>(&self, v: &Spanned<T>, key: &Key, path: &str) -> Res<T> {
        let (x, d) = (*v.get_ref(), domain(key));
        if T::admitted(&d, x) {
            return Ok(x);
        }
        let msg = match d.bounds {
            Bounds::Whole(..) => format!("must be {}, got {x}", d.phrase()),
            Bounds::Real(..) => format!("must be {} ({}), got {x}", key.valid(), key.doc),
        };
        Err(self.err(v.span(), path, msg))
    }

    /// A list value at `span` of a key with domain `d` (a list domain, usually a table line's):
    /// its length, every entry, and (for an increasing domain) its order, each refused at the
    /// list or at the entry at fault.
    pub(super) fn list<T: Value>(
        &self,
        list: &[T],
        span: Range<usize>,
        d: &Domain,
        path: &str,
    ) -> Res<()> {
        let rule = d.list.unwrap_or(ListRule {
            min: 1,
            max: 1,
            increasing: false,
        });
        let n = list.len();
        if n < rule.min || n > rule.max {
            return Err(self.err(
                span,
                path,
                format!("must list {} to {} values, got {n}", rule.min, rule.max),
            ));
        }
        if let Some(i) = list.iter().position(|&x| !T::admitted(d, x)) {
            return Err(self.err(
                self.loc.element(span, i),
                path,
                format!(
                    "{} is out of range: every value must be {}",
                    list[i],
                    d.phrase()
                ),
            ));
        }
        if let Some(i) = list
            .windows(2)
            .position(|w| w[0] >= w[1])
            .filter(|_| rule.increasing)
        {
            return Err(self.err(
                self.loc.element(span, i + 1),
                path,
                format!(
                    "values must be strictly increasing: {} follows {}",
                    list[i + 1],
                    list[i]
                ),
            ));
        }
        Ok(())
    }

    /// An optional value of the model key `name` (or of one of its blocks, `table`) of model
    /// `idx`: `default` when absent.
    pub(super) fn model_value(
        &self,
        v: &Option<Spanned<f64>>,
        (table, name): (Table, &str),
        path: &str,
        default: f64,
    ) -> Res<f64> {
        v.as_ref().map_or(Ok(default), |v| {
            self.value(v, line(table, name, None), path)
        })
    }
}

impl ExpCtx<'_> {
    /// The table line of experiment key `k` for this experiment's kind.
    pub(super) fn line(&self, k: &str) -> &'static Key {
        line(Table::Experiment, k, Some(self.kind))
    }

    /// An optional value of key `k`: `default` when absent, else admitted by its domain.
    pub(super) fn value_or<T: Value>(&self, v: &Option<Spanned<T>>, k: &str, default: T) -> Res<T> {
        Ok(self.opt(v, k)?.unwrap_or(default))
    }

    /// An optional list of key `k`: `default` when absent (a missing-key error without one),
    /// else checked against its domain.
    pub(super) fn list_or<T: Value>(
        &self,
        v: &Option<Spanned<Vec<T>>>,
        k: &str,
        default: Option<&[T]>,
    ) -> Res<Vec<T>> {
        let line = self.line(k);
        let Some(v) = v else {
            return default.map(<[T]>::to_vec).ok_or_else(|| {
                self.r.err(
                    self.span.clone(),
                    &self.key(k),
                    format!("missing key `{k}` ({})", line.valid()),
                )
            });
        };
        self.r
            .list(v.get_ref(), v.span(), &domain(line), &self.key(k))?;
        Ok(v.get_ref().clone())
    }

    /// The list `v` of key `k`, checked against its domain.
    pub(super) fn check_list<T: Value>(&self, v: &Spanned<Vec<T>>, k: &str) -> Res<()> {
        let d = domain(self.line(k));
        self.r.list(v.get_ref(), v.span(), &d, &self.key(k))
    }

    /// An optional value of key `k`, admitted by its domain when given.
    pub(super) fn opt<T: Value>(&self, v: &Option<Spanned<T>>, k: &str) -> Res<Option<T>> {
        v.as_ref()
            .map(|v| self.r.value(v, self.line(k), &self.key(k)))
            .transpose()
    }

    /// A list of whole numbers of key `k` (k, n, problems, ...), as u32 (every such domain ends
    /// well below `u32::MAX`).
    pub(super) fn ints(
        &self,
        v: &Option<Spanned<Vec<u64>>>,
        k: &str,
        default: Option<&[u32]>,
    ) -> Res<Vec<u32>> {
        let default: Option<Vec<u64>> = default.map(|d| d.iter().map(|&x| u64::from(x)).collect());
        let list = self.list_or(v, k, default.as_deref())?;
        Ok(list.into_iter().map(|x| x as u32).collect())
    }
}
