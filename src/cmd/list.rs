//! `wirespeed list`: the catalog's blocks with their parameters and defaults.

use crate::catalog;

/// Prints every block, its parameters, their meaning and their defaults.
pub fn run() {
    for block in catalog::blocks() {
        println!("{:<16} {}", block.name, block.summary);
        for p in block.params() {
            println!("    {:<16} {}; default {}", p.name, p.help, p.default);
        }
    }
}
