//! A compiled design: the program and the tables a [`Simulator`](crate::Simulator)
//! is made from, as the flattener and the compiler leave them, and its form in a
//! code cache.
//!
//! Compiling costs time in proportion to the flat design (every instance of every
//! module), where a Verilog emitter writes each module once: a design of many
//! identical instances (an adder tree) compiles in milliseconds, about what
//! loading its cached Verilator model takes. So a [`CodeCache`](crate::CodeCache)
//! keeps what a compile made, keyed by the design's contents (see
//! [`design_key`](crate::design_key)) and the compiler's sources, and a design
//! simulated again starts from it without flattening or compiling.
//!
//! An entry is a magic string, the payload's length, its checksum and the payload
//! (the [`Built`] serialized by `postcard`): a file that is truncated or changed,
//! or was written by another format, is a miss, compiled afresh and replaced. The
//! checksum is the code cache's 64-bit one ([`checksum`]), as for compiled
//! engines: it guards against damage, not against a hostile writer; like the
//! cache's compiled engines, whose machine code the simulator runs, its programs
//! are trusted to be the ones this compiler wrote.

use crate::clock::MAX_DOMAINS;
use crate::compile::{compile, Program};
use crate::cones::domain_bit;
use crate::demand;
use crate::error::SimError;
use crate::flatten::FlatDesign;
use crate::instr::Span;
use crate::jit::{checksum, framed, unframed, Entry};
use crate::sim::{DomainInfo, NamedNet, PortInfo};
use crate::wide::last_mask;
use hdl::ir::{Direction, PortKind, ResetPolarity};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What a compile of one design made. A clone shares the program and the names.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Built {
    /// Name of the top module.
    pub name: String,
    /// The program (shared with the thread that stores it, see [`Store`]).
    pub prog: Arc<Program>,
    /// The top module's ports, in order.
    pub ports: Vec<PortInfo>,
    /// Every named net of the hierarchy (shared like the program).
    pub named: Arc<[NamedNet]>,
    /// The top module's clock domains.
    pub domains: Vec<DomainInfo>,
}

/// A compiled program on its way into a code cache: its entry and the design,
/// serialized and written by the compiled engine's background thread before it
/// builds the engine, so that a first start waits neither for the serialization
/// nor for the file system. The program and the names, the bulk of the design,
/// are shared with the simulator rather than copied.
pub(crate) struct Store {
    entry: Entry,
    built: Built,
}

impl Store {
    /// `built`, for `entry` (a clone that shares its program and names).
    pub fn new(entry: Entry, built: &Built) -> Store {
        let built = built.clone();
        Store { entry, built }
    }

    /// Serializes the design and writes the entry; a cache that cannot be written
    /// only makes the next start a first one too.
    pub fn write(self) {
        let _ = self.entry.write(&self.built.to_bytes());
    }
}

/// The first bytes of a stored [`Built`] (with the format's version).
const MAGIC: &[u8; 8] = b"wsprog02";

impl Built {
    /// Compiles `flat`, whose net names move into the result.
    pub fn compile(mut flat: FlatDesign) -> Result<Built, SimError> {
        if flat.domains.len() > MAX_DOMAINS {
            return Err(SimError::TooManyDomains {
                module: flat.name.clone(),
                count: flat.domains.len(),
            });
        }
        let mut prog = compile(&flat)?;
        let outputs: Vec<Span> = flat
            .ports
            .iter()
            .filter(|p| p.direction == Direction::Output)
            .map(|p| prog.nets[p.net.0 as usize])
            .filter(|s| s.off != crate::state::NONE)
            .collect();
        prog.code.outputs = demand::output_steps(&prog.code, &outputs, prog.init.len());
        let span = |n: hdl::ir::NetId| prog.nets[n.0 as usize];
        let ports: Vec<PortInfo> = flat
            .ports
            .iter()
            .map(|p| PortInfo {
                name: p.name.clone(),
                width: flat.nets[p.net.0 as usize].width,
                direction: p.direction,
                kind: p.kind,
                span: span(p.net),
                cone: prog.cones[p.net.0 as usize],
                settable: p.direction == Direction::Input && p.kind != PortKind::Clock,
                above: !last_mask(flat.nets[p.net.0 as usize].width),
            })
            .collect();
        let named: Vec<NamedNet> = flat
            .nets
            .iter_mut()
            .enumerate()
            .filter_map(|(i, n)| {
                n.name.take().map(|name| NamedNet {
                    name,
                    width: n.width,
                    span: prog.nets[i],
                })
            })
            .collect();
        let domains: Vec<DomainInfo> = flat
            .domains
            .iter()
            .enumerate()
            .map(|(i, d)| DomainInfo {
                name: d.name.clone(),
                clock: span(d.clock),
                reset: d.reset.map(|r| {
                    let level = (d.polarity == ResetPolarity::ActiveHigh) as u64;
                    (span(r).off, level)
                }),
                cone: domain_bit(i as u32) | prog.cones[d.clock.0 as usize],
                reset_cone: d.reset.map_or(0, |r| prog.cones[r.0 as usize]),
            })
            .collect();
        Ok(Built {
            name: flat.name,
            prog: Arc::new(prog),
            ports,
            named: named.into(),
            domains,
        })
    }

    /// The bytes a code cache stores: magic, payload length, checksum, payload.
    pub fn to_bytes(&self) -> Vec<u8> {
        let payload = postcard::to_stdvec(self).expect("every field serializes");
        framed(MAGIC, &checksum(&payload).to_le_bytes(), &payload)
    }

    /// The design [`to_bytes`](Self::to_bytes) stored; `None` when the bytes are
    /// not such a design (truncated, changed, or of another format).
    pub fn from_bytes(bytes: &[u8]) -> Option<Built> {
        let (sum, payload) = unframed::<8>(bytes, MAGIC)?;
        if checksum(payload) != u64::from_le_bytes(sum) {
            return None;
        }
        let mut built: Built = postcard::from_bytes(payload).ok()?;
        Arc::get_mut(&mut built.prog)
            .expect("a program just read is not shared yet")
            .code
            .link_kernels();
        Some(built)
    }
}
