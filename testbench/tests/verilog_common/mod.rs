//! Shared pieces of the Verilog integration tests: designs built with the HDL builder
//! that together use every IR operation and state element, writing a design to a
//! temporary directory, and test-bench generators for functional checks.

#![allow(dead_code)] // each test binary uses a different part

use gen::toolchain;
use gen::verilog::Design;
use gen::{emit, write_design, Manifest};
use hdl::dsl::bits_for;
use hdl::{Bits, Module, ModuleBuilder, ResetPolarity, Signal};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Emits `m`, writes it (with its manifest) into a fresh temporary directory.
pub fn write_temp(m: &Module) -> (tempfile::TempDir, Design) {
    let design = emit(m).expect("emit");
    let dir = tempfile::Builder::new()
        .prefix("wirespeed-test-")
        .tempdir()
        .expect("temp dir");
    let manifest = Manifest::new(m, &design);
    write_design(dir.path(), &design, &manifest).expect("write design");
    (dir, design)
}

/// Verilator `-Wall` lint (and a full Verilation, for scheduling warnings such as
/// UNOPTFLAT) and `iverilog -g2005` on `m`'s Verilog; also Yosys
/// `synth_xilinx -family xcup` when `synth` (returning its report).
pub fn check_tools(m: &Module, synth: bool) -> Option<toolchain::SynthReport> {
    let (dir, design) = write_temp(m);
    if let Err(e) = toolchain::verilator_lint(&[dir.path()], &design.top) {
        panic!("{e}\n\n{}", dump(&design));
    }
    if let Err(e) = toolchain::verilator_verilate(&[dir.path()], &design.top) {
        panic!("{e}\n\n{}", dump(&design));
    }
    if let Err(e) = toolchain::iverilog_compile(&[dir.path()], &design.top) {
        panic!("{e}\n\n{}", dump(&design));
    }
    synth.then(|| {
        toolchain::yosys_synth_xilinx(&[dir.path()], &design.top, "xcup")
            .unwrap_or_else(|e| panic!("{e}"))
    })
}

/// All files of a design, for failure messages (only the first lines of long ones).
pub fn dump(d: &Design) -> String {
    let mut s = String::new();
    for (name, text) in &d.files {
        let _ = writeln!(s, "==== {name}");
        for line in text.lines().take(400) {
            let _ = writeln!(s, "{line}");
        }
    }
    s
}

/// A module using every combinational operation on `w`-bit operands, including
/// comparisons against constant zeros/ones, constant shifts by 0, 1, w-1, w and more,
/// and partly used inputs.
pub fn all_ops(name: &str, w: u32) -> Module {
    let mut m = ModuleBuilder::new(name);
    let a = m.input("a", w);
    let b = m.input("b", w);
    let s = m.input("s", 1);
    let amt = m.input("amt", bits_for(w) + 1);
    let spare = m.input("spare", 8);
    let k = m.lit(if w >= 3 { 5 } else { 1 }, w);
    let zero = m.zeros(w);
    let ones = m.ones(w);
    let mut outs: Vec<(String, Signal)> = Vec::new();
    let mut out = |n: &str, v: Signal| outs.push((n.to_string(), v));
    out("o_not", m.not(a));
    out("o_and", m.and(a, b));
    out("o_or", m.or(a, k));
    out("o_xor", m.xor(a, b));
    out("o_add", m.add(a, b));
    out("o_add_wrap", m.add_wrap(a, b));
    out("o_sub", m.sub(a, b));
    out("o_sub_wrap", m.sub_wrap(a, k));
    out("o_mul", m.mul(a, b));
    out("o_mul_narrow", m.mul(a, s));
    out("o_eq", m.eq(a, b));
    out("o_ne", m.ne(a, k));
    out("o_lt", m.lt(a, b));
    out("o_lt_zero", m.lt(a, zero));
    out("o_le_ones", m.le(a, ones));
    out("o_gt_ones", m.gt(a, ones));
    out("o_ge_zero", m.ge(a, zero));
    out("o_le", m.le(a, b));
    out("o_lts", m.lt_signed(a, b));
    out("o_les", m.le_signed(a, k));
    out("o_gts", m.gt_signed(a, zero));
    out("o_ges", m.ge_signed(a, ones));
    out("o_mux", m.mux(s, a, b));
    let idx = m.slice(spare, 0, 2);
    out("o_index", m.index(idx, &[a, b, k]));
    if w > 2 {
        out("o_slice", m.slice(a, 1, w - 2));
    }
    out("o_msb", m.msb(b));
    out("o_concat", m.concat(&[a, s, b]));
    let low = m.slice(a, 0, 3.min(w));
    out("o_repl", m.replicate(low, 3));
    out("o_zext", m.zext(a, w + 7));
    out("o_sext", m.sext(a, w + 7));
    let mut amounts = vec![0, 1, w - 1, w, w + 3];
    amounts.sort_unstable();
    amounts.dedup();
    for n in amounts {
        out(&format!("o_shl_{n}"), m.shl(a, n));
        out(&format!("o_shr_{n}"), m.shr(a, n));
        out(&format!("o_sra_{n}"), m.sra(b, n));
    }
    out("o_shl_by", m.shl_by(a, amt));
    out("o_shr_by", m.shr_by(a, amt));
    out("o_sra_by", m.sra_by(b, amt));
    out("o_rand", m.reduce_and(a));
    out("o_ror", m.reduce_or(a));
    out("o_rxor", m.reduce_xor(b));
    out("o_lz", m.leading_zeros(a));
    out("o_pop", m.popcount(b));
    let sp = m.slice(spare, 5, 2); // spare[4:2] and [7] stay unused
    let sp = m.named("spare_mid", sp);
    out("o_spare", sp);
    let late = m.output_wire("o_late", w);
    let x = m.xor(a, ones);
    m.assign(late, x);
    for (n, v) in outs {
        m.output(&n, v);
    }
    m.finish().expect("all_ops builds")
}

