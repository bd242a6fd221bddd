//! Floating-point blocks: the IEEE-754 adder and the adder tree PANAMA sums with.

pub mod add;
pub mod format;
pub mod tree;

pub use add::{fp_add, FpAddConfig};
pub use format::FpFormat;
pub use tree::{fp_add_tree, FpTreeConfig};
