//! Registers (reset value, enable, no reset, pipelines, counters), memories
//! (read-first, init contents, out-of-range reads, read-enable hold) and a 4096-bit
//! register/adder pipeline, checked against expectations computed in the test.

mod common;

use common::*;
use hdl::{Bits, Module, ModuleBuilder, ResetPolarity};
use rand::Rng;
use sim::Simulator;
use std::collections::VecDeque;

fn regs_module() -> Module {
    let mut m = ModuleBuilder::new("regs");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let d = m.input("d", 8);
    let en = m.input("en", 1);
    let r_init = m.reg_init(clk, "r_init", 8, 0xa5);
    m.set_next(r_init, d);
    let r_en = m.register_en(clk, "r_en", d, en);
    let r_nr = m.reg_no_reset(clk, "r_nr", 8);
    m.set_next(r_nr, d);
    let piped = m.delay(clk, "pipe", d, 3);
    let cnt = m.reg(clk, "cnt", 4);
    let next = m.add_const_wrap(cnt, 1);
    m.set_next(cnt, next);
    let held = m.reg_init(clk, "held", 8, 7); // never given a next value: holds
    m.output("q_init", r_init);
    m.output("q_en", r_en);
    m.output("q_nr", r_nr);
    m.output("q_pipe", piped);
    m.output("q_cnt", cnt);
    m.output("q_held", held);
    m.finish().unwrap()
}

#[test]
fn registers_start_at_zero_and_follow_reset_enable_and_no_reset() {
    let mut s = Simulator::new(&regs_module()).unwrap();
    for q in ["q_init", "q_en", "q_nr", "q_pipe", "q_cnt", "q_held"] {
        assert_eq!(
            s.get_u64(q).unwrap(),
            0,
            "{q} starts at 0, not its reset value"
        );
    }
    assert_eq!(
        s.get_u64("rst").unwrap(),
        0,
        "active-high reset starts inactive"
    );

    s.set_u64("d", 0x3c).unwrap();
    s.set_u64("en", 0).unwrap();
    s.set_u64("rst", 1).unwrap();
    s.step();
    assert_eq!(s.get_u64("q_init").unwrap(), 0xa5);
    assert_eq!(s.get_u64("q_en").unwrap(), 0);
    assert_eq!(
        s.get_u64("q_nr").unwrap(),
        0x3c,
        "no-reset register ignores reset"
    );
    assert_eq!(s.get_u64("q_cnt").unwrap(), 0);
    assert_eq!(s.get_u64("q_held").unwrap(), 7);

    s.set_u64("rst", 0).unwrap();
    s.step();
    assert_eq!(s.get_u64("q_init").unwrap(), 0x3c);
    assert_eq!(s.get_u64("q_en").unwrap(), 0, "disabled register holds");
    assert_eq!(s.get_u64("q_cnt").unwrap(), 1);
    assert_eq!(s.get_u64("q_held").unwrap(), 7);

    s.set_u64("en", 1).unwrap();
    s.set_u64("d", 0x77).unwrap();
    s.step();
    assert_eq!(s.get_u64("q_en").unwrap(), 0x77);
    s.set_u64("en", 0).unwrap();
    s.set_u64("d", 0x11).unwrap();
    s.step_n(3);
    assert_eq!(s.get_u64("q_en").unwrap(), 0x77);
    assert_eq!(s.get_u64("q_init").unwrap(), 0x11);

    s.set_u64("en", 1).unwrap();
    s.reset(2);
    assert_eq!(s.get_u64("q_en").unwrap(), 0, "reset wins over enable");
    assert_eq!(s.get_u64("q_cnt").unwrap(), 0);
    assert_eq!(s.get_u64("q_init").unwrap(), 0xa5);
    assert_eq!(s.get_u64("rst").unwrap(), 0, "reset() deasserts at the end");
    assert_eq!(s.get_u64("q_nr").unwrap(), 0x11);
    assert_eq!(s.cycles(), 8);
}

