//! Port, net and memory access of the [`Simulator`]: by name (checked each call) or
//! through pre-resolved [`PortHandle`]s (the fast path), as `Bits`, `u64` or raw
//! little-endian `u64` words.
//!
//! Writes check the value fits: any 1 bit at or above the port's width is an error
//! naming the port (a `Bits` of a larger width whose high bits are zero is accepted).
//! Setting an input only marks the logic dirty; reads settle it first.

use crate::error::SimError;
use crate::instr::Span;
use crate::sim::{PortInfo, Simulator};
use crate::wide::{last_mask, words};
use hdl::ir::Direction;
use hdl::Bits;

/// A pre-resolved top-level port, from [`Simulator::port_handle`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortHandle {
    sim: u64,
    index: u32,
}

/// Whether `value` (little-endian words) fits `width` bits.
#[inline]
fn fits(width: u32, value: &[u64]) -> bool {
    let n = words(width);
    !(value.iter().skip(n).any(|w| *w != 0)
        || value.get(n - 1).is_some_and(|w| w & !last_mask(width) != 0))
}

/// Checks `value` (little-endian words) fits `width` bits.
fn check_fits(name: &str, width: u32, value: &[u64]) -> Result<(), SimError> {
    if !fits(width, value) {
        return Err(SimError::ValueTooWide {
            name: name.to_string(),
            width,
        });
    }
    Ok(())
}

/// Why port `p` cannot be set: it is an output or a clock (out of line, so the
/// setters' common path stays short).
#[cold]
#[inline(never)]
fn not_settable(p: &PortInfo) -> SimError {
    if p.direction != Direction::Input {
        SimError::NotAnInput(p.name.clone())
    } else {
        SimError::SetClock(p.name.clone())
    }
}

/// A value with a 1 at or above port `p`'s width (out of line).
#[cold]
#[inline(never)]
fn too_wide(p: &PortInfo) -> SimError {
    SimError::ValueTooWide {
        name: p.name.clone(),
        width: p.width,
    }
}

fn to_u64(name: &str, width: u32, value: &[u64]) -> Result<u64, SimError> {
    if value.iter().skip(1).any(|w| *w != 0) {
        return Err(SimError::NotU64 {
            name: name.to_string(),
            width,
        });
    }
    Ok(value.first().copied().unwrap_or(0))
}

impl Simulator {
    fn port_by_name(&self, name: &str) -> Result<usize, SimError> {
        self.port_index
            .get(name)
            .map(|i| *i as usize)
            .ok_or_else(|| SimError::UnknownPort(name.to_string()))
    }

    #[inline]
    fn port_by_handle(&self, h: PortHandle) -> Result<usize, SimError> {
        if h.sim != self.id || h.index as usize >= self.ports.len() {
            return Err(SimError::ForeignHandle);
        }
        Ok(h.index as usize)
    }

    /// Writes `value` to input port `i` after the checks every setter shares; the
    /// logic reading it needs settling again only if the value changed. A port of
    /// one word given at most one word takes the short path here; wider ones, and
    /// every error, go out of line, so that this path needs few registers (and its
    /// callers save few).
    #[inline]
    fn write_port(&mut self, i: usize, value: &[u64]) -> Result<(), SimError> {
        let p = &self.ports[i];
        if !p.settable || p.span.words != 1 || value.len() > 1 {
            return self.write_words(i, value);
        }
        let v = value.first().copied().unwrap_or(0);
        if v & p.above != 0 {
            return Err(too_wide(p));
        }
        let (off, cone) = (p.span.off, p.cone);
        let old = std::mem::replace(&mut self.vals[off as usize], v);
        self.wrote(i, cone, old ^ v);
        Ok(())
    }

    /// [`write_port`](Self::write_port) for a port of several words given exactly
    /// its words, the value fitting: a loop and no more. Every other case (fewer
    /// or more words, an error) goes on out of line.
    #[inline(never)]
    fn write_words(&mut self, i: usize, value: &[u64]) -> Result<(), SimError> {
        let p = &self.ports[i];
        let Span { off, words } = p.span;
        let fits_exactly = p.settable
            && value.len() == words as usize
            && value.last().is_some_and(|top| top & p.above == 0);
        if !fits_exactly {
            return self.write_other(i, value);
        }
        let cone = p.cone;
        let dst = &mut self.vals[off as usize..(off + words) as usize];
        // The differences or-ed without a branch per word.
        let diff = (dst.iter_mut().zip(value))
            .fold(0, |diff, (d, &v)| diff | (std::mem::replace(d, v) ^ v));
        self.wrote(i, cone, diff);
        Ok(())
    }

