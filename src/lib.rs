#![doc = include_str!("../README.md")]
//! The `wirespeed` facade: re-exports the crates and holds the command line's catalog.

pub mod catalog;
pub mod cmd;
pub mod interrupt;

pub use gen;
pub use hdl;
pub use sim;

/// `count` and `noun`, plural when `count` is not 1 ("1 Verilog file", "17 Verilog
/// files").
pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("{count} {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// The error and its causes on one line, `a: b: c`, leaving out a cause whose text
/// its parent's message already shows (many error types print their source).
pub fn error_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.is_empty() {
            line = text;
        } else if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot write `x`: {source}")]
    struct Shows {
        source: std::io::Error,
    }

    #[test]
    fn a_cause_already_shown_is_not_repeated() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = anyhow::Error::new(Shows { source: io() }).context("gen counter");
        assert_eq!(
            error_line(&e),
            "gen counter: cannot write `x`: no such file"
        );
        let e = anyhow::Error::new(io()).context("cannot open `y`");
        assert_eq!(error_line(&e), "cannot open `y`: no such file");
    }
}
