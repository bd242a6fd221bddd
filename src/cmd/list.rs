//! `wirespeed list`: the catalog's blocks with their parameters and defaults.

use crate::catalog;

/// Prints every block, its parameters, their meaning and their defaults, the
/// descriptions in one column as wide as the longest name needs.
pub fn run() {
    let blocks = catalog::blocks();
    let width = blocks
        .iter()
        .flat_map(|b| {
            let params = b.params().into_iter().map(|p| p.name.len() + 4);
            std::iter::once(b.name.len()).chain(params)
        })
        .max()
        .unwrap_or(0);
    for block in blocks {
        println!("{:<width$} {}", block.name, block.summary);
        for p in block.params() {
            let name = format!("    {}", p.name);
            println!("{name:<width$} {}; default {}", p.help, p.default);
        }
    }
}
