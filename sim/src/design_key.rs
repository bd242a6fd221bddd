//! The digest of a design's contents: the key of its compiled program in a code
//! cache (see [`built`](crate::built)).
//!
//! It covers everything flattening and compiling read: every module's name,
//! ports, nets (with their drivers and constants), clock domains, registers,
//! memories (with their contents), parameters and port summary, and every
//! instance's name, connections and module, not where the generator built them
//! (source locations do not affect a simulation). A module instantiated many
//! times is digested once: an instance contributes its module's digest.

use crate::jit::ShaWriter;
use hdl::ir::ModuleData;
use hdl::Module;
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};

/// The SHA-256 of `top`'s contents, its instances' modules included.
pub(crate) fn design_digest(top: &Module) -> [u8; 32] {
    digest(top, &mut Vec::new())
}

/// The digest of `m`, from `memo` (the modules digested so far, by identity)
/// when it is there.
fn digest(m: &Module, memo: &mut Vec<(Module, [u8; 32])>) -> [u8; 32] {
    if let Some((_, d)) = memo.iter().find(|(seen, _)| seen.ptr_eq(m)) {
        return *d;
    }
    let ModuleData {
        name,
        ports,
        nets,
        domains,
        regs,
        mems,
        instances,
        summary,
        parameters,
        location: _,
    } = &**m;
    let mut sha = ShaWriter(Sha256::new());
    (name, ports, nets, domains, regs, mems).hash(&mut sha);
    (summary, parameters).hash(&mut sha);
    sha.write_usize(instances.len());
    for inst in instances {
        let child = digest(&inst.module, memo);
        (&inst.name, &inst.connections, child).hash(&mut sha);
    }
    let d: [u8; 32] = sha.0.finalize().into();
    memo.push((m.clone(), d));
    d
}
