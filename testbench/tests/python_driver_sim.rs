//! The generated Python drivers (`register_map.py`) driving simulated tops: a
//! `python3` process runs `tests/python/pipe_driver.py` with the driver over a
//! pipe-backed MMIO, and every access it makes is performed here through the
//! AXI-Lite master on the native simulator. PANAMA: `id`, the `params` fields
//! against this configuration, `agg_udp_port`, `full_wait` and a slot's port
//! fields written and read back (and read back here at the map's offsets), refused
//! writes, a counter clear. Lightning: a whole inference (image load, `start()`,
//! polling `status.busy`, logits equal to the golden model), then `clear_stats()`.
//!
//! Needs `python3` (`apt-get install python3`; `scripts/test` installs it).
//!
//! `cargo test -p testbench --test python_driver_sim`

use gen::board::{register_map_python, PythonHost};
use hdl::blocks::axil_regfile::RegisterMap;
use hdl::blocks::fp::FpFormat;
use hdl::lightning::top::{lightning_top, TopConfig};
use hdl::panama::config::PanamaConfig;
use hdl::panama::top::panama_top;
use rand::Rng;
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use testbench::axil::{AxiLiteError, AxiLiteMaster};
use testbench::dut::{Dut, NativeDut};
use testbench::lightning::arith::{AccWidth, OpticalLoss};
use testbench::lightning::closed_loop::hardware_config;
use testbench::lightning::golden::{infer, DatapathConfig, Network};
use testbench::lightning::link::PhotonicLink;
use testbench::lightning::photonic::IdealCore;
use testbench::lightning::top_bench::TopBench;
use testbench::panama::config::SUME_PORTS;
use testbench::rng::seeded;

/// A register window the script's accesses are performed on: `(RDATA, RRESP)` of a
/// read, `BRESP` of a write.
trait Bus {
    fn read(&mut self, addr: u32) -> (u32, u64);
    fn write(&mut self, addr: u32, value: u32) -> u64;
}

/// A design on an engine with its AXI-Lite master.
struct OnMaster<'a> {
    dut: &'a mut dyn Dut,
    axil: AxiLiteMaster,
}

impl Bus for OnMaster<'_> {
    fn read(&mut self, addr: u32) -> (u32, u64) {
        match self.axil.read(self.dut, addr) {
            Ok(v) => (v, 0),
            Err(AxiLiteError::Response { resp, .. }) => (0, resp),
            Err(e) => panic!("read of {addr:#x}: {e}"),
        }
    }
    fn write(&mut self, addr: u32, value: u32) -> u64 {
        match self.axil.write(self.dut, addr, value) {
            Ok(()) => 0,
            Err(AxiLiteError::Response { resp, .. }) => resp,
            Err(e) => panic!("write of {addr:#x}: {e}"),
        }
    }
}

impl Bus for TopBench<'_, IdealCore> {
    fn read(&mut self, addr: u32) -> (u32, u64) {
        self.read_addr(addr)
            .unwrap_or_else(|e| panic!("read of {addr:#x}: {e}"))
    }
    fn write(&mut self, addr: u32, value: u32) -> u64 {
        self.write_addr(addr, value)
            .unwrap_or_else(|e| panic!("write of {addr:#x}: {e}"))
    }
}

/// Writes the driver of `map` into `dir` and runs the pipe script's `session` with
/// `expected`, serving its accesses on `bus`; returns the script's `(reads, writes)`.
fn serve(
    dir: &Path,
    map: &RegisterMap,
    host: PythonHost,
    session: &str,
    expected: &serde_json::Value,
    bus: &mut dyn Bus,
) -> (u64, u64) {
    let driver = dir.join("register_map.py");
    let text = register_map_python(map, session, host).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&driver, text).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/pipe_driver.py");
    let mut child = Command::new("python3")
        .arg(&script)
        .arg(&driver)
        .arg(session)
        .arg(expected.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 ({e}): install it with `apt-get install python3`")
        });
    let mut to_script = child.stdin.take().expect("piped stdin");
    let from_script = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut stderr = child.stderr.take().expect("piped stderr");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).map(|_| text)
    });
    let mut done = None;
    for line in from_script.lines() {
        let line = line.expect("read the script's output");
        let words: Vec<&str> = line.split_whitespace().collect();
        let answer = match words[..] {
            ["R", off] => {
                let (value, resp) = bus.read(number(off));
                format!("{value} {resp}")
            }
            ["W", off, value] => bus.write(number(off), number(value)).to_string(),
            ["DONE", reads, writes] => {
                done = Some((u64::from(number(reads)), u64::from(number(writes))));
                continue;
            }
            _ => panic!("unexpected line from the script: {line}"),
        };
        writeln!(to_script, "{answer}").expect("answer the script");
        to_script.flush().expect("answer the script");
    }
    drop(to_script);
    let status = child.wait().expect("wait for python3");
    let errors = errors.join().expect("stderr reader").unwrap_or_default();
    assert!(status.success(), "the {session} script failed:\n{errors}");
    done.unwrap_or_else(|| panic!("the {session} script did not finish:\n{errors}"))
}