#[test]
fn pipeline_delays_and_counter_wraps() {
    let mut rng = rng("pipeline");
    let mut s = Simulator::new(&regs_module()).unwrap();
    s.reset(1);
    let mut history: VecDeque<u64> = VecDeque::from(vec![0, 0, 0]);
    for cycle in 1..=100u64 {
        let d: u64 = rng.gen_range(0..256);
        s.set_u64("d", d).unwrap();
        history.push_back(d);
        s.step();
        history.pop_front();
        assert_eq!(s.get_u64("q_pipe").unwrap(), history[0], "cycle {cycle}");
        assert_eq!(s.get_u64("q_cnt").unwrap(), cycle % 16, "cycle {cycle}");
        assert_eq!(s.peek_u64("pipe_d1").unwrap(), d);
    }
}

fn mem_module() -> Module {
    let mut m = ModuleBuilder::new("ram_top");
    let clk = m.domain("clk", "clk", None, ResetPolarity::ActiveHigh);
    let init: Vec<Bits> = (0..5)
        .map(|i| Bits::from_u64(10 + i, 16).unwrap())
        .collect();
    let mem = m.memory("ram", 16, 5, Some(init));
    let waddr = m.input("waddr", 3);
    let wdata = m.input("wdata", 16);
    let we = m.input("we", 1);
    let raddr = m.input("raddr", 3);
    let ren = m.input("ren", 1);
    let raddr2 = m.input("raddr2", 3);
    m.mem_write(mem, clk, waddr, wdata, we);
    let rdata = m.mem_read(mem, clk, "rdata", raddr, Some(ren));
    let rdata2 = m.mem_read(mem, clk, "rdata2", raddr2, None);
    m.output("q", rdata);
    m.output("q2", rdata2);
    m.finish().unwrap()
}

#[test]
fn memory_init_read_first_out_of_range_and_enable_hold() {
    let mut s = Simulator::new(&mem_module()).unwrap();
    assert_eq!(s.get_u64("q").unwrap(), 0, "read data starts at 0");
    for a in 0..5 {
        assert_eq!(s.peek_mem("ram", a).unwrap().to_u64(), Some(10 + a));
    }
    s.set_u64("ren", 1).unwrap();
    s.set_u64("raddr", 2).unwrap();
    s.step();
    assert_eq!(s.get_u64("q").unwrap(), 12, "init contents");

    // Same-address write and read on one edge: the read sees the old word.
    s.set_u64("we", 1).unwrap();
    s.set_u64("waddr", 3).unwrap();
    s.set_u64("wdata", 0xbeef).unwrap();
    s.set_u64("raddr", 3).unwrap();
    s.set_u64("raddr2", 3).unwrap();
    s.step();
    assert_eq!(s.get_u64("q").unwrap(), 13, "read-first");
    assert_eq!(
        s.get_u64("q2").unwrap(),
        13,
        "read-first on the second port"
    );
    s.set_u64("we", 0).unwrap();
    s.step();
    assert_eq!(s.get_u64("q").unwrap(), 0xbeef);

    // Addresses past the depth read 0 and ignore writes.
    s.set_u64("raddr", 6).unwrap();
    s.set_u64("we", 1).unwrap();
    s.set_u64("waddr", 7).unwrap();
    s.step();
    assert_eq!(s.get_u64("q").unwrap(), 0);
    let expect = [10, 11, 12, 0xbeef, 14];
    for (a, v) in expect.iter().enumerate() {
        assert_eq!(s.peek_mem("ram", a as u64).unwrap().to_u64(), Some(*v));
    }
    s.set_u64("we", 0).unwrap();

    // A disabled read port holds its data.
    s.set_u64("raddr", 0).unwrap();
    s.step();
    assert_eq!(s.get_u64("q").unwrap(), 10);
    s.set_u64("ren", 0).unwrap();
    s.set_u64("raddr", 4).unwrap();
    s.step_n(3);
    assert_eq!(s.get_u64("q").unwrap(), 10, "held while disabled");
    s.set_u64("ren", 1).unwrap();
    s.step();
    assert_eq!(s.get_u64("q").unwrap(), 14);
}

