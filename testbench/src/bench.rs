//! The designs, the stimulus and the loop of the `bench` example (engine against
//! engine through the [`Dut`] trait), shared with the `bench_count` example, which
//! runs one design's loop on one engine for Valgrind to count its instructions.

use crate::dut::Dut;
use crate::rng::random_words;
use hdl::blocks::fp::{fp_add_tree, FpAddConfig, FpFormat, FpTreeConfig};
use hdl::blocks::{counter, fifo, skid};
use hdl::dsl::AxisConfig;
use hdl::ir::{Direction, PortKind};
use hdl::Module;
use rand::SeedableRng;

/// A design `bench` measures.
pub struct Case {
    /// Its name in `bench`'s table.
    pub name: &'static str,
    /// The design.
    pub module: Module,
}

/// `bench`'s designs: a counter, a fifo, an AXI-Stream skid buffer, an fp32
/// adder tree and PANAMA's core.
pub fn cases() -> Vec<Case> {
    let tree = FpTreeConfig {
        inputs: 4,
        lanes: 16,
        adder: FpAddConfig {
            format: FpFormat::Fp32,
            stages: 3,
            ftz: false,
        },
    };
    vec![
        Case {
            name: "counter 32 bit",
            module: counter::up_counter(32).expect("valid parameters"),
        },
        Case {
            name: "fifo 512 x 512",
            module: fifo::sync_fifo(512, 512).expect("valid parameters"),
        },
        Case {
            name: "axis skid 1024 bit",
            module: skid::axis_skid(&AxisConfig::packets(1024, 128)).expect("valid parameters"),
        },
        Case {
            name: "fp32 adder tree 4 x 16",
            module: fp_add_tree(&tree).expect("valid parameters"),
        },
        Case {
            name: "PANAMA core, SUME (random inputs)",
            module: panama_sume(),
        },
    ]
}

/// PANAMA's core as `gen panama --board netfpga-sume` builds it (random inputs
/// exercise the parser, the bypass and the error paths rather than aggregation;
/// `sim panama` measures real traffic).
fn panama_sume() -> Module {
    let board = gen::board::Board::named("netfpga-sume").expect("a shipped board");
    let mut codes = board.port_codes();
    codes.truncate(board.ethernet_codes().len());
    let cfg = hdl::panama::config::PanamaConfig::new(board.data_width, &codes);
    hdl::panama::core::panama_core(&cfg).expect("valid parameters")
}

/// Per cycle, the words set on each data input (by port index).
pub type Stimulus = Vec<Vec<(usize, Vec<u64>)>>;

/// 1024 cycles of random values for every data input of `dut`, replayed
/// cyclically, so that every engine gets the same stimulus and generating it is
/// not timed.
pub fn stimulus(dut: &dyn Dut) -> Stimulus {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let inputs: Vec<(usize, u32)> = dut
        .ports()
        .iter()
        .enumerate()
        .filter(|(_, p)| p.direction == Direction::Input && p.kind == PortKind::Data)
        .map(|(i, p)| (i, p.width))
        .collect();
    (0..1024)
        .map(|_| {
            inputs
                .iter()
                .map(|(i, w)| (*i, random_words(&mut rng, *w)))
                .collect()
        })
        .collect()
}

/// The outputs of `dut` (port indices) and a buffer for the widest port.
pub fn outputs(dut: &dyn Dut) -> (Vec<usize>, Vec<u64>) {
    let outputs = (dut.ports().iter().enumerate())
        .filter(|(_, p)| p.direction == Direction::Output)
        .map(|(i, _)| i)
        .collect();
    let widest = dut.ports().iter().map(|p| p.width.div_ceil(64)).max();
    (outputs, vec![0; widest.unwrap_or(1) as usize])
}

/// `cycles` cycles of `stim` from its cycle `from` (cyclically) on `dut`: inputs
/// set, one clock cycle, every output in `outputs` read into `buf`. Returns the
/// xor of the outputs' first words, for the caller to keep. Out of line, so that
/// Valgrind can count it alone (`--toggle-collect=testbench::bench::drive`).
///
/// # Panics
/// If `stim` does not fit `dut`'s inputs or `buf` is shorter than an output (a
/// bug: both come from [`stimulus`] and [`outputs`] of the same design).
#[inline(never)]
pub fn drive(
    dut: &mut dyn Dut,
    stim: &Stimulus,
    from: usize,
    cycles: usize,
    (outputs, buf): (&[usize], &mut [u64]),
) -> u64 {
    let mut sink = 0;
    for sets in stim.iter().cycle().skip(from % stim.len()).take(cycles) {
        for (port, words) in sets {
            dut.set(*port, words).expect("stimulus fits the port");
        }
        dut.step();
        for o in outputs {
            dut.get_into(*o, buf).expect("readable");
            sink ^= buf[0];
        }
    }
    sink
}
