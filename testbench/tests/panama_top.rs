//! The PANAMA NetFPGA top (core + AXI-Lite register file on its own clock) driven
//! the way a host drives it: every setting written over AXI-Lite at 100 MHz while
//! the datapath runs at 200 MHz, traffic through the NetFPGA streams, counters
//! read and cleared over AXI-Lite. Output frames and counters are checked against
//! the golden model configured with the same register values.

use hdl::blocks::axil_regfile::RegisterMap;
use hdl::blocks::fp::FpFormat;
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::OUTPUT_HELD_CYCLES;
use hdl::panama::top::{panama_top, DEFAULT_AGG_UDP_PORT, ID};
use testbench::axil::{AxiLiteError, AxiLiteMaster};
use testbench::dut::{Dut, NativeDut, VerilatorDut};
use testbench::panama::config::{GoldenConfig, SUME_PORTS};
use testbench::panama::golden::run as golden_run;
use testbench::panama::scenario::Scenario;
use testbench::panama::system::{check, golden_config, StreamDriver};
use testbench::pins::Pins;
use testbench::rng::seeded;
use testbench::verilator::BuildOptions;

/// Datapath clock period (200 MHz, NetFPGA-SUME) and AXI-Lite period (100 MHz), ps.
const DATAPATH_PS: u64 = 5_000;
const AXIL_PS: u64 = 10_000;

/// Byte offset of register `name`.
fn offset(map: &RegisterMap, name: &str) -> u32 {
    map.registers
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("the register map has no `{name}`"))
        .offset
}

/// Writes every register the golden configuration names.
fn configure(dut: &mut dyn Dut, axil: &AxiLiteMaster, map: &RegisterMap, cfg: &GoldenConfig) {
    let mut write = |name: &str, value: u32| {
        axil.write(dut, offset(map, name), value)
            .unwrap_or_else(|e| panic!("writing {name}: {e}"));
    };
    write("agg_udp_port", u32::from(cfg.agg_udp_port));
    for (p, dst) in cfg.bypass_dst.iter().enumerate() {
        write(&format!("bypass_dst{p}"), u32::from(*dst));
    }
    for (s, slot) in cfg.slots.iter().enumerate() {
        write(&format!("slot{s}_job_id"), u32::from(slot.job_id));
        write(&format!("slot{s}_tree_id"), u32::from(slot.tree_id));
        write(&format!("slot{s}_ports"), u32::from(slot.ports));
        write(&format!("slot{s}_enable"), u32::from(slot.enable));
    }
}

/// The SUME-width top with two job slots.
fn config() -> PanamaConfig {
    PanamaConfig {
        slots: 2,
        fifo_depth: 4,
        max_payload_bytes: 256,
        ..PanamaConfig::new(256, &SUME_PORTS)
    }
}