fn number(text: &str) -> u32 {
    text.parse()
        .unwrap_or_else(|_| panic!("`{text}` is not a 32-bit number"))
}

/// Byte offset of register `name` in `map`.
fn offset(map: &RegisterMap, name: &str) -> u32 {
    map.registers
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("the register map has no `{name}`"))
        .offset
}

#[test]
fn panama_driver_over_simulated_axi_lite() {
    let cfg = PanamaConfig {
        slots: 2,
        fifo_depth: 4,
        max_payload_bytes: 256,
        format: FpFormat::Bf16,
        ftz: true,
        ..PanamaConfig::new(256, &SUME_PORTS)
    };
    let (top, map) = panama_top(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let mut dut = NativeDut::new(&top).unwrap_or_else(|e| panic!("{e}"));
    dut.set_clock_period("clk", 5_000).unwrap();
    dut.set_clock_period("axil", 10_000).unwrap();
    let axil = AxiLiteMaster::new(&dut, "S_AXI_", "axil").unwrap_or_else(|e| panic!("{e}"));
    dut.set_u64("s_axis_tvalid", 0).unwrap();
    dut.set_u64("m_axis_tready", 0).unwrap();
    dut.reset(4);
    // Read-only values reach the AXI-Lite clock through a handshake crossing.
    for _ in 0..32 {
        dut.step();
    }
    // What this configuration must read as, from the documented map (PANAMA.md).
    let expected = json!({
        "id": u32::from_be_bytes(*b"PANA"),
        "params": {
            "ports": 4, "slots": 2, "format": 1, "ftz": 1, "width_code": 0,
            "fifo_depth_minus_1": 3,
        },
        "agg_udp_port": 0x5041,
    });
    let tmp = tempfile::tempdir().unwrap();
    let mut bus = OnMaster {
        dut: &mut dut,
        axil: axil.clone(),
    };
    let (reads, writes) = serve(
        tmp.path(),
        &map,
        PythonHost::DevMem,
        "panama",
        &expected,
        &mut bus,
    );
    // id, params, agg_udp_port twice, full_wait, slot1_ports twice, packets_in; the
    // refused writes never reach the bus, the raw one to `id` does.
    assert_eq!((reads, writes), (8, 5), "reads and writes on the bus");
    // The values the driver wrote are where the map says.
    for (name, value) in [
        ("agg_udp_port", 0x1234),
        ("full_wait", 77),
        ("slot1_ports", 0b101),
        ("slot0_ports", 0),
    ] {
        assert_eq!(
            axil.read(&mut dut, offset(&map, name)).unwrap(),
            value,
            "{name}"
        );
    }
}

#[test]
fn lightning_driver_runs_an_inference_over_simulated_axi_lite() {
    let mut rng = seeded("python driver lightning network", 3);
    let sizes = [40usize, 12, 5];
    let shifts: Vec<u32> = (1..sizes.len()).map(|_| rng.gen_range(5..=9)).collect();
    let net = Network::random(&sizes, &shifts, &mut rng).unwrap_or_else(|e| panic!("{e}"));
    let acc = AccWidth::new(24).unwrap_or_else(|e| panic!("{e}"));
    let image: Vec<u8> = (0..sizes[0]).map(|_| rng.gen()).collect();
    let golden = infer(
        &net,
        &image,
        &DatapathConfig {
            acc_width: acc,
            optical_loss: OpticalLoss::UNITY,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .logits;
    assert!(golden.iter().any(|&l| l != 0), "a trivial network");
    let (top, map) = lightning_top(&hardware_config(&net, acc, 1), &TopConfig::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut dut = NativeDut::new(&top).unwrap_or_else(|e| panic!("{e}"));
    for (domain, ps) in [("dac", 1000), ("adc", 1000), ("axil", 2531)] {
        dut.set_clock_period(domain, ps).unwrap();
    }
    dut.reset(4);
    let link = PhotonicLink::new(IdealCore, 10, 3);
    let mut bench = TopBench::new(&mut dut, vec![link], &map, 16).unwrap_or_else(|e| panic!("{e}"));
    bench.idle(20).unwrap();
    let expected = json!({
        "id": u32::from_be_bytes(*b"LGHT"),
        "params": {
            "weight_layers": 2, "acc_width": 24, "adc_samples_per_clock": 16, "logits": 5,
        },
        "preamble_length": 10,
        "image": image,
        "logits": golden,
    });
    let tmp = tempfile::tempdir().unwrap();
    serve(
        tmp.path(),
        &map,
        PythonHost::Pynq,
        "lightning",
        &expected,
        &mut bench,
    );
    assert_eq!(bench.read("runs").unwrap(), 0, "runs after clear_stats");
    assert_eq!(
        bench.read("image_addr").unwrap(),
        2,
        "last image word index"
    );
}
