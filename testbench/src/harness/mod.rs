//! The differential harness: the native simulator — its compiled engine and its
//! interpreter in [`Lockstep`] — and the Verilator model run in lockstep on the same
//! stimulus; every output is compared after every input change and every clock edge
//! (the two native engines on every read, Verilator against them). On the first
//! mismatch with Verilator it replays the recorded stimulus with VCD tracing on both
//! sides and reports the cycle, the port, both values and the two VCD paths; the two
//! native engines disagreeing is a [`DutError::Diverged`].

mod step;

pub use step::Step;

use crate::dut::{Dut, DutError, DutPort, Lockstep, NativeDut, VerilatorDut};
use crate::verilator::BuildOptions;
use hdl::ir::Direction;
use hdl::Module;
use sim::{Backend, Fired};
use std::fmt;
use std::ops::Range;
use std::path::PathBuf;
use step::Sets;

/// How to run a differential test.
#[derive(Clone, Debug)]
pub struct DiffConfig {
    /// Clock periods by domain name (others keep 1000 ps).
    pub periods: Vec<(String, u64)>,
    /// Reset cycles before the stimulus starts.
    pub reset_cycles: u64,
    /// Stop after this many rising edges of the first domain.
    pub cycles: u64,
}

impl DiffConfig {
    /// `cycles` edges of the first domain with default clocks and 2 reset cycles.
    pub fn cycles(cycles: u64) -> Self {
        DiffConfig {
            periods: vec![],
            reset_cycles: 2,
            cycles,
        }
    }

    /// The same configuration with `domain` clocked every `period_ps`.
    pub fn period(mut self, domain: &str, period_ps: u64) -> Self {
        self.periods.push((domain.to_string(), period_ps));
        self
    }
}

/// What a passing run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiffReport {
    /// Rising edges per domain, after reset.
    pub cycles: Vec<u64>,
    /// Edges processed (coincident edges count once).
    pub edges: u64,
    /// Port values compared.
    pub comparisons: u64,
}

/// The first disagreement between the engines.
#[derive(Debug)]
pub struct Mismatch {
    /// Module name.
    pub module: String,
    /// Rising edges per domain when it happened.
    pub cycles: Vec<(String, u64)>,
    /// Simulation time (ps).
    pub time_ps: u64,
    /// The port.
    pub port: String,
    /// Native simulator's value, hex.
    pub native: String,
    /// Verilator's value, hex.
    pub verilator: String,
    /// Where the two VCDs of the replay were written (or why not).
    pub vcds: Result<(PathBuf, PathBuf), String>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cycles: Vec<String> = self
            .cycles
            .iter()
            .map(|(d, c)| format!("{d} cycle {c}"))
            .collect();
        writeln!(
            f,
            "engines disagree on `{}` port `{}` at {} ps ({}): native {} vs verilator {}",
            self.module,
            self.port,
            self.time_ps,
            cycles.join(", "),
            self.native,
            self.verilator
        )?;
        match &self.vcds {
            Ok((n, v)) => write!(f, "VCDs: {} and {}", n.display(), v.display()),
            Err(e) => write!(f, "VCDs could not be written: {e}"),
        }
    }
}

/// Why a differential run did not pass.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// The engines disagree.
    #[error("{0}")]
    Mismatch(Box<Mismatch>),
    /// An engine could not be built or driven.
    #[error(transparent)]
    Dut(#[from] DutError),
}

/// The native side: the compiled engine, checked on every read against the
/// interpreter.
type NativePair = Lockstep<NativeDut, NativeDut>;

fn hex(words: &[u64], width: u32) -> String {
    hdl::Bits::from_words(words, width).to_hex()
}

/// One recorded action, for the replay with traces.
enum Action {
    /// Port and its value's range in [`Log::words`].
    Set(usize, Range<usize>),
    Edge,
}

/// What a run did, for the replay with traces.
#[derive(Default)]
struct Log {
    actions: Vec<Action>,
    words: Vec<u64>,
}

