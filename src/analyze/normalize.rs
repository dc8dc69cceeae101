//! Answer normalisation: which sampled answers count as "the same" in a vote.
//!
//! Majority voting compares final answers as strings, so "1,000", "1000" and " 1000 " would split
//! the vote unless they are normalised first. The rules (applied in this order, when
//! [`Normalization::Standard`] is on):
//!
//! 1. trim surrounding whitespace and collapse inner runs of whitespace to one space;
//! 2. lower-case (Unicode);
//! 3. an empty result is a *missing* answer;
//! 4. a number — optional sign, digits with optional thousands separators (`1,234,567`, commas
//!    only between groups of three), an optional decimal part (`0.5`, `.5`, `2.50`), or a simple
//!    fraction of two integers (`1/2`, `-3/4`) — is replaced by its exact reduced rational, so
//!    `1/2`, `0.5` and `0.50` are one answer and `2/1`, `2.0`, `2` another. Numbers whose numerator
//!    or denominator do not fit in `i128` are kept as strings.
//!
//! Nothing else is rewritten (no unit stripping, no LaTeX): a rule that silently merged different
//! answers would inflate maj@k. [`Normalization::Off`] keeps the raw string, with only an empty
//! string treated as missing.
//!
//! A missing or unparseable answer is [`AnswerKey::Missing`], which never votes together with
//! another answer (not even another missing one).
use std::fmt::Write;

use serde::{Deserialize, Serialize};

/// Whether to normalise answers before comparing them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Normalization {
    /// The documented rules of this module.
    #[default]
    Standard,
    /// Exact string comparison (empty string still counts as missing).
    Off,
}

/// A normalised answer: a value that can be tallied, or a missing answer that matches nothing.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AnswerKey {
    /// A comparable value.
    Value(String),
    /// No answer (absent, null, empty or a harness's "invalid" marker).
    Missing,
}

/// Normalise one raw answer; `None` (absent or null) is [`AnswerKey::Missing`].
///
/// Cost: O(len) per answer.
pub fn normalize_answer(raw: Option<&str>, mode: Normalization) -> AnswerKey {
    let mut key = String::new();
    if normalize_into(raw, mode, &mut key) {
        AnswerKey::Value(key)
    } else {
        AnswerKey::Missing
    }
}

/// [`normalize_answer`] into a reusable buffer: returns false for a missing answer, else true
/// with the key of [`AnswerKey::Value`] in `key` (replacing its contents). Readers use it to
/// look answers up without allocating a `String` per sample.
///
/// Cost: O(len); allocates only for non-ASCII answers (Unicode lower-casing).
pub fn normalize_into(raw: Option<&str>, mode: Normalization, key: &mut String) -> bool {
    key.clear();
    let Some(raw) = raw else {
        return false;
    };
    match mode {
        Normalization::Off => {
            key.push_str(raw);
            !raw.is_empty()
        }
        Normalization::Standard => {
            for (i, word) in raw.split_whitespace().enumerate() {
                if i > 0 {
                    key.push(' ');
                }
                key.push_str(word);
            }
            if key.is_empty() {
                return false;
            }
            if key.is_ascii() {
                key.make_ascii_lowercase();
            } else {
                *key = key.to_lowercase();
            }
            match parse_number(key) {
                Some((num, 1)) => {
                    key.clear();
                    let _ = write!(key, "{num}");
                }
                Some((num, den)) => {
                    key.clear();
                    let _ = write!(key, "{num}/{den}");
                }
                None => {}
            }
            true
        }
    }
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

/// Reduce num/den to lowest terms with a positive denominator.
fn reduce(num: i128, den: i128) -> Option<(i128, i128)> {
    if den == 0 {
        return None;
    }
    let g = gcd(num, den).max(1);
    let (mut n, mut d) = (num / g, den / g);
    if d < 0 {
        n = n.checked_neg()?;
        d = d.checked_neg()?;
    }
    Some((n, d))
}

/// Parse an integer with optional thousands separators (digits only, no sign; no allocation).
fn parse_integer_part(s: &str) -> Option<i128> {
    if s.contains(',') {
        let mut groups = s.split(',');
        let first_ok = groups.next().is_some_and(|g| (1..=3).contains(&g.len()));
        if !first_ok || !groups.all(|g| g.len() == 3) {
            return None;
        }
    }
    let mut value = 0i128;
    let mut digits = 0usize;
    for b in s.bytes().filter(|&b| b != b',') {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
        digits += 1;
    }
    (digits > 0).then_some(value)
}

/// Parse a decimal or simple fraction into a reduced rational (num, den).
fn parse_number(s: &str) -> Option<(i128, i128)> {
    if let Some((a, b)) = s.split_once('/') {
        let (an, ad) = parse_decimal(a.trim())?;
        let (bn, bd) = parse_decimal(b.trim())?;
        if ad != 1 || bd != 1 {
            return None;
        }
        return reduce(an, bn);
    }
    parse_decimal(s)
}

fn parse_decimal(s: &str) -> Option<(i128, i128)> {
    let (negative, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (int_part, frac_part) = match body.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (body, None),
    };
    let int_value = if int_part.is_empty() {
        if frac_part.is_none_or(str::is_empty) {
            return None;
        }
        0
    } else {
        parse_integer_part(int_part)?
    };
    let (mut num, mut den) = (int_value, 1i128);
    if let Some(f) = frac_part {
        if !f.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        for b in f.bytes() {
            num = num.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
            den = den.checked_mul(10)?;
        }
    }
    if negative {
        num = num.checked_neg()?;
    }
    reduce(num, den)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> AnswerKey {
        normalize_answer(Some(s), Normalization::Standard)
    }

    #[test]
    fn numbers_in_different_spellings_agree() {
        assert_eq!(key("1/2"), key("0.5"));
        assert_eq!(key("0.50"), key(" .5 "));
        assert_eq!(key("2"), key("2.0"));
        assert_eq!(key("4/2"), key("2"));
        assert_eq!(key("1,234,567"), key("1234567"));
        assert_eq!(key("-3/4"), key("-0.75"));
        assert_eq!(key("3/-4"), key("-0.75"));
        assert_eq!(key("+7"), key("7"));
    }

    #[test]
    fn text_is_trimmed_collapsed_and_lowercased() {
        assert_eq!(key("  Paris \n"), key("paris"));
        assert_eq!(key("New   York"), key("new york"));
        assert_ne!(
            key("1,23"),
            key("123"),
            "malformed thousands separators are not merged"
        );
        assert_ne!(key("1/0"), key("1"));
    }

    #[test]
    fn missing_answers() {
        assert_eq!(key("   "), AnswerKey::Missing);
        assert_eq!(
            normalize_answer(None, Normalization::Standard),
            AnswerKey::Missing
        );
        assert_eq!(
            normalize_answer(Some(""), Normalization::Off),
            AnswerKey::Missing
        );
    }

    #[test]
    fn off_compares_raw_strings() {
        let a = normalize_answer(Some("0.5"), Normalization::Off);
        let b = normalize_answer(Some("1/2"), Normalization::Off);
        assert_ne!(a, b);
    }

    #[test]
    fn huge_numbers_fall_back_to_strings() {
        let s = "123456789012345678901234567890123456789012345678901234567890";
        assert_eq!(key(s), AnswerKey::Value(s.to_string()));
    }
}
