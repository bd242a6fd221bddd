//! Board targets: the board descriptions of `constraints/boards/` (part, clocks by role,
//! datapath width, port numbering, tuser layout, data converters) and the files
//! generated for a design on a board:
//!
//! - [`xdc`]: out-of-context timing constraints for the design's clock ports;
//! - [`vivado_tcl`]: a Vivado batch script that synthesizes the design out of context
//!   for the board's part and packages it as IP;
//! - [`register_map_markdown`], [`register_map_c_header`], [`register_map_json`]: the
//!   register map of an AXI-Lite register file, and [`register_map_python`], its
//!   Python host driver;
//! - [`write_board_design`]: the design, its manifest and these files on disk, all or
//!   nothing.
//!
//! ```no_run
//! # fn demo(top: &hdl::Module) -> Result<(), gen::GenError> {
//! use gen::board::{board_files, write_board_design, Board, ClockBinding};
//! let board = Board::named("netfpga-sume")?;
//! let design = gen::emit(top)?;
//! let manifest = gen::Manifest::new(top, &design);
//! let bindings = [
//!     ClockBinding::new("axis_aclk", "datapath"),
//!     ClockBinding::new("S_AXI_ACLK", "axil"),
//! ];
//! let files = board_files(&board, &manifest, &bindings, None)?;
//! write_board_design("out".as_ref(), &design, &manifest, &files)?;
//! # Ok(())
//! # }
//! ```

mod catalog;
mod python;
mod regmap;
mod spec;
mod tcl;
mod write;
mod xdc;

pub use catalog::{board_names, boards};
pub use python::{register_map_python, PythonHost};
pub use regmap::{register_map_c_header, register_map_json, register_map_markdown};
pub use spec::{
    fp_adder_stages, Board, BoardClock, BoardPort, Converter, ConverterKind, Family, PortKind,
    TuserField, TuserLayout, FP_ADDER_5_STAGES_MAX_MHZ,
};
pub use tcl::vivado_tcl;
pub use write::{board_files, register_map_files, write_board_design};
pub use xdc::{xdc, ClockBinding};
