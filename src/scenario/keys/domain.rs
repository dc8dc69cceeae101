//! The machine-readable domain of a numeric key: reals between open, closed or absent ends,
//! whole numbers between bounds, and lists of either (with their length and whether they must
//! increase). The resolver's range checks ([`Domain::admits_real`], [`Domain::admits_whole`],
//! [`ListRule`]) and the key's `valid` text ([`Domain::bounds_text`]) both read it, so the two
//! cannot disagree.

/// One end of a real interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum End {
    /// The end itself is valid.
    Closed(f64),
    /// Values up to, but not including, the end are valid.
    Open(f64),
    /// No bound on this side (the value must still be finite).
    Unbounded,
}

/// What one value may be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bounds {
    /// A finite real number between the two ends.
    Real(End, End),
    /// A whole number from the first to the second, both included.
    Whole(u64, u64),
}

/// The shape of a list value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ListRule {
    /// Fewest entries.
    pub min: usize,
    /// Most entries.
    pub max: usize,
    /// Whether the entries must strictly increase.
    pub increasing: bool,
}

/// The domain of a numeric key: what each value may be, and for a list key, the list's shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Domain {
    /// What each value (or each entry of a list) may be.
    pub bounds: Bounds,
    /// The list's shape, for a list key.
    pub list: Option<ListRule>,
}

/// Reals in [lo, hi].
pub const fn closed(lo: f64, hi: f64) -> Domain {
    real(End::Closed(lo), End::Closed(hi))
}

/// Reals in (lo, hi).
pub const fn open(lo: f64, hi: f64) -> Domain {
    real(End::Open(lo), End::Open(hi))
}

/// Reals in [lo, hi).
pub const fn closed_open(lo: f64, hi: f64) -> Domain {
    real(End::Closed(lo), End::Open(hi))
}

/// Reals in (lo, hi].
pub const fn open_closed(lo: f64, hi: f64) -> Domain {
    real(End::Open(lo), End::Closed(hi))
}

/// Finite reals >= lo.
pub const fn at_least(lo: f64) -> Domain {
    real(End::Closed(lo), End::Unbounded)
}

/// Finite reals > lo.
pub const fn above(lo: f64) -> Domain {
    real(End::Open(lo), End::Unbounded)
}

/// Any finite real.
pub const fn finite() -> Domain {
    real(End::Unbounded, End::Unbounded)
}

/// Reals between two ends.
pub const fn real(lo: End, hi: End) -> Domain {
    Domain {
        bounds: Bounds::Real(lo, hi),
        list: None,
    }
}

/// Whole numbers from lo to hi.
pub const fn whole(lo: u64, hi: u64) -> Domain {
    Domain {
        bounds: Bounds::Whole(lo, hi),
        list: None,
    }
}

/// A number as the key texts write it (1e150, not 150 digits).
fn num(x: f64) -> String {
    if x.is_finite() && x.abs() >= 1e6 {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

impl End {
    /// Whether `x` is on the valid side of this end as the lower end.
    fn below(self, x: f64) -> bool {
        match self {
            End::Closed(a) => x >= a,
            End::Open(a) => x > a,
            End::Unbounded => true,
        }
    }

    /// Whether `x` is on the valid side of this end as the upper end.
    fn above(self, x: f64) -> bool {
        match self {
            End::Closed(b) => x <= b,
            End::Open(b) => x < b,
            End::Unbounded => true,
        }
    }
}

impl Domain {
    /// The same values, as a list of `min` to `max` entries.
    pub const fn list(self, min: usize, max: usize) -> Domain {
        Domain {
            bounds: self.bounds,
            list: Some(ListRule {
                min,
                max,
                increasing: false,
            }),
        }
    }

    /// The same list, its entries strictly increasing.
    pub const fn increasing(self) -> Domain {
        match self.list {
            Some(l) => Domain {
                bounds: self.bounds,
                list: Some(ListRule {
                    increasing: true,
                    ..l
                }),
            },
            None => self,
        }
    }

    /// The pass rule of a real value (or list entry): finite and within both ends. A whole
    /// domain admits no real.
    pub fn admits_real(&self, x: f64) -> bool {
        match self.bounds {
            Bounds::Real(lo, hi) => x.is_finite() && lo.below(x) && hi.above(x),
            Bounds::Whole(..) => false,
        }
    }

    /// The pass rule of a whole value (or list entry). A real domain admits no whole number.
    pub fn admits_whole(&self, x: u64) -> bool {
        match self.bounds {
            Bounds::Whole(lo, hi) => (lo..=hi).contains(&x),
            Bounds::Real(..) => false,
        }
    }

    /// The bounds as the `valid` texts write them: `[-10, 10]`, `(0, 1]`, `> 0`, `1 to 1024`,
    /// `>= 0`, followed by ", increasing" for an increasing list.
    pub fn bounds_text(&self) -> String {
        let text = match self.bounds {
            Bounds::Real(lo, hi) => match (lo, hi) {
                (End::Unbounded, End::Unbounded) => "any finite number".to_string(),
                (End::Closed(a), End::Unbounded) => format!(">= {}", num(a)),
                (End::Open(a), End::Unbounded) => format!("> {}", num(a)),
                (End::Unbounded, End::Closed(b)) => format!("<= {}", num(b)),
                (End::Unbounded, End::Open(b)) => format!("< {}", num(b)),
                (lo, hi) => {
                    let open = if matches!(lo, End::Open(_)) { '(' } else { '[' };
                    let close = if matches!(hi, End::Open(_)) { ')' } else { ']' };
                    format!("{open}{}, {}{close}", num(a_of(lo)), num(a_of(hi)))
                }
            },
            Bounds::Whole(lo, u64::MAX) => format!(">= {lo}"),
            Bounds::Whole(lo, hi) => format!("{lo} to {hi}"),
        };
        match self.list {
            Some(l) if l.increasing => format!("{text}, increasing"),
            _ => text,
        }
    }

    /// The list length as the `valid` texts write it (`1 to 64`, `up to 8`); empty for a single
    /// value.
    pub fn length_text(&self) -> String {
        match self.list {
            Some(l) if l.min == 0 => format!("up to {}", l.max),
            Some(l) => format!("{} to {}", l.min, l.max),
            None => String::new(),
        }
    }

    /// What every value must be, for an error message: `between 1 and 1024`, `in [0, 1)`,
    /// `> 0`.
    pub fn phrase(&self) -> String {
        match self.bounds {
            Bounds::Whole(lo, u64::MAX) => format!(">= {lo}"),
            Bounds::Whole(lo, hi) => format!("between {lo} and {hi}"),
            Bounds::Real(End::Unbounded, End::Unbounded) => "a finite number".to_string(),
            Bounds::Real(End::Unbounded, _) | Bounds::Real(_, End::Unbounded) => {
                Domain::real_bounds_text(self.bounds)
            }
            Bounds::Real(..) => format!("in {}", Domain::real_bounds_text(self.bounds)),
        }
    }

    /// [`Domain::bounds_text`] of one value.
    fn real_bounds_text(bounds: Bounds) -> String {
        Domain { bounds, list: None }.bounds_text()
    }
}

/// The number of a finite end (0 for an absent one, never used).
fn a_of(end: End) -> f64 {
    match end {
        End::Closed(a) | End::Open(a) => a,
        End::Unbounded => 0.0,
    }
}
