//! The differential harness: the native simulator and the Verilator model run in
//! lockstep on the same stimulus; every output is compared after every input change
//! and every clock edge. On the first mismatch it replays the recorded stimulus with
//! VCD tracing on both engines and reports the cycle, the port, both values and the
//! two VCD paths.

use crate::dut::{Dut, DutError, NativeDut, VerilatorDut};
use crate::verilator::BuildOptions;
use hdl::ir::Direction;
use hdl::Module;
use std::fmt;
use std::path::PathBuf;

/// What a stimulus sees and does between two clock edges.
pub struct Step<'a> {
    /// Domains (indices into [`Differential::domains`]) that rose at the last edge;
    /// empty right after reset.
    pub fired: &'a [usize],
    /// Rising edges so far per domain (after reset).
    pub cycles: &'a [u64],
    /// Current output values (both engines agree on them), by port index.
    pub outputs: &'a [Vec<u64>],
    sets: Vec<(usize, Vec<u64>)>,
    ports: &'a [crate::dut::DutPort],
}

impl Step<'_> {
    /// Drives input `name` with `words` from now on.
    pub fn set(&mut self, name: &str, words: &[u64]) {
        let port = self
            .ports
            .iter()
            .position(|p| p.name == name)
            .unwrap_or_else(|| panic!("stimulus drives unknown port `{name}`"));
        self.sets.push((port, words.to_vec()));
    }

    /// Drives input `name` with a value of at most 64 bits.
    pub fn set_u64(&mut self, name: &str, value: u64) {
        self.set(name, &[value]);
    }

    /// The current value of output (or input) `name`.
    pub fn get(&self, name: &str) -> &[u64] {
        let port = self
            .ports
            .iter()
            .position(|p| p.name == name)
            .unwrap_or_else(|| panic!("stimulus reads unknown port `{name}`"));
        &self.outputs[port]
    }

    /// The current value of a port of at most 64 bits.
    pub fn get_u64(&self, name: &str) -> u64 {
        self.get(name).first().copied().unwrap_or(0)
    }

    /// True if domain `index` rose at the last edge.
    pub fn fired(&self, index: usize) -> bool {
        self.fired.contains(&index)
    }
}

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

fn hex(words: &[u64], width: u32) -> String {
    hdl::Bits::from_words(words, width).to_hex()
}

/// One recorded action, for the replay with traces.
enum Action {
    Set(usize, Vec<u64>),
    Edge,
}

/// The native simulator of one module and the Verilator model of another (normally
/// the same module) with identical ports.
pub struct Differential {
    native_module: Module,
    verilator_module: Module,
    ports: Vec<crate::dut::DutPort>,
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
    ) -> Result<(NativeDut, VerilatorDut), DutError> {
        let mut native = NativeDut::new(&self.native_module)?;
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
    /// outputs and sets inputs for the next interval.
    pub fn run(
        &self,
        cfg: &DiffConfig,
        mut stimulus: impl FnMut(&mut Step),
    ) -> Result<DiffReport, DiffError> {
        let (mut native, mut verilator) = self.engines(cfg, false)?;
        native.reset(cfg.reset_cycles);
        verilator.reset(cfg.reset_cycles);
        let n_domains = native.domains().len();
        let mut report = DiffReport {
            cycles: vec![0; n_domains],
            ..DiffReport::default()
        };
        let mut log: Vec<Action> = Vec::new();
        let mut fired: Vec<usize> = Vec::new();
        let mut outputs = self.compare(&mut native, &mut verilator, &report, &log, cfg)?;
        report.comparisons += outputs.len() as u64;
        loop {
            let mut step = Step {
                fired: &fired,
                cycles: &report.cycles,
                outputs: &outputs,
                sets: vec![],
                ports: &self.ports,
            };
            stimulus(&mut step);
            let sets = std::mem::take(&mut step.sets);
            for (port, words) in sets {
                native.set(port, &words)?;
                verilator.set(port, &words)?;
                log.push(Action::Set(port, words));
            }
            outputs = self.compare(&mut native, &mut verilator, &report, &log, cfg)?;
            report.comparisons += outputs.len() as u64;
            let done = n_domains == 0 && report.edges >= cfg.cycles
                || n_domains > 0 && report.cycles[0] >= cfg.cycles;
            if done {
                return Ok(report);
            }
            fired = native.step_edge();
            let fired_v = verilator.step_edge();
            assert_eq!(fired, fired_v, "both engines share one clock schedule");
            log.push(Action::Edge);
            report.edges += 1;
            for d in &fired {
                report.cycles[*d] += 1;
            }
            outputs = self.compare(&mut native, &mut verilator, &report, &log, cfg)?;
            report.comparisons += outputs.len() as u64;
        }
    }

    /// Compares every port; returns the values, or the mismatch with its replay.
    fn compare(
        &self,
        native: &mut NativeDut,
        verilator: &mut VerilatorDut,
        report: &DiffReport,
        log: &[Action],
        cfg: &DiffConfig,
    ) -> Result<Vec<Vec<u64>>, DiffError> {
        let mut values = Vec::with_capacity(self.ports.len());
        for (i, p) in self.ports.iter().enumerate() {
            let n = native.get(i)?;
            if p.direction == Direction::Output {
                let v = verilator.get(i)?;
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
                        native: hex(&n, p.width),
                        verilator: hex(&v, p.width),
                        vcds,
                    })));
                }
            }
            values.push(n);
        }
        Ok(values)
    }

    /// Re-runs the recorded actions on fresh engines with VCD tracing on both.
    fn replay(&self, cfg: &DiffConfig, log: &[Action]) -> Result<(PathBuf, PathBuf), DutError> {
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
        for action in log {
            match action {
                Action::Set(port, words) => {
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