/// Port values of both engines, read into buffers kept for the whole run.
struct Values {
    native: Vec<Vec<u64>>,
    verilator: Vec<u64>,
}

/// The native simulator of one module and the Verilator model of another (normally
/// the same module) with identical ports.
pub struct Differential {
    native_module: Module,
    verilator_module: Module,
    ports: Vec<DutPort>,
}

impl Differential {
    /// Compares the native simulation of `module` with Verilator's of its Verilog.
    pub fn new(module: &Module) -> Self {
        Self::pair(module, module)
    }

    /// Compares `native` on the native simulator with `verilator` on Verilator (for
    /// proving the harness catches a difference). Their ports must be identical.
    pub fn pair(native: &Module, verilator: &Module) -> Self {
        Differential {
            native_module: native.clone(),
            verilator_module: verilator.clone(),
            ports: crate::dut::ports_of(native),
        }
    }

    /// Clock domain names of the design.
    pub fn domains(&self) -> Vec<String> {
        self.native_module
            .domains
            .iter()
            .map(|d| d.name.clone())
            .collect()
    }

    fn engines(
        &self,
        cfg: &DiffConfig,
        trace: bool,
    ) -> Result<(NativePair, VerilatorDut), DutError> {
        let mut native = Lockstep::new(
            NativeDut::with_backend(&self.native_module, Backend::Compiled)?,
            NativeDut::with_backend(&self.native_module, Backend::Interpreted)?,
        )?;
        let options = if trace {
            BuildOptions::with_trace()
        } else {
            BuildOptions::default()
        };
        let mut verilator = VerilatorDut::new(&self.verilator_module, &options)?;
        if verilator.ports() != native.ports() {
            return Err(DutError::BadValue {
                port: "*".into(),
                reason: "the two modules' ports differ".into(),
            });
        }
        for (d, p) in &cfg.periods {
            native.set_clock_period(d, *p)?;
            verilator.set_clock_period(d, *p)?;
        }
        Ok((native, verilator))
    }

    /// Runs `stimulus` on both engines for `cfg.cycles` cycles of the first domain.
    /// The stimulus is called after reset and after every edge, sees the (agreed)
    /// outputs and sets inputs for the next interval, through [`Step`]'s
    /// [`Pins`](crate::pins::Pins) with [`Pin`](crate::pins::Pin)s it resolved
    /// once before the run (from [`ports_of`](crate::dut::ports_of) of the module).
    pub fn run(
        &self,
        cfg: &DiffConfig,
        mut stimulus: impl FnMut(&mut Step),
    ) -> Result<DiffReport, DiffError> {
        self.try_run(cfg, |s| {
            stimulus(s);
            Ok(())
        })
    }

    /// [`Differential::run`] with a stimulus that can fail (a port it asks for
    /// is missing, a value does not fit): its first error ends the run.
    pub fn try_run(
        &self,
        cfg: &DiffConfig,
        mut stimulus: impl FnMut(&mut Step) -> Result<(), DutError>,
    ) -> Result<DiffReport, DiffError> {
        let (mut native, mut verilator) = self.engines(cfg, false)?;
        native.reset(cfg.reset_cycles);
        verilator.reset(cfg.reset_cycles);
        let n_domains = native.domains().len();
        let mut report = DiffReport {
            cycles: vec![0; n_domains],
            ..DiffReport::default()
        };
        let mut log = Log::default();
        let mut sets = Sets::default();
        let mut fired = Fired::default();
        let mut values = self.values(&mut native)?;
        self.compare(
            &mut native,
            &mut verilator,
            &mut report,
            &log,
            cfg,
            &mut values,
        )?;
        loop {
            sets.clear();
            stimulus(&mut Step {
                fired,
                cycles: &report.cycles,
                outputs: &values.native,
                sets: &mut sets,
                ports: &self.ports,
            })?;
            for (port, range) in &sets.ports {
                let words = &sets.words[range.clone()];
                native.set(*port, words)?;
                verilator.set(*port, words)?;
                let at = log.words.len();
                log.words.extend_from_slice(words);
                log.actions.push(Action::Set(*port, at..log.words.len()));
            }
            self.compare(
                &mut native,
                &mut verilator,
                &mut report,
                &log,
                cfg,
                &mut values,
            )?;
            let done = n_domains == 0 && report.edges >= cfg.cycles
                || n_domains > 0 && report.cycles[0] >= cfg.cycles;
            if done {
                return Ok(report);
            }
            fired = native.step_edge();
            let fired_v = verilator.step_edge();
            assert_eq!(fired, fired_v, "both engines share one clock schedule");
            log.actions.push(Action::Edge);
            report.edges += 1;
            for d in fired.iter() {
                report.cycles[d] += 1;
            }
            self.compare(
                &mut native,
                &mut verilator,
                &mut report,
                &log,
                cfg,
                &mut values,
            )?;
        }
    }