    /// [`write_port`](Self::write_port) for a value given in fewer words than the
    /// port has (missing words are 0) or in more, and the errors of every write.
    #[cold]
    #[inline(never)]
    fn write_other(&mut self, i: usize, value: &[u64]) -> Result<(), SimError> {
        let p = &self.ports[i];
        if !p.settable {
            return Err(not_settable(p));
        }
        let (Span { off, words }, cone) = (p.span, p.cone);
        if !fits(p.width, value) {
            return Err(too_wide(p));
        }
        let dst = &mut self.vals[off as usize..(off + words) as usize];
        let given = value.len().min(dst.len());
        let (set, missing) = dst.split_at_mut(given);
        let mut diff = 0;
        for (d, &v) in set.iter_mut().zip(&value[..given]) {
            diff |= *d ^ v;
            *d = v;
        }
        for d in missing {
            diff |= std::mem::take(d);
        }
        self.wrote(i, cone, diff);
        Ok(())
    }

    /// After a write of port `i` whose words differ from the old ones in the bits
    /// of `diff`: when any differs, marks the logic of the port's `cone` dirty and
    /// tells the compiled engine.
    #[inline]
    fn wrote(&mut self, i: usize, cone: u64, diff: u64) {
        if diff != 0 {
            self.touch(cone);
            self.changed(i);
        }
    }

    /// The settled words of port `i` (an input as set; an output after settling
    /// the logic it depends on).
    #[inline]
    fn read_port(&mut self, i: usize) -> &[u64] {
        if self.ports[i].direction == Direction::Output {
            self.settle_outputs();
        }
        let Span { off, words } = self.ports[i].span;
        &self.vals[off as usize..(off + words) as usize]
    }

    /// A handle to port `name`, for the fast `*_handle` accessors.
    pub fn port_handle(&self, name: &str) -> Result<PortHandle, SimError> {
        Ok(PortHandle {
            sim: self.id,
            index: self.port_by_name(name)? as u32,
        })
    }

    /// Sets input `name` (data or reset; not a clock, not an output).
    pub fn set(&mut self, name: &str, value: &Bits) -> Result<(), SimError> {
        let i = self.port_by_name(name)?;
        self.write_port(i, &value.to_words())
    }

    /// Sets input `name` to `value`.
    pub fn set_u64(&mut self, name: &str, value: u64) -> Result<(), SimError> {
        let i = self.port_by_name(name)?;
        self.write_port(i, &[value])
    }

    /// The value of port `name` (inputs as set, outputs settled).
    pub fn get(&mut self, name: &str) -> Result<Bits, SimError> {
        let i = self.port_by_name(name)?;
        let width = self.ports[i].width;
        Ok(Bits::from_words(self.read_port(i), width))
    }

    /// The value of port `name` as `u64`; an error if it has a 1 above bit 63.
    pub fn get_u64(&mut self, name: &str) -> Result<u64, SimError> {
        let i = self.port_by_name(name)?;
        let (name, width) = (self.ports[i].name.clone(), self.ports[i].width);
        to_u64(&name, width, self.read_port(i))
    }

    /// Sets the input of handle `h`.
    pub fn set_handle(&mut self, h: PortHandle, value: &Bits) -> Result<(), SimError> {
        let i = self.port_by_handle(h)?;
        self.write_port(i, &value.to_words())
    }

    /// Sets the input of handle `h` to `value`.
    pub fn set_handle_u64(&mut self, h: PortHandle, value: u64) -> Result<(), SimError> {
        let i = self.port_by_handle(h)?;
        self.write_port(i, &[value])
    }

    /// Sets the input of handle `h` from little-endian words (missing words are 0).
    #[inline]
    pub fn set_words(&mut self, h: PortHandle, value: &[u64]) -> Result<(), SimError> {
        let i = self.port_by_handle(h)?;
        self.write_port(i, value)
    }

