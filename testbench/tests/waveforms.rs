//! Waveform snapshots of short, meaningful windows, taken with the same renderer on
//! both engines: the native simulator's rendering is the snapshot, and Verilator's
//! rendering of the emitted Verilog must be identical. (Correctness of these blocks
//! is established by the reference-model and differential tests; the snapshots pin
//! down their cycle-level behaviour.)

use hdl::blocks::fp::{fp_add, FpAddConfig, FpFormat};
use hdl::blocks::{fifo, skid};
use hdl::dsl::AxisConfig;
use hdl::Module;
use testbench::dut::{ports_of, Dut, DutError};
use testbench::pins::{Pin, Pins};
use testbench::waveform::Waveform;

type Drive = Box<dyn FnMut(u32, &mut dyn Dut) -> Result<(), DutError>>;

/// The window rendered on both engines (which must agree).
fn both_engines(
    module: &Module,
    signals: &[&str],
    cycles: u32,
    make_drive: impl Fn() -> Drive,
) -> String {
    Waveform::on_both_engines(module, signals, cycles, make_drive).unwrap_or_else(|e| panic!("{e}"))
}

/// The ports called `names`, resolved once before the run.
fn pins<const N: usize>(m: &Module, names: [&str; N]) -> [Pin; N] {
    Pin::resolve_all(&ports_of(m), names).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn fifo_fill_full_drain() {
    let m = fifo::sync_fifo(8, 4).unwrap();
    let [wr_en, wr_data, rd_en] = pins(&m, ["wr_en", "wr_data", "rd_en"]);
    let wave = both_engines(
        &m,
        &[
            "wr_en", "wr_data", "full", "count", "rd_en", "empty", "rd_data",
        ],
        16,
        || {
            Box::new(move |c, d| {
                // A `&mut &mut dyn Dut`: these are the `Pins` methods, by handle.
                let d = &mut &mut *d;
                d.set_u64(wr_en, (c < 6) as u64)?;
                d.set_u64(wr_data, 0xa0 + c as u64)?;
                d.set_u64(rd_en, (c >= 8) as u64)
            })
        },
    );
    insta::assert_snapshot!(wave);
}

#[test]
fn skid_buffer_stall_and_release() {
    let m = skid::axis_skid(&AxisConfig::words(8)).unwrap();
    let [s_tvalid, s_tdata, s_tready, m_tready] = pins(
        &m,
        [
            "s_axis_tvalid",
            "s_axis_tdata",
            "s_axis_tready",
            "m_axis_tready",
        ],
    );
    let wave = both_engines(
        &m,
        &[
            "s_axis_tvalid",
            "s_axis_tdata",
            "s_axis_tready",
            "m_axis_tvalid",
            "m_axis_tdata",
            "m_axis_tready",
        ],
        12,
        || {
            // Offers beats 0x10, 0x11, … holding each until it is taken; the output
            // stalls in cycles 3 to 5.
            let mut next = 0x10;
            let mut taken = false;
            Box::new(move |c, d| {
                if taken {
                    next += 1;
                }
                let offered = c < 8;
                let d = &mut &mut *d;
                d.set_u64(s_tvalid, offered as u64)?;
                d.set_u64(s_tdata, next)?;
                taken = offered && d.get_u64(s_tready)? == 1;
                d.set_u64(m_tready, !(3..6).contains(&c) as u64)
            })
        },
    );
    insta::assert_snapshot!(wave);
}

/// 1 + 2, 0.1 + 0.2, +inf + -inf, 2^24 + 1 (a tie, to even), then bubbles.
const ADDS: [(u32, u32); 4] = [
    (0x3f80_0000, 0x4000_0000),
    (0x3dcc_cccd, 0x3e4c_cccd),
    (0x7f80_0000, 0xff80_0000),
    (0x4b80_0000, 0x3f80_0000),
];

#[test]
fn three_stage_adder_pipeline() {
    let m = fp_add(&FpAddConfig {
        format: FpFormat::Fp32,
        stages: 3,
        ftz: false,
    })
    .unwrap();
    let [in_valid, a, b] = pins(&m, ["in_valid", "a", "b"]);
    let wave = both_engines(&m, &["in_valid", "a", "b", "out_valid", "y"], 9, || {
        Box::new(move |c, d| {
            let op = ADDS.get(c as usize);
            let d = &mut &mut *d;
            d.set_u64(in_valid, op.is_some() as u64)?;
            d.set_u64(a, op.map_or(0, |o| o.0 as u64))?;
            d.set_u64(b, op.map_or(0, |o| o.1 as u64))
        })
    });
    insta::assert_snapshot!(wave);
}
