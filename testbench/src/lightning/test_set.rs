//! A workload's test images through the generated Lightning datapath in a closed
//! loop with the photonic-core model (`wirespeed sim lightning`): each image once
//! without noise and once with the testbed's noise, on one engine or both (which
//! must agree on logits, cycles and timelines), with the noise-free logits
//! compared to the golden model.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use hdl::lightning::datapath::{datapath, fail_reason_text};

use super::arith::{argmax, Contract};
use super::closed_loop::{hardware_config_as, ImageLoop, LoopControls, LoopRun, PortShape};
use super::golden::{infer_as, ContractConfig};
use super::link::PhotonicLink;
use super::model_files::Workload;
use super::photonic::{NoisyCore, TESTBED_SIGMA};
use crate::dut::{Dut, Recorder, Replayed};
use crate::engine::{replay_on_each, DomainClock, Engine, EngineTime};
use crate::turns::{take_turns, Player};

/// How the test set runs.
#[derive(Clone, Debug)]
pub struct TestSetOptions {
    /// Photonic cores (1–8; at most the smallest layer's outputs).
    pub cores: u32,
    /// Photonic latency in whole fabric cycles.
    pub latency: usize,
    /// Photonic intra-cycle sample shift (0–15).
    pub shift: usize,
    /// Seed of the photonic noise (core c draws from seed + c).
    pub seed: u64,
    /// A VCD of the first image's noise-free run; when several engines run, the
    /// later ones' go beside it as `<name>.<engine>.vcd`.
    pub vcd: Option<PathBuf>,
    /// The engine(s) to run.
    pub engine: Engine,
    /// The arithmetic contract of the generated datapath and the golden model.
    pub arith: Contract,
    /// Rounds of the whole run (at least 1), each every engine once on the same
    /// images, for the spread of the speeds
    /// ([`repeat_report`](crate::engine::repeat_report)); the later rounds are
    /// checked against the first and write no VCD.
    pub repeat: u32,
}

/// One pass over the images with one noise level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pass {
    /// Each image's run.
    pub runs: Vec<LoopRun>,
    /// Images whose largest logit is the label.
    pub correct: usize,
}

/// One engine's two passes (noise 0, then [`TESTBED_SIGMA`]).
pub struct EnginePasses {
    /// The engine, its build and the time of both passes (building excluded).
    pub time: EngineTime,
    /// Without noise.
    pub exact: Pass,
    /// With the testbed's noise.
    pub noisy: Pass,
}

/// The test set's runs on every engine.
pub struct TestSetRun {
    /// Per engine, native first, of the first round (every engine's runs are the
    /// same).
    pub engines: Vec<EnginePasses>,
    /// Every round's times, the first round's included (see
    /// [`TestSetOptions::repeat`]).
    pub rounds: Vec<Vec<EngineTime>>,
    /// When several engines ran: the first engine's calls on the datapath recorded
    /// in one more run of both passes and replayed on every engine (a fresh model
    /// each) without the test bench, in engine order (see
    /// [`Script`](crate::dut::Script)).
    pub engine_only: Vec<Replayed>,
    /// Images whose noise-free logits differ from the golden model's.
    pub mismatches: usize,
}

/// The first `n` test images of a workload and the datapath they run on.
pub struct TestSet<'a> {
    workload: &'a Workload,
    n: usize,
    options: TestSetOptions,
    module: hdl::Module,
    ports: PortShape,
}

impl<'a> TestSet<'a> {
    /// Generates the datapath of `workload`'s network for `options` (an error
    /// names a bad parameter, e.g. too many cores); `n` is at most the test
    /// set's size.
    pub fn new(workload: &'a Workload, n: usize, options: TestSetOptions) -> Result<Self> {
        let available = workload.test.images.len();
        if n > available {
            bail!("{n} images asked for, the test set has {available}");
        }
        let hw = hardware_config_as(
            &workload.model.network,
            workload.model.acc_width,
            options.cores,
            options.arith,
        );
        let module = datapath(&hw)?;
        Ok(TestSet {
            workload,
            n,
            options,
            module,
            ports: PortShape::of(&hw),
        })
    }

    /// Runs the images on every engine of the options (clock periods from
    /// `clocks`); an error if an image fails or does not finish, or the engines
    /// disagree.
    pub fn run(&self, clocks: &[DomainClock]) -> Result<TestSetRun> {
        let mut engines: Vec<EnginePasses> = Vec::new();
        let mut rounds = Vec::new();
        let all = self.options.engine.engines();
        for round in 0..self.options.repeat.max(1) {
            // A second engine's VCD goes beside the first's; later rounds write none.
            let vcd = |k: usize| match &self.options.vcd {
                _ if round > 0 => None,
                Some(p) if k > 0 => Some(p.with_extension(format!("{}.vcd", all[k].name()))),
                other => other.clone(),
            };
            // The engines take turns (see `turns`).
            let run =
                |k: usize, player: Player<'_>| self.run_engine(all[k], clocks, vcd(k), player);
            let runs = take_turns(all.len(), |player| run(0, player), run);
            let mut times = Vec::new();
            for (passes, &engine) in runs.into_iter().zip(all) {
                let passes = passes?;
                if let Some(first) = engines.first() {
                    if passes.exact.runs != first.exact.runs
                        || passes.noisy.runs != first.noisy.runs
                    {
                        bail!(
                            "round {}: the {} engine's logits, cycles or timelines differ from the {} engine's",
                            round + 1,
                            engine.name(),
                            first.time.engine.name()
                        );
                    }
                }
                times.push(passes.time);
                if round == 0 {
                    engines.push(passes);
                }
            }
            rounds.push(times);
        }
        let options = &self.options;
        let images = &self.workload.test.images[..self.n];
        let Some(first) = engines.first() else {
            bail!("no engine ran");
        };
        let golden_cfg = ContractConfig::exact(options.arith, self.workload.model.acc_width);
        let mut mismatches = 0;
        for (image, run) in images.iter().zip(&first.exact.runs) {
            let g = infer_as(&self.workload.model.network, image, &golden_cfg)?;
            mismatches += usize::from(g.logits != run.logits);
        }
        let engine_only = match options.engine.compares() {
            true => self.engine_only(first, clocks)?,
            false => Vec::new(),
        };
        Ok(TestSetRun {
            engines,
            rounds,
            engine_only,
            mismatches,
        })
    }

