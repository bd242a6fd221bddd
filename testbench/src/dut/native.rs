//! The native simulator as a `Dut`.

use super::{ports_of, CodeShape, CompiledStart, Dut, DutError, DutPort, TunedStart};
use crate::engine::Engine;
use sim::{Backend, Fired, PortHandle, Simulator, Takeover, TraceSelection};
use std::path::{Path, PathBuf};

/// `sim::Simulator` behind the `Dut` trait.
pub struct NativeDut {
    sim: Simulator,
    /// The engine chosen at construction (the default engine is `Native` even
    /// while its first cycles run on the interpreter).
    engine: Engine,
    ports: Vec<DutPort>,
    handles: Vec<PortHandle>,
    domains: Vec<String>,
    /// The file of the open trace.
    trace: Option<PathBuf>,
}

impl NativeDut {
    /// Simulates `module` natively on the default engine, with the test bench's
    /// [code cache](crate::caches::code_cache): the compiled engine from the cache
    /// when it holds it, else the interpreter at once and the compiled engine as
    /// soon as its background build is done (see `sim::Simulator::with_cache`).
    pub fn new(module: &hdl::Module) -> Result<Self, DutError> {
        Self::with_takeover(module, Takeover::Background)
    }

    /// [`new`](Self::new) with the code cache `cache` instead of the test bench's
    /// (an empty one times a first start: the program compiled, the compiled
    /// engine built).
    pub fn with_code_cache(module: &hdl::Module, cache: &sim::CodeCache) -> Result<Self, DutError> {
        Self::cached(module, cache, Takeover::Background)
    }

    /// [`new`](Self::new), the compiled engines taking over as `takeover` says
    /// (see [`sim::Takeover`]); the engine is [`Engine::Compiled`] for
    /// [`Takeover::Waiting`].
    pub fn with_takeover(module: &hdl::Module, takeover: Takeover) -> Result<Self, DutError> {
        Self::cached(module, &crate::caches::code_cache(), takeover)
    }

    /// `module` on the code cache `cache`, its compiled engines taking over as
    /// `takeover` says.
    fn cached(
        module: &hdl::Module,
        cache: &sim::CodeCache,
        takeover: Takeover,
    ) -> Result<Self, DutError> {
        let sim = Simulator::with_cache_takeover(module, cache, takeover)?;
        let engine = match takeover {
            Takeover::Background => Engine::Native,
            Takeover::Waiting => Engine::Compiled,
        };
        Self::from_simulator(module, sim, engine)
    }

    /// Simulates `module` natively on the engine `backend` from the first cycle on.
    pub fn with_backend(module: &hdl::Module, backend: Backend) -> Result<Self, DutError> {
        let engine = match backend {
            Backend::Compiled => Engine::Native,
            Backend::Interpreted => Engine::Interpreted,
        };
        let sim = Simulator::with_backend(module, backend)?;
        Self::from_simulator(module, sim, engine)
    }

    fn from_simulator(
        module: &hdl::Module,
        sim: Simulator,
        engine: Engine,
    ) -> Result<Self, DutError> {
        let ports = ports_of(module);
        let handles = ports
            .iter()
            .map(|p| sim.port_handle(&p.name))
            .collect::<Result<Vec<_>, _>>()?;
        let domains = sim.domain_names().iter().map(|s| s.to_string()).collect();
        Ok(NativeDut {
            sim,
            engine,
            ports,
            handles,
            domains,
            trace: None,
        })
    }

    /// The simulator itself, for what the trait does not cover (peeking internal nets).
    pub fn simulator(&mut self) -> &mut Simulator {
        &mut self.sim
    }

    /// The handle of port `port` (an index into [`Dut::ports`]), or the error
    /// naming the index.
    #[inline]
    fn handle(&self, port: usize) -> Result<PortHandle, DutError> {
        (self.handles.get(port).copied()).ok_or_else(|| DutError::UnknownPort(format!("#{port}")))
    }

    /// [`Dut::get_into`] after settling the logic the port depends on, and its
    /// errors: out of line, so that a read whose words are settled calls nothing.
    #[inline(never)]
    fn get_into_settled(&mut self, port: usize, out: &mut [u64]) -> Result<(), DutError> {
        let h = self.handle(port)?;
        let words = self.sim.get_words(h)?;
        super::copy_words(&self.ports, port, words, out)
    }
}

impl Dut for NativeDut {
    fn engine(&self) -> Engine {
        self.engine
    }

    fn ports(&self) -> &[DutPort] {
        &self.ports
    }

    fn domains(&self) -> &[String] {
        &self.domains
    }

    fn set_clock_period(&mut self, domain: &str, period_ps: u64) -> Result<(), DutError> {
        Ok(self.sim.set_clock_period(domain, period_ps)?)
    }

    fn set(&mut self, port: usize, words: &[u64]) -> Result<(), DutError> {
        let h = self.handle(port)?;
        Ok(self.sim.set_words(h, words)?)
    }

    fn get(&mut self, port: usize) -> Result<Vec<u64>, DutError> {
        let h = self.handle(port)?;
        Ok(self.sim.get_words(h)?.to_vec())
    }

    fn get_into(&mut self, port: usize, out: &mut [u64]) -> Result<(), DutError> {
        let settled = (self.handles.get(port)).and_then(|&h| self.sim.settled_words(h));
        match settled {
            Some(words) if words.len() <= out.len() => {
                super::copy_short(&mut out[..words.len()], words);
                Ok(())
            }
            _ => self.get_into_settled(port, out),
        }
    }

