//! Reusable blocks written with the builder: FIFOs, clock-domain crossings, the
//! AXI-Stream skid buffer, the AXI-Lite register file and a counter.

pub mod axil_regfile;
pub mod cdc;
pub mod count_action;
pub mod counter;
pub mod fifo;
pub mod fp;
pub mod skid;