    /// Buffers for every port's value, sized by the native engine's values now.
    fn values(&self, native: &mut NativePair) -> Result<Values, DutError> {
        let native = (0..self.ports.len())
            .map(|i| native.get(i))
            .collect::<Result<Vec<_>, _>>()?;
        let longest = native.iter().map(Vec::len).max().unwrap_or(0);
        Ok(Values {
            native,
            verilator: vec![0; longest],
        })
    }

    /// Reads every port into `values` and compares the outputs; counts the
    /// comparisons, or returns the mismatch with its replay.
    fn compare(
        &self,
        native: &mut NativePair,
        verilator: &mut VerilatorDut,
        report: &mut DiffReport,
        log: &Log,
        cfg: &DiffConfig,
        values: &mut Values,
    ) -> Result<(), DiffError> {
        for (i, p) in self.ports.iter().enumerate() {
            let n = &mut values.native[i];
            native.get_into(i, n)?;
            if p.direction != Direction::Output {
                continue;
            }
            let v = &mut values.verilator[..n.len()];
            verilator.get_into(i, v)?;
            if n != v {
                let vcds = self.replay(cfg, log).map_err(|e| e.to_string());
                return Err(DiffError::Mismatch(Box::new(Mismatch {
                    module: self.native_module.name.clone(),
                    cycles: self
                        .domains()
                        .into_iter()
                        .zip(report.cycles.clone())
                        .collect(),
                    time_ps: native.time_ps(),
                    port: p.name.clone(),
                    native: hex(n, p.width),
                    verilator: hex(v, p.width),
                    vcds,
                })));
            }
        }
        report.comparisons += self.ports.len() as u64;
        Ok(())
    }

    /// Re-runs the recorded actions on fresh engines with VCD tracing on both.
    fn replay(&self, cfg: &DiffConfig, log: &Log) -> Result<(PathBuf, PathBuf), DutError> {
        let dir = std::env::temp_dir()
            .join("wirespeed-mismatch")
            .join(format!(
                "{}-{}",
                self.native_module.name,
                std::process::id()
            ));
        std::fs::create_dir_all(&dir).map_err(|source| DutError::Trace {
            path: dir.display().to_string(),
            source,
        })?;
        let (np, vp) = (dir.join("native.vcd"), dir.join("verilator.vcd"));
        let (mut native, mut verilator) = self.engines(cfg, true)?;
        native.trace_open(&np)?;
        verilator.trace_open(&vp)?;
        native.reset(cfg.reset_cycles);
        verilator.reset(cfg.reset_cycles);
        for action in &log.actions {
            match action {
                Action::Set(port, range) => {
                    let words = &log.words[range.clone()];
                    native.set(*port, words)?;
                    verilator.set(*port, words)?;
                }
                Action::Edge => {
                    native.step_edge();
                    verilator.step_edge();
                }
            }
        }
        native.step_edge();
        verilator.step_edge();
        native.trace_close()?;
        verilator.trace_close()?;
        Ok((np, vp))
    }
}