    fn step_edge(&mut self) -> Fired {
        self.sim.step_edge()
    }

    fn step(&mut self) {
        self.sim.step();
    }

    fn step_cycles(&mut self, n: u64) {
        self.sim.step_n(n);
    }

    fn time_ps(&self) -> u64 {
        self.sim.time_ps()
    }

    fn reset(&mut self, cycles: u64) {
        self.sim.reset(cycles);
    }

    fn trace_open(&mut self, path: &Path) -> Result<(), DutError> {
        let file = std::fs::File::create(path).map_err(|source| DutError::Trace {
            path: path.display().to_string(),
            source,
        })?;
        let names = self.ports.iter().map(|p| p.name.clone()).collect();
        self.sim
            .trace_vcd(std::io::BufWriter::new(file), TraceSelection::Names(names))?;
        self.trace = Some(path.to_path_buf());
        Ok(())
    }

    fn trace_close(&mut self) -> Result<(), DutError> {
        let path = self.trace.take();
        match (self.sim.finish_trace(), path) {
            (Err(sim::SimError::Io(source)), Some(path)) => {
                Err(super::trace_write_failed(&path, source))
            }
            (result, _) => Ok(result?),
        }
    }

    fn compiled_start(&self) -> Option<CompiledStart> {
        let stats = self.sim.compile_stats()?;
        let tuned = self.sim.tuned_stats().and_then(|(cycle, tuned)| {
            let (untested, partitions) = tuned.tuned?;
            Some(TunedStart {
                cycle,
                build: tuned.time,
                cached: tuned.cached,
                untested,
                partitions,
            })
        });
        Some(CompiledStart {
            cycle: self.sim.compiled_from_cycle()?,
            build: stats.time,
            cached: stats.cached,
            program_cached: self.sim.program_from_cache(),
            tuned,
            shape: CodeShape {
                records: stats.records,
                vector_runs: stats.vector_runs,
                run_calls: stats.runs,
                loops: sim::vector_loops(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdl::{ModuleBuilder, ResetPolarity};

    /// A 100-bit output, the complement of a 100-bit input, and an 8-bit register.
    fn module() -> hdl::Module {
        let mut m = ModuleBuilder::new("reads");
        let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
        let big = m.input("big", 100);
        let d = m.input("d", 8);
        let r = m.register(clk, "r", d);
        let not_big = m.not(big);
        m.output("big_q", not_big);
        m.output("q", r);
        m.finish().unwrap()
    }

    #[test]
    fn port_reads_settle_when_they_must_and_name_their_errors() {
        let mut dut = NativeDut::new(&module()).unwrap();
        let [big, big_q, d, q] = ["big", "big_q", "d", "q"].map(|n| dut.port(n).unwrap());
        dut.set(big, &[5, 7]).unwrap();
        dut.set(d, &[0x5a]).unwrap();
        // The output's logic is dirty: the read settles it first.
        let complement = [!5, !7 & ((1 << 36) - 1)];
        let mut out = [3; 3];
        dut.get_into(big_q, &mut out).unwrap();
        assert_eq!(
            out,
            [complement[0], complement[1], 3],
            "two words copied, the rest untouched"
        );
        // Now settled: the short path, for the input and the output alike.
        let mut two = [0; 2];
        dut.get_into(big, &mut two).unwrap();
        assert_eq!(two, [5, 7]);
        dut.get_into(big_q, &mut two).unwrap();
        assert_eq!(two, complement);
        dut.step();
        let mut one = [0; 1];
        dut.get_into(q, &mut one).unwrap();
        assert_eq!(one, [0x5a], "the register after the edge");
        let e = dut.get_into(big_q, &mut one).unwrap_err();
        assert!(
            matches!(e, DutError::BadValue { ref port, .. } if port == "big_q"),
            "{e}"
        );
        let e = dut.get_into(17, &mut one).unwrap_err();
        assert!(
            matches!(e, DutError::UnknownPort(ref n) if n == "#17"),
            "{e}"
        );
    }

    /// A trace whose writes fail is an error naming it at close; a device is not
    /// removed (only an incomplete regular file is), and a pair in lockstep closes
    /// its second trace whatever the first's result.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_trace_that_cannot_be_written_is_an_error_naming_it() {
        let full = Path::new("/dev/full");
        let mut dut = NativeDut::new(&module()).unwrap();
        dut.trace_open(full).unwrap();
        dut.step_cycles(3);
        let e = dut.trace_close().unwrap_err();
        assert!(
            matches!(&e, DutError::TraceWrite { path, removed: false, .. } if path == "/dev/full"),
            "{e}"
        );
        assert!(e.to_string().contains("the trace is incomplete"), "{e}");
        assert!(full.exists(), "the device survives");

        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("t.vcd");
        std::os::unix::fs::symlink(full, &first).unwrap();
        let mut pair = crate::dut::Lockstep::new(
            NativeDut::new(&module()).unwrap(),
            NativeDut::new(&module()).unwrap(),
        )
        .unwrap();
        pair.trace_open(&first).unwrap();
        pair.step_cycles(3);
        let end = pair.time_ps();
        let e = pair.trace_close().unwrap_err();
        assert!(matches!(e, DutError::TraceWrite { .. }), "{e}");
        assert!(first.is_symlink(), "a link is no regular file: kept");
        let second = std::fs::read_to_string(dir.path().join("t.native.vcd")).unwrap();
        assert!(
            second.contains("$enddefinitions") && second.contains(&format!("#{end}")),
            "the second trace, closed: {second}"
        );
    }
}
