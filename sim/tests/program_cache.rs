//! The code cache's compiled programs: a design simulated again starts from what
//! the compiler made of it the first time, keyed by its contents (its instances'
//! modules included), and simulates exactly as a fresh compile does; a damaged
//! entry is a miss, compiled afresh and replaced.

use hdl::{Module, ModuleBuilder, ResetPolarity};
use sim::{Backend, CodeCache, Simulator};

/// A child that adds `k` to its input every cycle into a register.
fn adder(k: u64) -> Module {
    let mut m = ModuleBuilder::new("adder");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let x = m.input("x", 16);
    let kk = m.lit(k, 16);
    let sum = m.add(x, kk);
    let sum = m.slice(sum, 0, 16);
    let acc = m.register(clk, "acc", sum);
    m.output("y", acc);
    m.finish().unwrap()
}

/// Two instances of `adder(k)` in a chain and eight side by side (which the
/// compiler runs as vector loops), with a memory and a wide port beside them: the
/// design differs between values of `k` only inside its child module.
fn chain(k: u64) -> Module {
    let child = adder(k);
    let mut m = ModuleBuilder::new("chain");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let x = m.input("x", 16);
    let wide = m.input("wide", 130);
    let mut v = x;
    for name in ["u0", "u1"] {
        let u = m.instance(name, &child);
        m.bind_domain(u, "clk", clk);
        m.connect(u, "x", v);
        v = m.instance_output(u, "y");
    }
    let mut lanes = Vec::new();
    for lane in 0..8 {
        let u = m.instance(&format!("lane{lane}"), &child);
        m.bind_domain(u, "clk", clk);
        let offset = m.lit(lane * 1000, 16);
        let input = m.xor(x, offset);
        m.connect(u, "x", input);
        lanes.push(m.instance_output(u, "y"));
    }
    let lanes = m.concat(&lanes);
    let mem = m.memory("ram", 16, 8, None);
    let a = m.slice(x, 0, 3);
    let one = m.lit(1, 1);
    m.mem_write(mem, clk, a, v, one);
    let q = m.mem_read(mem, clk, "ram_q", a, None);
    let w = m.register(clk, "wide_r", wide);
    m.output("y", v);
    m.output("q", q);
    m.output("w", w);
    m.output("lanes", lanes);
    m.finish().unwrap()
}

/// The cache's compiled programs (not its engines), sorted.
fn programs(cache: &CodeCache) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(cache.dir())
        .into_iter()
        .flatten()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wsprog"))
        .collect();
    files.sort();
    files
}

/// Runs `s` and a freshly compiled interpreter of `m` side by side from a reset
/// for `cycles` cycles of changing inputs, comparing every output and a named
/// net inside an instance at every cycle; halfway through, `s` finishes building
/// its compiled engine and runs on it.
fn agrees_with_a_fresh_compile(s: &mut Simulator, m: &Module, cycles: u64) {
    let mut reference = Simulator::with_backend(m, Backend::Interpreted).unwrap();
    for sim in [&mut *s, &mut reference] {
        sim.reset(1);
    }
    for cycle in 0..cycles {
        if cycle == cycles / 2 {
            s.finish_compile().unwrap();
        }
        for sim in [&mut *s, &mut reference] {
            sim.set_u64("x", cycle * 7 % 1000).unwrap();
            let wide = hdl::Bits::from_u128((cycle as u128) << 100 | cycle as u128, 130).unwrap();
            sim.set("wide", &wide).unwrap();
            sim.step();
        }
        for port in ["y", "q", "w", "lanes"] {
            assert_eq!(
                s.get(port).unwrap(),
                reference.get(port).unwrap(),
                "{port} at cycle {cycle}"
            );
        }
        assert_eq!(s.peek("u1.acc").unwrap(), reference.peek("u1.acc").unwrap());
    }
}

#[test]
fn a_code_cache_hands_a_later_simulator_its_compiled_program() {
    let dir = tempfile::tempdir().unwrap();
    let cache = CodeCache::new(dir.path().join("cache"));
    let mut first = Simulator::with_cache(&chain(3), &cache).unwrap();
    assert!(!first.program_from_cache(), "an empty cache");
    // The compiled engine's thread writes the program before it builds.
    first.finish_compile().unwrap();
    let stored = programs(&cache);
    assert_eq!(stored.len(), 1, "{stored:?}");
    let bytes = std::fs::read(&stored[0]).unwrap();

    // The same design, generated again (other module objects, same contents): its
    // program from the cache, on the interpreter and then on the compiled engine.
    let m = chain(3);
    let mut second = Simulator::with_cache(&m, &cache).unwrap();
    assert!(second.program_from_cache());
    agrees_with_a_fresh_compile(&mut second, &m, 80);
    assert_eq!(programs(&cache), stored, "a hit stores nothing");

    // A design that differs only inside its child module has its own entry.
    let other = chain(5);
    let mut third = Simulator::with_cache(&other, &cache).unwrap();
    assert!(!third.program_from_cache());
    agrees_with_a_fresh_compile(&mut third, &other, 40);
    assert_eq!(programs(&cache).len(), 2);

    // An entry cut short, or with one byte changed, is a miss: compiled afresh
    // (to the same bytes) and replaced.
    let last = bytes.len() - 1;
    for spoil in [
        bytes[..bytes.len() / 2].to_vec(),
        [&bytes[..last], &[bytes[last] ^ 1]].concat(),
        [&bytes[..30], &[bytes[30] ^ 0x80], &bytes[31..]].concat(),
    ] {
        std::fs::write(&stored[0], spoil).unwrap();
        let mut again = Simulator::with_cache(&m, &cache).unwrap();
        assert!(!again.program_from_cache());
        agrees_with_a_fresh_compile(&mut again, &m, 20);
        assert_eq!(std::fs::read(&stored[0]).unwrap(), bytes);
    }
    assert!(Simulator::with_cache(&m, &cache)
        .unwrap()
        .program_from_cache());
}

#[test]
fn without_a_cache_every_start_compiles() {
    let m = chain(3);
    for s in [
        Simulator::new(&m).unwrap(),
        Simulator::with_backend(&m, Backend::Interpreted).unwrap(),
    ] {
        assert!(!s.program_from_cache());
    }
}