/// Registers with and without reset and enable in two domains (one with an active-low
/// reset) and a third domain that nothing uses.
pub fn registers() -> Module {
    let mut m = ModuleBuilder::new("regs");
    let core = m.domain("core", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let axi = m.domain(
        "axi",
        "S_AXI_ACLK",
        Some("S_AXI_ARESETN"),
        ResetPolarity::ActiveLow,
    );
    let _idle = m.domain("idle", "idle_clk", None, ResetPolarity::ActiveHigh);
    let x = m.input("x", 16);
    let en = m.input("en", 1);
    let y = m.input("y", 8);
    let y_en = m.input("y_en", 1);

    let counter = m.reg_init(core, "counter", 16, 0xbeef);
    let inc = m.add_const_wrap(counter, 1);
    m.set_next(counter, inc);
    m.set_enable(counter, en);
    let pipe = m.delay(core, "pipe", x, 3);
    let held = m.reg(core, "held", 4); // never given a next value: holds
    let acc = m.reg_no_reset(core, "acc", 16);
    let sum = m.add_wrap(acc, pipe);
    m.set_next(acc, sum);
    m.set_enable(acc, en);
    let axi_r = m.register_en(axi, "axi_r", y, y_en);
    let axi_n = m.reg_no_reset(axi, "axi_n", 8);
    m.set_next(axi_n, axi_r);
    let rst_seen = m.reset_active(axi);
    let flag = m.register(axi, "flag", rst_seen);

    m.output("counter_q", counter);
    m.output("acc_q", acc);
    m.output("held_q", held);
    m.output("axi_q", axi_n);
    m.output("flag_q", flag);
    m.finish().expect("registers builds")
}

/// Memories: with initial contents and a non-power-of-two depth, without initial
/// contents (with and without read enable, two read ports), a ROM, and a memory with no
/// read port.
pub fn memories() -> Module {
    let mut m = ModuleBuilder::new("mems");
    let clk = m.domain("core", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let wa = m.input("wa", 9);
    let wd = m.input("wd", 12);
    let we = m.input("we", 1);
    let ra = m.input("ra", 9);
    let re = m.input("re", 1);

    let init: Vec<Bits> = (0..300u64)
        .map(|i| Bits::from_u64((i * 37) % 4096, 12).expect("fits"))
        .collect();
    let table = m.memory("lut_table", 12, 300, Some(init));
    m.mem_write(table, clk, wa, wd, we);
    let t = m.mem_read(table, clk, "lut_table_q", ra, Some(re));

    let buf = m.memory("scratch", 8, 64, None);
    let wa6 = m.slice(wa, 0, 6);
    let wd8 = m.slice(wd, 0, 8);
    m.mem_write(buf, clk, wa6, wd8, we);
    let ra6 = m.slice(ra, 0, 6);
    let b0 = m.mem_read(buf, clk, "scratch_q0", ra6, None);
    let ra6b = m.slice(ra, 3, 6);
    let b1 = m.mem_read(buf, clk, "scratch_q1", ra6b, Some(re));

    let rom_init: Vec<Bits> = (0..16u64)
        .map(|i| Bits::from_u64(15 - i, 4).expect("fits"))
        .collect();
    let rom = m.memory("rom", 4, 16, Some(rom_init));
    let ra4 = m.slice(ra, 0, 4);
    let r = m.mem_read(rom, clk, "rom_q", ra4, None);

    let sink = m.memory("sink", 12, 32, None);
    let wa5 = m.slice(wa, 0, 5);
    m.mem_write(sink, clk, wa5, wd, we);

    m.output("table_out", t);
    m.output("buf_out0", b0);
    m.output("buf_out1", b1);
    m.output("rom_out", r);
    m.finish().expect("memories builds")
}

/// A `width` x `depth` simple-dual-port memory, zero-initialized.
pub fn bram(width: u32, depth: u32) -> Module {
    let mut m = ModuleBuilder::new("bram");
    let clk = m.domain("core", "clk", None, ResetPolarity::ActiveHigh);
    let aw = hdl::ir::addr_width(depth);
    let wa = m.input("wa", aw);
    let wd = m.input("wd", width);
    let we = m.input("we", 1);
    let ra = m.input("ra", aw);
    let re = m.input("re", 1);
    let mem = m.memory("ram", width, depth, None);
    m.mem_write(mem, clk, wa, wd, we);
    let q = m.mem_read(mem, clk, "ram_q", ra, Some(re));
    m.output("q", q);
    m.finish().expect("bram builds")
}

/// Two levels of hierarchy: a registered adder used twice, and two different modules
/// both called `stage` (one inside the child, one at the top).
pub fn hierarchy() -> Module {
    let stage_inner = {
        let mut m = ModuleBuilder::new("stage");
        let a = m.input("a", 8);
        let n = m.not(a);
        m.output("y", n);
        m.finish().expect("stage builds")
    };
    let child = {
        let mut m = ModuleBuilder::new("add_reg");
        let clk = m.domain("core", "clk", Some("rst_n"), ResetPolarity::ActiveLow);
        let a = m.input("a", 8);
        let b = m.input("b", 8);
        let u = m.instance("inv", &stage_inner);
        m.connect(u, "a", b);
        let nb = m.instance_output(u, "y");
        let s = m.add(a, nb);
        let r = m.register(clk, "sum", s);
        m.output("y", r);
        m.output("unused_port", nb);
        m.finish().expect("add_reg builds")
    };
    let stage_top = {
        let mut m = ModuleBuilder::new("stage");
        let a = m.input("a", 9);
        let b = m.input("b", 9);
        let x = m.xor(a, b);
        m.output("y", x);
        m.output("lo", a);
        m.finish().expect("stage (top) builds")
    };
    let mut m = ModuleBuilder::new("hier_top");
    let clk = m.domain("core", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let a = m.input("a", 8);
    let b = m.input("b", 8);
    let u0 = m.instance("u0", &child);
    let u1 = m.instance("u1", &child);
    for (u, x, y) in [(u0, a, b), (u1, b, a)] {
        m.bind_domain(u, "core", clk);
        m.connect(u, "a", x);
        m.connect(u, "b", y);
    }
    let y0 = m.instance_output(u0, "y");
    let y1 = m.instance_output(u1, "y");
    let st = m.instance("st", &stage_top);
    m.connect(st, "a", y0);
    m.connect(st, "b", y1);
    let y = m.instance_output(st, "y");
    m.output("y", y);
    m.finish().expect("hierarchy builds")
}

/// Values of one module's ports, for test-bench generation: `(name, width)`.
pub fn data_ports(m: &Module, dir: hdl::ir::Direction) -> Vec<(String, u32)> {
    m.ports
        .iter()
        .filter(|p| p.direction == dir && p.kind == hdl::ir::PortKind::Data)
        .map(|p| (p.name.clone(), m.net(p.net).width))
        .collect()
}

/// Which simulator runs a generated test bench.
#[derive(Clone, Copy, Debug)]
pub enum Engine {
    /// Icarus Verilog.
    Icarus,
    /// Verilator (`--binary`).
    Verilator,
}

/// Runs a combinational `m` (data ports only, all at most 128 bits wide) on `vectors`
/// (one value per data input, in port order) and returns one value per data output per
/// vector, as the simulator printed them.
pub fn run_comb(m: &Module, vectors: &[Vec<u128>], engine: Engine) -> Vec<Vec<u128>> {
    let (dir, design) = write_temp(m);
    let ins = data_ports(m, hdl::ir::Direction::Input);
    let outs = data_ports(m, hdl::ir::Direction::Output);
    let total: u32 = ins.iter().map(|(_, w)| w).sum();
    let hex_path = dir.path().join("vectors.hex");
    let mut hex = String::new();
    for v in vectors {
        let mut packed = Bits::zero(total);
        let mut pos = total;
        for ((_, w), value) in ins.iter().zip(v) {
            pos -= w;
            for i in 0..*w {
                packed.set_bit(pos + i, (value >> i) & 1 == 1);
            }
        }
        let _ = writeln!(hex, "{}", packed.to_hex());
    }
    std::fs::write(&hex_path, hex).expect("write vectors");

    let range = |w: u32| {
        if w == 1 {
            String::new()
        } else {
            format!("[{}:0] ", w - 1)
        }
    };
    let mut tb = String::from("module tb;\n");
    for (n, w) in &ins {
        let _ = writeln!(tb, "    reg {}{n};", range(*w));
    }
    for (n, w) in &outs {
        let _ = writeln!(tb, "    wire {}{n};", range(*w));
    }
    let _ = writeln!(
        tb,
        "    reg [{}:0] vec [0:{}];",
        total - 1,
        vectors.len() - 1
    );
    tb.push_str("    integer i;\n");
    let conns: Vec<String> = ins
        .iter()
        .chain(&outs)
        .map(|(n, _)| format!(".{n}({n})"))
        .collect();
    let _ = writeln!(tb, "    {} dut ({});", design.top, conns.join(", "));
    let in_names: Vec<&str> = ins.iter().map(|(n, _)| n.as_str()).collect();
    let fmt: Vec<&str> = outs.iter().map(|_| "%h").collect();
    let out_names: Vec<&str> = outs.iter().map(|(n, _)| n.as_str()).collect();
    let _ = writeln!(tb, "    initial begin");
    let _ = writeln!(tb, "        $readmemh(\"{}\", vec);", hex_path.display());
    let _ = writeln!(
        tb,
        "        for (i = 0; i < {}; i = i + 1) begin",
        vectors.len()
    );
    let _ = writeln!(tb, "            {{{}}} = vec[i];", in_names.join(", "));
    let _ = writeln!(
        tb,
        "            #1 $display(\"R {}\", {});",
        fmt.join(" "),
        out_names.join(", ")
    );
    tb.push_str("        end\n        $finish;\n    end\nendmodule\n");
    let tb_path = dir.path().join("tb.v");
    std::fs::write(&tb_path, tb).expect("write tb");
    let sources: Vec<PathBuf> = design
        .files
        .iter()
        .map(|(n, _)| dir.path().join(n))
        .chain([tb_path])
        .collect();
    let stdout = match engine {
        Engine::Icarus => gen::toolchain::iverilog_run(&sources, "tb"),
        Engine::Verilator => gen::toolchain::verilator_run(&sources, "tb"),
    }
    .unwrap_or_else(|e| panic!("{e}"));
    let rows = parse_rows(&stdout, outs.len());
    assert_eq!(
        rows.len(),
        vectors.len(),
        "{engine:?} printed a row per vector"
    );
    rows
}

/// The `R ...` lines of a test bench's output as hex numbers.
pub fn parse_rows(stdout: &str, n: usize) -> Vec<Vec<u128>> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("R "))
        .map(|l| {
            let row: Vec<u128> = l
                .split_whitespace()
                .map(|h| u128::from_str_radix(h, 16).unwrap_or_else(|_| panic!("not hex: {l}")))
                .collect();
            assert_eq!(row.len(), n, "row {l}");
            row
        })
        .collect()
}

/// Paths of a design's files in `dir`.
pub fn files_in(dir: &Path, d: &Design) -> Vec<PathBuf> {
    d.files.iter().map(|(n, _)| dir.join(n)).collect()
}

/// Corner cases: 1-bit memories of depth 2 and 3 (no read enable), a 1-bit register
/// reset to 1, a child module without ports, an output that is a constant, and a
/// leading-zero count of a 1-bit and a power-of-two-wide value, and names only
/// SystemVerilog reserves.
pub fn corners() -> Module {
    let blank = {
        let mut m = ModuleBuilder::new("blank");
        let _ = m.lit(3, 2);
        m.finish().expect("blank builds")
    };
    let mut m = ModuleBuilder::new("corners");
    let clk = m.domain("core", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let a = m.input("a", 1);
    let a2 = m.input("a2", 2);
    let two = m.memory("two", 1, 2, None);
    m.mem_write(two, clk, a, a, a);
    let q2 = m.mem_read(two, clk, "q_two", a, None);
    let init: Vec<Bits> = (0..3u64)
        .map(|i| Bits::from_u64(i & 1, 1).expect("fits"))
        .collect();
    let three = m.memory("three", 1, 3, Some(init));
    let q3 = m.mem_read(three, clk, "q_three", a2, None);
    let one = m.reg_init(clk, "one", 1, 1);
    let n = m.not(one);
    m.set_next(one, n);
    let _u = m.instance("u_blank", &blank);
    let k = m.lit(0x2a, 6);
    let lz1 = m.leading_zeros(a);
    let w16 = m.input("w16", 16);
    let lz16 = m.leading_zeros(w16);
    // Names SystemVerilog reserves but Verilog-2005 (and the builder) allow.
    let global = m.input("global", 4);
    let cross = m.not(global);
    let cross = m.named("cross", cross);
    m.output("soft", cross);
    m.output("q2", q2);
    m.output("q3", q3);
    m.output("one_q", one);
    m.output("k", k);
    m.output("lz1", lz1);
    m.output("lz16", lz16);
    m.finish().expect("corners builds")
}