    /// Runs both passes once more on the first engine with its calls recorded
    /// (untimed, checked against its first run `first`), then replays them on every
    /// engine, each on a fresh model.
    fn engine_only(&self, first: &EnginePasses, clocks: &[DomainClock]) -> Result<Vec<Replayed>> {
        let options = &self.options;
        let engines = options.engine.engines();
        let set = (
            &self.workload.test.images[..self.n],
            &self.workload.test.labels[..self.n],
        );
        let (mut dut, _) = engines[0].build(&self.module, false, clocks)?;
        let mut recorder = Recorder::new(dut.as_mut());
        recorder.reset(2);
        let exact = pass(
            &mut recorder,
            set,
            &self.ports,
            0.0,
            options,
            None,
            &mut |_| {},
        )?;
        let noisy = pass(
            &mut recorder,
            set,
            &self.ports,
            TESTBED_SIGMA,
            options,
            None,
            &mut |_| {},
        )?;
        if exact.runs != first.exact.runs || noisy.runs != first.noisy.runs {
            bail!(
                "the recorded run on the {} engine differs from its first run",
                engines[0]
            );
        }
        replay_on_each(engines, &self.module, clocks, &recorder.finish())
    }

    /// Both passes over the images on a fresh model of `engine` (clock periods from
    /// `clocks`), image 0's noise-free run traced into `vcd`, with its place in the
    /// round's rotation, `player` (see `turns`): the model is built in its first
    /// turn, the baton passes on between images, and the time is that of its turns.
    fn run_engine(
        &self,
        engine: Engine,
        clocks: &[DomainClock],
        vcd: Option<PathBuf>,
        mut player: Player,
    ) -> Result<EnginePasses> {
        let options = &self.options;
        let set = (
            &self.workload.test.images[..self.n],
            &self.workload.test.labels[..self.n],
        );
        let (mut dut, build) = engine.build(&self.module, options.vcd.is_some(), clocks)?;
        dut.reset(2);
        player.restart_clock();
        let vcd = vcd.as_deref();
        let mut ran = |cycles| player.ran(cycles);
        let exact = pass(dut.as_mut(), set, &self.ports, 0.0, options, vcd, &mut ran)?;
        let noisy = pass(
            dut.as_mut(),
            set,
            &self.ports,
            TESTBED_SIGMA,
            options,
            vcd,
            &mut ran,
        )?;
        Ok(EnginePasses {
            time: EngineTime {
                engine,
                build,
                wall: player.played(),
                compiled: dut.compiled_start(),
            },
            exact,
            noisy,
        })
    }
}

/// One pass over (`images`, `labels`) with photonic noise `sigma`; image 0's
/// noise-free run is traced into `vcd`; `ran` is told each image's cycles.
fn pass(
    dut: &mut dyn Dut,
    (images, labels): (&[Vec<u8>], &[u8]),
    shape: &PortShape,
    sigma: f64,
    options: &TestSetOptions,
    vcd: Option<&Path>,
    ran: &mut dyn FnMut(u64),
) -> Result<Pass> {
    let mut links: Vec<_> = (0..u64::from(options.cores))
        .map(|c| {
            PhotonicLink::new(
                NoisyCore::new(sigma, 1.0, options.seed.wrapping_add(c)),
                options.latency,
                options.shift,
            )
        })
        .collect();
    let controls = LoopControls::default();
    let mut image_loop = ImageLoop::new(shape.clone(), &controls);
    let mut runs = Vec::new();
    let mut correct = 0;
    for (i, (image, &label)) in images.iter().zip(labels).enumerate() {
        let vcd = vcd.filter(|_| i == 0 && sigma == 0.0);
        if let Some(path) = vcd {
            dut.trace_open(path)
                .with_context(|| format!("{}: cannot write the VCD", path.display()))?;
        }
        let run = image_loop.run(dut, &mut links, image)?;
        if vcd.is_some() {
            dut.trace_close()?;
        }
        if run.failed {
            bail!(
                "image {i}: the datapath failed after {} cycles: {} (fail_reason {})",
                run.cycles,
                fail_reason_text(run.fail_reason),
                run.fail_reason
            );
        }
        if !run.done {
            bail!(
                "image {i}: the datapath did not finish in {} cycles",
                run.cycles
            );
        }
        correct += usize::from(argmax(&run.logits) == Some(usize::from(label)));
        ran(run.cycles);
        runs.push(run);
    }
    Ok(Pass { runs, correct })
}
