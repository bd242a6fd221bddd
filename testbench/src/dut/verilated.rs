//! The Verilator model of the emitted Verilog as a `Dut`, clocked by the native
//! simulator's own schedule (`sim::clock::Clocks`).
//!
//! Evaluation is lazy: the model's `eval()` runs once per clock edge (a fall, a rise),
//! and otherwise only when an input changed since the last `eval()` and something needs
//! settled values (a read, or a rising edge with no fall before it). A single-clock design
//! stepped a cycle at a time costs two `eval()` calls per cycle, whatever is set and read
//! between the edges.

use super::{ports_of, Dut, DutError, DutPort};
use crate::engine::Engine;
use crate::verilator::{BuildOptions, PortInfo, VerilatorDesign, VerilatorModel};
use hdl::ir::{Direction, ResetPolarity};
use sim::clock::{Clocks, Fired, MAX_DOMAINS};
use std::path::{Path, PathBuf};

/// One clock domain: its clock port and, if any, its reset port and active level.
struct DomainPorts {
    clock: usize,
    reset: Option<(usize, u64)>,
}

/// A Verilator model behind the `Dut` trait.
pub struct VerilatorDut {
    model: VerilatorModel,
    ports: Vec<DutPort>,
    domains: Vec<String>,
    domain_ports: Vec<DomainPorts>,
    clocks: Clocks,
    /// The file of the open trace.
    trace: Option<PathBuf>,
    /// An input changed since the last `eval()`: outputs are not settled.
    dirty: bool,
    /// The domains that rose at the last edge.
    fired: Fired,
}

impl VerilatorDut {
    /// Emits `module` as Verilog, builds it with Verilator (cached) and loads it.
    pub fn new(module: &hdl::Module, options: &BuildOptions) -> Result<Self, DutError> {
        if module.domains.len() > MAX_DOMAINS {
            return Err(DutError::Sim(sim::SimError::TooManyDomains {
                module: module.name.clone(),
                count: module.domains.len(),
            }));
        }
        let design = gen::emit(module)?;
        let ports = ports_of(module);
        let vports = ports
            .iter()
            .map(|p| match p.direction {
                Direction::Input => PortInfo::input(&p.name, p.width),
                Direction::Output => PortInfo::output(&p.name, p.width),
            })
            .collect();
        let model = VerilatorModel::build(
            &VerilatorDesign {
                sources: design.files,
                top: design.top,
                ports: vports,
            },
            options,
        )?;
        let port_of_net = |net| {
            module
                .ports
                .iter()
                .position(|p| p.net == net)
                .expect("domain clocks and resets are ports")
        };
        let domain_ports: Vec<DomainPorts> = module
            .domains
            .iter()
            .map(|d| DomainPorts {
                clock: port_of_net(d.clock),
                reset: d.reset.map(|r| {
                    let active = match d.polarity {
                        ResetPolarity::ActiveHigh => 1,
                        ResetPolarity::ActiveLow => 0,
                    };
                    (port_of_net(r), active)
                }),
            })
            .collect();
        let mut dut = VerilatorDut {
            model,
            ports,
            domains: module.domains.iter().map(|d| d.name.clone()).collect(),
            clocks: Clocks::new(domain_ports.len()),
            domain_ports,
            trace: None,
            dirty: true,
            fired: Fired::default(),
        };
        dut.drive_resets(false)?;
        dut.settle();
        Ok(dut)
    }

    /// The loaded model (build report, direct port access).
    pub fn model(&self) -> &VerilatorModel {
        &self.model
    }

    /// Evaluates the model if an input changed since the last `eval()`.
    fn settle(&mut self) {
        if self.dirty {
            self.eval();
        }
    }

    /// Evaluates the model (a clock edge, or settling new inputs).
    fn eval(&mut self) {
        self.model.eval();
        self.dirty = false;
    }

    fn drive_resets(&mut self, active: bool) -> Result<(), DutError> {
        self.dirty = true;
        for d in &self.domain_ports {
            if let Some((port, level)) = d.reset {
                let v = if active { level } else { 1 - level };
                self.model.set_u64(port, v)?;
            }
        }
        Ok(())
    }

    /// Advances to the next rising edge of any clock, leaving the domains that rose in
    /// `self.fired` (empty without clocks).
    fn edge(&mut self) {
        let Some(t) = self.clocks.next_rise() else {
            self.settle();
            self.fired = Fired::default();
            return;
        };
        while let Some(tf) = self.clocks.next_fall_until(t) {
            for d in self.clocks.fall(tf).iter() {
                self.set_clock(d, 0);
            }
            // One eval per falling edge; it also settles inputs set since the last one.
            self.eval();
            if self.trace.is_some() && tf < t {
                self.model.trace_dump(tf);
            }
        }
        // Inputs set since the last eval settle before the rising edge samples them (an
        // extra eval only when no falling edge came first).
        self.settle();
        self.fired = self.clocks.rise(t);
        for d in self.fired.iter() {
            self.set_clock(d, 1);
        }
        self.eval();
        if self.trace.is_some() {
            self.model.trace_dump(t);
        }
    }

