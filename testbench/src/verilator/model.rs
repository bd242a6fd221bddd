//! The safe API around one Verilated model instance.

use std::ffi::{c_int, c_void, CString};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::library::Loaded;
use super::slot::{Layout, Slot};
use super::VerilatorDesign;
use super::{build, BridgeError, BuildOptions, BuildReport, PortDirection, PortInfo};

/// One Verilated model instance, driven from Rust.
///
/// Ports are addressed by their index in [`VerilatorDesign::ports`] (see
/// [`VerilatorModel::port_index`]). Values are little-endian `u64` words: word 0 holds bits
/// 63..0. Inputs are masked to the port width when set.
pub struct VerilatorModel {
    handle: NonNull<c_void>,
    loaded: Arc<Loaded>,
    /// Where each port's value lives in this instance, by port index.
    slots: Vec<Slot>,
    report: BuildReport,
}

// SAFETY: the handle points to a heap object (`WsModel`: its own VerilatedContext, model
// and VCD writer) owned exclusively by this value; nothing else references it, but the
// slots, which point into it and are used only through this value. Verilator
// models are single-threaded objects but not bound to a thread: per-thread state
// (message queues) is flushed at the end of every `eval`, and the VCD writer runs on the
// calling thread (no `--trace-threads`). So moving the value to another thread between
// calls is sound. It is not `Sync`: every call needs exclusive access.
unsafe impl Send for VerilatorModel {}

impl VerilatorModel {
    /// Builds (or takes from the cache) and loads `design`, and creates one instance.
    ///
    /// Never panics on tool problems: a missing `verilator`, a Verilog error or a C++
    /// error comes back as a [`BridgeError`] carrying the tool's own message.
    pub fn build(design: &VerilatorDesign, options: &BuildOptions) -> Result<Self, BridgeError> {
        let t0 = Instant::now();
        let built = build::obtain_library(design, options)?;
        let build_time = t0.elapsed();
        let t1 = Instant::now();
        let loaded = Arc::new(Loaded::open(&built.library, &design.ports)?);
        let report = BuildReport {
            cache_hit: built.cache_hit,
            runtime_cache_hit: built.runtime_cache_hit,
            build_time,
            load_time: Duration::ZERO,
            library: built.library,
        };
        let mut model = Self::instantiate(loaded, report)?;
        model.report.load_time = t1.elapsed();
        Ok(model)
    }

    /// A fresh instance (initial state) of the same design, sharing the loaded library.
    /// Its report is a cache hit with zero build time.
    pub fn new_instance(&self) -> Result<Self, BridgeError> {
        let t = Instant::now();
        let report = BuildReport {
            cache_hit: true,
            runtime_cache_hit: None,
            build_time: Duration::ZERO,
            load_time: Duration::ZERO,
            library: self.loaded.path.clone(),
        };
        let mut model = Self::instantiate(Arc::clone(&self.loaded), report)?;
        model.report.load_time = t.elapsed();
        Ok(model)
    }

    fn instantiate(loaded: Arc<Loaded>, report: BuildReport) -> Result<Self, BridgeError> {
        // SAFETY: `create` takes no arguments and returns an owned object or null.
        let raw = unsafe { (loaded.api.create)() };
        let handle = NonNull::new(raw).ok_or(BridgeError::CreateFailed)?;
        let mut model = Self {
            handle,
            loaded,
            slots: Vec::new(),
            report,
        };
        model.slots = (0..model.loaded.ports.len())
            .map(|i| model.slot(i))
            .collect::<Result<_, _>>()?;
        Ok(model)
    }

    /// Where port `index` lives in this instance, as the shim gives its address.
    fn slot(&self, index: usize) -> Result<Slot, BridgeError> {
        let p = &self.loaded.ports[index];
        // SAFETY: `handle` is live; `index` is a port index (the shim returns null for
        // any other).
        let addr = unsafe { (self.loaded.api.port_addr)(self.handle.as_ptr(), index as u32) };
        let addr = NonNull::new(addr.cast::<u8>()).ok_or_else(|| BridgeError::Mismatch {
            path: self.loaded.path.clone(),
            reason: format!("the shim gave no address for port {index} `{}`", p.name),
        })?;
        // SAFETY: the address is that of the port's member inside the model `handle`
        // owns, which lives on the heap, never moves, and is destroyed only in `drop`,
        // after the last use of any slot; `Loaded::open` checked that the member's size
        // is the layout's. Slots are used only through `&self`/`&mut self` of this
        // value, which is not `Sync`, between calls into the model, so no C++ code runs
        // while one is read or written.
        let input = p.direction == PortDirection::In;
        Ok(unsafe { Slot::new(addr, Layout::of(p.width), input) })
    }