    /// The value of the port of handle `h`.
    pub fn get_handle(&mut self, h: PortHandle) -> Result<Bits, SimError> {
        let i = self.port_by_handle(h)?;
        let width = self.ports[i].width;
        Ok(Bits::from_words(self.read_port(i), width))
    }

    /// The value of the port of handle `h` as `u64`; an error if it has a 1 above bit 63.
    pub fn get_handle_u64(&mut self, h: PortHandle) -> Result<u64, SimError> {
        let i = self.port_by_handle(h)?;
        let Span { off, words } = self.ports[i].span;
        if self.ports[i].direction == Direction::Output {
            self.settle_outputs();
        }
        let value = &self.vals[off as usize..(off + words) as usize];
        if words == 1 {
            return Ok(value[0]);
        }
        to_u64(&self.ports[i].name, self.ports[i].width, value)
    }

    /// The words of the port of handle `h`, as [`get_words`](Self::get_words) gives
    /// them, when reading them needs no settle first (an input, or an output whose
    /// logic is settled); `None` otherwise, and for a foreign handle. The short
    /// path of a test bench's port read: it calls nothing, so its caller saves no
    /// registers and sets up no frame for it.
    #[inline]
    pub fn settled_words(&self, h: PortHandle) -> Option<&[u64]> {
        let p = self
            .ports
            .get(h.index as usize)
            .filter(|_| h.sim == self.id)?;
        if p.direction == Direction::Output && self.dirty_out != 0 {
            return None;
        }
        let Span { off, words } = p.span;
        self.vals.get(off as usize..(off + words) as usize)
    }

    /// The settled value of the port of handle `h` as `ceil(width / 64)` little-endian
    /// words (bits above the width are 0).
    #[inline]
    pub fn get_words(&mut self, h: PortHandle) -> Result<&[u64], SimError> {
        let i = self.port_by_handle(h)?;
        Ok(self.read_port(i))
    }

    fn named_net(&mut self, name: &str) -> Result<(u32, Span), SimError> {
        let i = self
            .named_index(name)
            .ok_or_else(|| SimError::UnknownNet(name.to_string()))?;
        let n = &self.named[i];
        Ok((n.width, n.span))
    }

    /// The settled value of any named net, by hierarchical name (`u_fifo.count`).
    pub fn peek(&mut self, name: &str) -> Result<Bits, SimError> {
        let (width, Span { off, words }) = self.named_net(name)?;
        self.settle();
        Ok(Bits::from_words(
            &self.vals[off as usize..(off + words) as usize],
            width,
        ))
    }

    /// [`peek`](Self::peek) as `u64`; an error if the value has a 1 above bit 63.
    pub fn peek_u64(&mut self, name: &str) -> Result<u64, SimError> {
        let (width, Span { off, words }) = self.named_net(name)?;
        self.settle();
        to_u64(
            name,
            width,
            &self.vals[off as usize..(off + words) as usize],
        )
    }

    fn mem_word_range(&self, name: &str, addr: u64) -> Result<(usize, usize, u32), SimError> {
        let i = self
            .mem_index
            .get(name)
            .ok_or_else(|| SimError::UnknownMemory(name.to_string()))?;
        let m = &self.prog.mems[*i as usize];
        if addr >= m.depth as u64 {
            return Err(SimError::AddressOutOfRange {
                mem: name.to_string(),
                addr,
                depth: m.depth,
            });
        }
        let n = m.words as usize;
        let at = m.base + addr as usize * n;
        Ok((at, at + n, m.width))
    }

    /// Word `addr` of memory `name` (hierarchical name, `u_fifo.ram`).
    pub fn peek_mem(&self, name: &str, addr: u64) -> Result<Bits, SimError> {
        let (from, to, width) = self.mem_word_range(name, addr)?;
        Ok(Bits::from_words(&self.mem[from..to], width))
    }

    /// Overwrites word `addr` of memory `name` (read ports see it at their next edge).
    pub fn poke_mem(&mut self, name: &str, addr: u64, value: &Bits) -> Result<(), SimError> {
        let (from, to, width) = self.mem_word_range(name, addr)?;
        let v = value.to_words();
        check_fits(name, width, &v)?;
        for (k, d) in self.mem[from..to].iter_mut().enumerate() {
            *d = v.get(k).copied().unwrap_or(0);
        }
        Ok(())
    }
}
