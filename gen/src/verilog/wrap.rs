//! Wrapping of long concatenations: a right-hand side that is one concatenation and
//! would make its line longer than [`LINE`] characters continues on further lines,
//! broken after the commas between its top-level parts.

/// Longest line written without wrapping.
pub(crate) const LINE: usize = 100;

/// Indent of a continuation line.
const CONTINUE: &str = "        ";

/// `rhs` for a line that starts with `lead` characters of text, with line breaks
/// (and continuation indents) between the top-level parts of a concatenation when the
/// line would be longer than [`LINE`]; unchanged otherwise.
pub(crate) fn wrap_concat(lead: usize, rhs: &str) -> String {
    if lead + rhs.len() < LINE {
        return rhs.to_string();
    }
    let Some(parts) = top_level_parts(rhs) else {
        return rhs.to_string();
    };
    let mut text = String::from("{");
    let mut line = lead + 1;
    for (i, part) in parts.iter().enumerate() {
        let sep = usize::from(i > 0) * 2;
        if i > 0 && line + sep + part.len() + 1 > LINE {
            text.push_str(",\n");
            text.push_str(CONTINUE);
            line = CONTINUE.len();
        } else if i > 0 {
            text.push_str(", ");
            line += 2;
        }
        text.push_str(part);
        line += part.len();
    }
    text.push('}');
    text
}

/// The top-level parts of `rhs` if it is exactly one concatenation `{a, b, …}` of at
/// least two parts.
fn top_level_parts(rhs: &str) -> Option<Vec<&str>> {
    let inner = rhs.strip_prefix('{')?.strip_suffix('}')?;
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth -= 1;
                if depth < 0 {
                    // `{a}, {b}`: the outer braces are not one concatenation.
                    return None;
                }
            }
            ',' if depth == 0 => {
                parts.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(inner[start..].trim());
    (depth == 0 && parts.len() > 1).then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_and_other_expressions_stay_whole() {
        assert_eq!(wrap_concat(10, "{a, b}"), "{a, b}");
        let long_sum = format!("{} + c", "a".repeat(120));
        assert_eq!(wrap_concat(10, &long_sum), long_sum);
        let two = format!("{{a}} | {{{}}}", "b".repeat(120));
        assert_eq!(wrap_concat(10, &two), two, "not one concatenation");
    }

    #[test]
    fn a_long_concatenation_breaks_between_top_level_parts() {
        let parts: Vec<String> = (0..40).map(|i| format!("x[{i}]")).collect();
        let rhs = format!("{{{}, {{y, z}}, f(a, b)}}", parts.join(", "));
        let wrapped = wrap_concat(30, &rhs);
        let lines: Vec<&str> = wrapped.lines().collect();
        assert!(lines.len() > 1, "{wrapped}");
        assert!(30 + lines[0].len() <= LINE, "{wrapped}");
        for l in &lines[1..] {
            assert!(l.starts_with(CONTINUE) && l.len() <= LINE, "{wrapped}");
        }
        // Only whitespace changed, and never inside a nested part.
        let squash = |s: &str| s.split_whitespace().collect::<String>();
        assert_eq!(squash(&wrapped), squash(&rhs));
        assert!(
            wrapped.contains("{y, z}") && wrapped.contains("f(a, b)"),
            "{wrapped}"
        );
    }
}