#[test]
fn memory_matches_a_read_first_model_on_random_traffic() {
    let mut rng = rng("memory_random");
    let mut s = Simulator::new(&mem_module()).unwrap();
    let mut model: Vec<u64> = (10..15).collect();
    let mut q = 0u64;
    for cycle in 0..2000 {
        let (we, waddr, wdata) = (
            rng.gen_bool(0.5),
            rng.gen_range(0..8),
            rng.gen_range(0..65536),
        );
        let (ren, raddr, raddr2) = (rng.gen_bool(0.7), rng.gen_range(0..8), rng.gen_range(0..8));
        s.set_u64("we", we as u64).unwrap();
        s.set_u64("waddr", waddr).unwrap();
        s.set_u64("wdata", wdata).unwrap();
        s.set_u64("ren", ren as u64).unwrap();
        s.set_u64("raddr", raddr).unwrap();
        s.set_u64("raddr2", raddr2).unwrap();
        s.step();
        let read = |a: u64| model.get(a as usize).copied().unwrap_or(0);
        if ren {
            q = read(raddr);
        }
        let q2 = read(raddr2);
        if we && waddr < 5 {
            model[waddr as usize] = wdata;
        }
        assert_eq!(s.get_u64("q").unwrap(), q, "cycle {cycle}");
        assert_eq!(s.get_u64("q2").unwrap(), q2, "cycle {cycle}");
    }
}

#[test]
fn wide_4096_bit_adder_pipeline_round_trips() {
    const W: u32 = 4096;
    let mut m = ModuleBuilder::new("wide_pipe");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let a = m.input("a", W);
    let b = m.input("b", W);
    let ra = m.register(clk, "ra", a);
    let rb = m.register(clk, "rb", b);
    let sum = m.add_wrap(ra, rb);
    let rs = m.register(clk, "rsum", sum);
    let out = m.delay(clk, "late", rs, 2);
    let echo = m.delay(clk, "echo", a, 4);
    m.output("sum", out);
    m.output("echo", echo);
    let module = m.finish().unwrap();

    let mut rng = rng("wide_pipeline");
    let mut s = Simulator::new(&module).unwrap();
    let (ha, hb, hs, he) = (
        s.port_handle("a").unwrap(),
        s.port_handle("b").unwrap(),
        s.port_handle("sum").unwrap(),
        s.port_handle("echo").unwrap(),
    );
    s.reset(1);
    let mut sums: VecDeque<Bv> = VecDeque::from(vec![vec![false; W as usize]; 4]);
    let mut echoes: VecDeque<Bv> = VecDeque::from(vec![vec![false; W as usize]; 4]);
    for cycle in 0..40 {
        let (x, y) = (
            random_bv(&mut rng, W as usize),
            random_bv(&mut rng, W as usize),
        );
        // Alternate between the Bits and the raw-word interfaces.
        if cycle % 2 == 0 {
            s.set_handle(ha, &to_bits(&x)).unwrap();
            s.set_words(hb, &to_bits(&y).to_words()).unwrap();
        } else {
            s.set_words(ha, &to_bits(&x).to_words()).unwrap();
            s.set("b", &to_bits(&y)).unwrap();
        }
        sums.push_back(add(&x, &y, W as usize));
        echoes.push_back(x);
        s.step();
        sums.pop_front();
        echoes.pop_front();
        let got_sum = Bits::from_words(s.get_words(hs).unwrap(), W);
        assert_eq!(from_bits(&got_sum), sums[0], "sum at cycle {cycle}");
        assert_eq!(
            from_bits(&s.get_handle(he).unwrap()),
            echoes[0],
            "echo at cycle {cycle}"
        );
    }
}