    /// Why [`Dut::set`] refused `port`: no such port, or a value that does not fit it
    /// (out of line, so that a write stays short).
    #[cold]
    #[inline(never)]
    fn refused(&self, port: usize) -> DutError {
        match self.ports.get(port) {
            None => DutError::UnknownPort(format!("#{port}")),
            Some(p) => DutError::BadValue {
                port: p.name.clone(),
                reason: format!("value does not fit in {} bits", p.width),
            },
        }
    }

    fn set_clock(&mut self, domain: usize, level: u64) {
        let port = self.domain_ports[domain].clock;
        self.model
            .set_u64(port, level)
            .expect("clock ports are 1-bit inputs");
    }
}

impl Dut for VerilatorDut {
    fn engine(&self) -> Engine {
        Engine::Verilator
    }

    fn ports(&self) -> &[DutPort] {
        &self.ports
    }

    fn domains(&self) -> &[String] {
        &self.domains
    }

    fn set_clock_period(&mut self, domain: &str, period_ps: u64) -> Result<(), DutError> {
        let d = self
            .domains
            .iter()
            .position(|n| n == domain)
            .ok_or_else(|| DutError::UnknownDomain(domain.to_string()))?;
        if period_ps < 2 {
            return Err(DutError::BadValue {
                port: domain.to_string(),
                reason: format!("clock period {period_ps} ps is below 2 ps"),
            });
        }
        self.clocks.set_period(d, period_ps);
        Ok(())
    }

    fn set(&mut self, port: usize, words: &[u64]) -> Result<(), DutError> {
        let fits = self.ports.get(port).is_some_and(|p| {
            words.iter().enumerate().all(|(i, w)| {
                *w == 0 || 64 * i as u64 + 64 - w.leading_zeros() as u64 <= p.width as u64
            })
        });
        if !fits {
            return Err(self.refused(port));
        }
        self.model.set(port, words)?;
        self.dirty = true;
        Ok(())
    }

    fn get(&mut self, port: usize) -> Result<Vec<u64>, DutError> {
        self.settle();
        Ok(self.model.get(port)?)
    }

    fn get_into(&mut self, port: usize, out: &mut [u64]) -> Result<(), DutError> {
        self.settle();
        Ok(self.model.get_into(port, out)?)
    }

    fn step_edge(&mut self) -> Fired {
        self.edge();
        self.fired
    }

    fn step(&mut self) {
        self.edge();
        while !self.domain_ports.is_empty() && !self.fired.contains(0) {
            self.edge();
        }
    }

    fn step_cycles(&mut self, n: u64) {
        // One clock and no trace: the n cycles run inside C++ (`ws_cycles`: fall, eval,
        // rise, eval — each cycle exactly what `step_edge` does for one clock, whose
        // pending fall always comes before its next rise; the first fall of a run settles
        // the inputs set before it), and the schedule is advanced to match.
        if self.domain_ports.len() != 1 || self.trace.is_some() || n == 0 {
            for _ in 0..n {
                self.step();
            }
            return;
        }
        let clock = self.domain_ports[0].clock;
        self.model
            .cycle_clock(clock, n)
            .expect("clock ports are 1-bit inputs");
        self.dirty = false;
        for _ in 0..n {
            let c = &mut self.clocks.clocks[0];
            c.next_fall = None;
            let t = c.next_rise;
            self.fired = self.clocks.rise(t);
        }
    }

    fn time_ps(&self) -> u64 {
        self.clocks.now
    }

    fn reset(&mut self, cycles: u64) {
        if self.domain_ports.is_empty() {
            self.settle();
            return;
        }
        self.drive_resets(true)
            .expect("reset ports are 1-bit inputs");
        if self.domain_ports.len() == 1 {
            self.step_cycles(cycles);
            self.drive_resets(false)
                .expect("reset ports are 1-bit inputs");
            self.settle();
            return;
        }
        let start: Vec<u64> = self.clocks.clocks.iter().map(|c| c.cycles).collect();
        while self
            .clocks
            .clocks
            .iter()
            .zip(&start)
            .any(|(c, s)| c.cycles - s < cycles)
        {
            self.step_edge();
        }
        self.drive_resets(false)
            .expect("reset ports are 1-bit inputs");
        self.settle();
    }

    fn trace_open(&mut self, path: &Path) -> Result<(), DutError> {
        self.model.trace_open(path)?;
        self.trace = Some(path.to_path_buf());
        self.model.trace_dump(self.clocks.now);
        Ok(())
    }

    fn trace_close(&mut self) -> Result<(), DutError> {
        match self.trace.take() {
            Some(path) => (self.model.trace_close())
                .map_err(|source| super::trace_write_failed(&path, source)),
            None => Ok(()),
        }
    }
}