#[test]
fn host_configures_over_axi_lite_and_reads_the_counters_natively() {
    let cfg = config();
    let (top, map) = panama_top(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let mut dut = NativeDut::new(&top).unwrap_or_else(|e| panic!("{e}"));
    host_session(&mut dut, &cfg, &map);
}

#[test]
fn host_configures_over_axi_lite_and_reads_the_counters_on_verilator() {
    let cfg = config();
    let (top, map) = panama_top(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let mut dut =
        VerilatorDut::new(&top, &BuildOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    host_session(&mut dut, &cfg, &map);
}

/// Configures, streams and reads back as described in the module docs.
fn host_session(dut: &mut dyn Dut, cfg: &PanamaConfig, map: &RegisterMap) {
    let cfg = cfg.clone();
    let dut_engine = dut.engine();
    dut.set_clock_period("clk", DATAPATH_PS).unwrap();
    dut.set_clock_period("axil", AXIL_PS).unwrap();
    let axil = AxiLiteMaster::new(dut, "S_AXI_", "axil").unwrap_or_else(|e| panic!("{e}"));
    dut.set_u64("s_axis_tvalid", 0).unwrap();
    dut.set_u64("m_axis_tready", 0).unwrap();
    dut.reset(4);
    // Read-only values reach the AXI-Lite clock through a handshake crossing.
    for _ in 0..32 {
        dut.step();
    }

    // Identity and reset values.
    assert_eq!(axil.read(dut, offset(map, "id")).unwrap(), ID);
    let params = axil.read(dut, offset(map, "params")).unwrap();
    assert_eq!(params & 0xFF, SUME_PORTS.len() as u32, "params: ports");
    assert_eq!(params >> 8 & 0xFF, cfg.slots, "params: slots");
    assert_eq!(
        params >> 21 & 0x7F,
        cfg.fifo_depth - 1,
        "params: fifo depth"
    );
    let agg = offset(map, "agg_udp_port");
    assert_eq!(axil.read(dut, agg).unwrap(), DEFAULT_AGG_UDP_PORT);
    assert!(
        matches!(
            axil.write(dut, offset(map, "id"), 0),
            Err(AxiLiteError::Response { resp: 0b10, .. })
        ),
        "a write to a read-only register is answered with SLVERR"
    );

    // A configuration unlike the defaults: another UDP port, port 0's bypass
    // traffic sent to DMA, two jobs on different port sets, one slot of the two
    // used by a job the traffic never names.
    let mut scenario = Scenario::uniform(2, 4, 3, 128, FpFormat::Fp32);
    scenario.jobs[1].ports = vec![1, 2, 3];
    scenario.background = 0.3;
    let mut golden_cfg = golden_config(&cfg, scenario.slot_configs(cfg.slots as usize));
    golden_cfg.agg_udp_port = 0x1234;
    golden_cfg.bypass_dst[0] = SUME_PORTS[0] << 1;
    configure(dut, &axil, map, &golden_cfg);
    assert_eq!(axil.read(dut, agg).unwrap(), 0x1234);
    // Let the last write cross into the datapath clock.
    for _ in 0..16 {
        dut.step();
    }

    let mut rng = seeded("panama top over axi-lite", 3);
    let frames = scenario.frames(&mut rng, &golden_cfg);
    let want = golden_run(&golden_cfg, &frames).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(want.overflow_at, None);
    let expected = want.frames_out();
    let mut driver = StreamDriver::new(&frames, cfg.data_width);
    let bound = 40 * driver.input_beats() as u64 + 2_000;
    let mut cycle = 0;
    {
        let mut pins = &mut *dut;
        driver
            .step(&mut pins, cycle, false, &mut rng, 1.0, 0.8)
            .unwrap();
        while driver.outputs.len() < expected && cycle < bound {
            pins.step();
            cycle += 1;
            driver
                .step(&mut pins, cycle, true, &mut rng, 1.0, 0.8)
                .unwrap();
        }
        let tvalid = Pins::pin(&pins, "s_axis_tvalid").unwrap();
        Pins::set_u64(&mut pins, tvalid, 0).unwrap();
    }
    let summary = check(&golden_cfg, &want, &driver.outputs)
        .unwrap_or_else(|e| panic!("after {cycle} cycles: {e}"));
    assert!(summary.result_frames > 0 && summary.bypass_frames > 0);
    for _ in 0..16 {
        dut.step();
    }

    // Counters over AXI-Lite equal the model's, and a write clears one.
    let c = &want.counters;
    for (name, value) in c.named() {
        let got = axil.read(dut, offset(map, name)).unwrap();
        assert_eq!(u64::from(got), value, "counter {name} read over AXI-Lite");
    }
    let held = axil.read(dut, offset(map, OUTPUT_HELD_CYCLES)).unwrap();
    assert!(driver.output_held > 0, "the output was back-pressured");
    assert_eq!(
        u64::from(held),
        driver.output_held,
        "output_held_cycles read over AXI-Lite: the cycles the bench refused a beat"
    );
    let packets_in = offset(map, "packets_in");
    axil.write(dut, packets_in, 0).unwrap();
    for _ in 0..16 {
        dut.step();
    }
    assert_eq!(axil.read(dut, packets_in).unwrap(), 0, "cleared by a write");
    assert_eq!(
        u64::from(axil.read(dut, offset(map, "bypassed")).unwrap()),
        c.bypassed,
        "other counters are not cleared"
    );
    println!(
        "panama top ({dut_engine}): {} frames in, {} bypass + {} result frames out equal to the golden model \
         in {cycle} datapath cycles; configured and counters read over AXI-Lite",
        frames.len(),
        summary.bypass_frames,
        summary.result_frames
    );
}
