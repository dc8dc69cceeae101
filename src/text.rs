//! Text as it reaches a person: control characters made visible, so that a name read from a
//! file (a model name, a file name) cannot move the cursor, retitle the terminal or split a
//! message in two. Depends on nothing.
use std::path::Path;

/// `text` safe to print on a terminal: control characters (NUL, ESC, carriage return, ...) and
/// the invisible direction overrides become `\u{..}` escapes; line breaks and tabs stay.
pub fn printable(text: &str) -> String {
    escaped(text, |c| c == '\n' || c == '\t')
}

/// A path as it appears inside a message: its display form with every control character, line
/// breaks included, written as a `\u{..}` escape, so a file named `a\nb.jsonl` is one line of
/// the message that names it.
pub fn path_shown(path: &Path) -> String {
    escaped(&path.display().to_string(), |_| false)
}

fn escaped(text: &str, keep: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let invisible = matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if (c.is_control() && !keep(c)) || invisible {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_with_a_line_break_stays_on_one_line() {
        assert_eq!(
            path_shown(Path::new("a\nb\r.jsonl")),
            "a\\u{a}b\\u{d}.jsonl"
        );
        assert_eq!(printable("x\n\u{1b}[2J\ty"), "x\n\\u{1b}[2J\ty");
    }
}