    /// How this model was obtained: cache hit or not, build and load times.
    pub fn report(&self) -> &BuildReport {
        &self.report
    }

    /// The port list the model was built with.
    pub fn ports(&self) -> &[PortInfo] {
        &self.loaded.ports
    }

    /// Index of the port called `name`.
    pub fn port_index(&self, name: &str) -> Result<usize, BridgeError> {
        self.loaded
            .ports
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| BridgeError::UnknownPort(name.to_string()))
    }

    fn port(&self, index: usize) -> Result<&PortInfo, BridgeError> {
        self.loaded
            .ports
            .get(index)
            .ok_or_else(|| BridgeError::PortIndex {
                index,
                count: self.loaded.ports.len(),
            })
    }

    fn input(&self, index: usize) -> Result<&PortInfo, BridgeError> {
        let p = self.port(index)?;
        match p.direction {
            PortDirection::In => Ok(p),
            PortDirection::Out => Err(BridgeError::NotAnInput(p.name.clone())),
        }
    }

    /// Drives input `port` with `words` (little-endian `u64` words; missing high words are
    /// zero, bits above the port width are ignored). Takes effect at the next eval.
    pub fn set(&mut self, port: usize, words: &[u64]) -> Result<(), BridgeError> {
        match self.slots.get(port) {
            Some(slot) if slot.input() && words.len() <= slot.words64() => {
                slot.write(words);
                Ok(())
            }
            _ => Err(self.refused_set(port, words.len())),
        }
    }

    /// Why [`set`](Self::set) of `given` words refused `port` (out of line, so that a
    /// write stays short).
    #[cold]
    #[inline(never)]
    fn refused_set(&self, port: usize, given: usize) -> BridgeError {
        match self.input(port) {
            Ok(p) => BridgeError::ValueTooLong {
                port: p.name.clone(),
                width: p.width,
                given,
                max: p.words64(),
            },
            Err(e) => e,
        }
    }

    /// Drives input `port` with `value` (for ports of up to 64 bits; wider ports get
    /// `value` in their low 64 bits and zero above).
    pub fn set_u64(&mut self, port: usize, value: u64) -> Result<(), BridgeError> {
        self.set(port, &[value])
    }

    /// Reads `port` (an output, or an input read back) into `out[..words]`, where `words`
    /// is `ceil(width / 64)`; `out` may be longer (the rest is left alone).
    pub fn get_into(&self, port: usize, out: &mut [u64]) -> Result<(), BridgeError> {
        match self.slots.get(port) {
            Some(slot) if out.len() >= slot.words64() => {
                slot.read(&mut out[..slot.words64()]);
                Ok(())
            }
            _ => Err(self.refused_get(port, out.len())),
        }
    }

    /// Why [`get_into`](Self::get_into) with a buffer of `given` words refused `port`
    /// (out of line, so that a read stays short).
    #[cold]
    #[inline(never)]
    fn refused_get(&self, port: usize, given: usize) -> BridgeError {
        match self.port(port) {
            Ok(p) => BridgeError::BufferTooShort {
                port: p.name.clone(),
                width: p.width,
                given,
                needed: p.words64(),
            },
            Err(e) => e,
        }
    }

    /// Maps a shim status to a result. The shim only refuses what the Rust side already
    /// checks, so a refusal means the library does not match the port list.
    fn check_rc(&self, rc: c_int, port: usize) -> Result<(), BridgeError> {
        if rc == 0 {
            return Ok(());
        }
        Err(BridgeError::Mismatch {
            path: self.loaded.path.clone(),
            reason: format!("the shim refused port {port}"),
        })
    }

    /// Reads `port` as `ceil(width / 64)` little-endian `u64` words.
    pub fn get(&self, port: usize) -> Result<Vec<u64>, BridgeError> {
        let mut out = vec![0; self.port(port)?.words64()];
        self.get_into(port, &mut out)?;
        Ok(out)
    }

    /// The low 64 bits of `port`.
    pub fn get_u64(&self, port: usize) -> Result<u64, BridgeError> {
        let mut narrow = [0u64; 1];
        if self.port(port)?.width <= 64 {
            self.get_into(port, &mut narrow)?;
            Ok(narrow[0])
        } else {
            Ok(self.get(port)?[0])
        }
    }

    /// Evaluates the model (settles combinational logic, applies clock edges).
    pub fn eval(&mut self) {
        // SAFETY: `handle` is live.
        unsafe { (self.loaded.api.eval)(self.handle.as_ptr()) }
    }

    /// `n` full cycles of the 1-bit input `clock`, run inside C++: each cycle sets it to 1
    /// and evals, then to 0 and evals. Does not write trace samples.
    pub fn step_clock(&mut self, clock: usize, n: u64) -> Result<(), BridgeError> {
        let p = self.input(clock)?;
        if p.width != 1 {
            return Err(BridgeError::NotAClock {
                port: p.name.clone(),
                width: p.width,
            });
        }
        // SAFETY: `handle` is live; `clock` is a 1-bit input, which the shim steps.
        let rc = unsafe { (self.loaded.api.step)(self.handle.as_ptr(), clock as u32, n) };
        self.check_rc(rc, clock)
    }

    /// `n` cycles of the 1-bit input `clock` in `sim::clock`'s order, run inside C++: each
    /// cycle sets it to 0 and evals (the falling edge, which also settles inputs set
    /// before), then to 1 and evals (the rising edge). Does not write trace samples.
    pub fn cycle_clock(&mut self, clock: usize, n: u64) -> Result<(), BridgeError> {
        let p = self.input(clock)?;
        if p.width != 1 {
            return Err(BridgeError::NotAClock {
                port: p.name.clone(),
                width: p.width,
            });
        }
        // SAFETY: `handle` is live; `clock` is a 1-bit input, which the shim steps.
        let rc = unsafe { (self.loaded.api.cycles)(self.handle.as_ptr(), clock as u32, n) };
        self.check_rc(rc, clock)
    }

    /// Whether the design executed `$finish`.
    pub fn finished(&self) -> bool {
        // SAFETY: `handle` is live.
        unsafe { (self.loaded.api.got_finish)(self.handle.as_ptr()) != 0 }
    }

    /// Starts writing a VCD file at `path` (closing any trace already open). Needs a model
    /// built with [`BuildOptions::trace`].
    pub fn trace_open(&mut self, path: &Path) -> Result<(), BridgeError> {
        if !self.loaded.has_trace {
            return Err(BridgeError::TracingDisabled);
        }
        let bytes = path.as_os_str().as_encoded_bytes();
        // Verilator treats a leading '|' as a pipe it does not support (it asserts).
        if bytes.is_empty() || bytes[0] == b'|' {
            return Err(BridgeError::TraceOpen(path.to_path_buf()));
        }
        let c_path = CString::new(bytes).map_err(|_| BridgeError::TraceOpen(path.to_path_buf()))?;
        // SAFETY: `handle` is live; `c_path` is NUL-terminated and outlives the call.
        let rc = unsafe { (self.loaded.api.trace_open)(self.handle.as_ptr(), c_path.as_ptr()) };
        match rc {
            0 => Ok(()),
            -1 => Err(BridgeError::TracingDisabled),
            _ => Err(BridgeError::TraceOpen(path.to_path_buf())),
        }
    }

    /// Writes the current values of all signals to the open trace at `time` (in the design's
    /// time precision: picoseconds unless the Verilog sets another `timescale`). No-op
    /// without an open trace.
    pub fn trace_dump(&mut self, time: u64) {
        // SAFETY: `handle` is live.
        unsafe { (self.loaded.api.trace_dump)(self.handle.as_ptr(), time) }
    }

    /// Flushes and closes the open trace, if any. A write that failed (a full disk, a
    /// file size limit) did not stop the simulation: the trace dropped everything from
    /// there on, and this returns that first error.
    pub fn trace_close(&mut self) -> std::io::Result<()> {
        // SAFETY: `handle` is live.
        match unsafe { (self.loaded.api.trace_close)(self.handle.as_ptr()) } {
            0 => Ok(()),
            errno => Err(std::io::Error::from_raw_os_error(errno)),
        }
    }
}

impl Drop for VerilatorModel {
    fn drop(&mut self) {
        // SAFETY: `handle` came from `create` and is destroyed exactly once, here, while
        // `loaded` (and so the library) is still alive.
        unsafe { (self.loaded.api.destroy)(self.handle.as_ptr()) }
    }
}

impl std::fmt::Debug for VerilatorModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerilatorModel")
            .field("library", &self.loaded.path)
            .field("ports", &self.loaded.ports.len())
            .field("report", &self.report)
            .finish()
    }
}
