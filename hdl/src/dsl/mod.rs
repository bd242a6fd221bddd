//! The builder API designs are written with: generator-style, ordinary Rust
//! functions and loops create ports, logic, registers, memories and instances.
//!
//! ```
//! use hdl::{ModuleBuilder, ResetPolarity};
//!
//! fn accumulator(width: u32) -> Result<hdl::Module, hdl::HdlError> {
//!     let mut m = ModuleBuilder::new("accumulator");
//!     let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
//!     let x = m.input("x", width);
//!     let en = m.input("en", 1);
//!     let acc = m.reg(clk, "acc", width);
//!     let sum = m.add_wrap(acc, x);
//!     m.set_next(acc, sum);
//!     m.set_enable(acc, en);
//!     m.output("y", acc);
//!     m.finish()
//! }
//! assert!(accumulator(32).is_ok());
//! ```

mod builder;
mod bundles;
mod hier;
mod ops;
mod state;

pub use builder::{Domain, ModuleBuilder, Signal, MAX_WIDTH};
pub use bundles::{AxiLiteConfig, AxiLiteSlave, AxisBeat, AxisConfig, AxisIn, AxisOut};
pub use hier::Instance;
pub use ops::bits_for;
pub use state::Memory;
