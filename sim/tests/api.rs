//! The port API's errors and access paths: every user mistake is a `SimError`
//! naming the port, net, domain or memory — never a panic.

use hdl::{Bits, Module, ModuleBuilder, ResetPolarity};
use sim::{SimError, Simulator};

fn module() -> Module {
    let mut m = ModuleBuilder::new("api");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let d = m.input("d", 8);
    let big = m.input("big", 100);
    let r = m.register(clk, "r", d);
    let mem = m.memory("ram", 8, 4, None);
    let a = m.slice(d, 0, 2);
    let one = m.lit(1, 1);
    m.mem_write(mem, clk, a, d, one);
    let q = m.mem_read(mem, clk, "ram_q", a, None);
    m.output("q", r);
    m.output("big_q", big);
    m.output("mq", q);
    m.finish().unwrap()
}

#[test]
fn user_mistakes_are_errors_naming_the_culprit() {
    let mut s = Simulator::new(&module()).unwrap();
    let e = s.set_u64("nope", 1).unwrap_err();
    assert!(matches!(e, SimError::UnknownPort(ref n) if n == "nope"));
    assert!(e.to_string().contains("nope"));
    let e = s.set_u64("d", 256).unwrap_err();
    assert!(
        matches!(e, SimError::ValueTooWide { ref name, width: 8 } if name == "d"),
        "{e}"
    );
    assert!(e.to_string().contains("`d`"));
    let e = s.set("d", &Bits::from_u64(0x1ff, 9).unwrap()).unwrap_err();
    assert!(matches!(e, SimError::ValueTooWide { .. }));
    s.set("d", &Bits::from_u64(0xff, 16).unwrap()).unwrap(); // wider Bits, value fits
    assert!(matches!(s.set_u64("clk", 1), Err(SimError::SetClock(ref n)) if n == "clk"));
    assert!(matches!(s.set_u64("q", 1), Err(SimError::NotAnInput(ref n)) if n == "q"));
    assert!(matches!(s.get_u64("nope"), Err(SimError::UnknownPort(_))));
    assert!(matches!(s.peek("nope.x"), Err(SimError::UnknownNet(_))));
    assert!(matches!(
        s.step_domain("nope"),
        Err(SimError::UnknownDomain(_))
    ));
    assert!(matches!(
        s.cycle_count("nope"),
        Err(SimError::UnknownDomain(_))
    ));
    assert!(matches!(
        s.set_clock_period("clk", 1),
        Err(SimError::BadClockPeriod { period: 1, .. })
    ));
    assert!(matches!(
        s.peek_mem("nope", 0),
        Err(SimError::UnknownMemory(_))
    ));
    assert!(matches!(
        s.peek_mem("ram", 4),
        Err(SimError::AddressOutOfRange {
            addr: 4,
            depth: 4,
            ..
        })
    ));
    assert!(matches!(
        s.poke_mem("ram", 0, &Bits::from_u64(256, 9).unwrap()),
        Err(SimError::ValueTooWide { .. })
    ));
    s.step();
    assert!(matches!(
        s.set_clock_phase("clk", 5),
        Err(SimError::ClockRunning(_))
    ));
    // Resets may be driven directly.
    s.set_u64("rst", 1).unwrap();
    s.step();
    assert_eq!(s.get_u64("q").unwrap(), 0);
}

/// An output computed from two 100-bit inputs: `o = x | y`.
fn or_of_inputs() -> Module {
    let mut m = ModuleBuilder::new("or_of_inputs");
    let x = m.input("x", 100);
    let y = m.input("y", 100);
    let o = m.or(x, y);
    m.output("o", o);
    m.finish().unwrap()
}

#[test]
fn settled_words_are_none_until_an_output_is_settled() {
    let mut s = Simulator::new(&or_of_inputs()).unwrap();
    let x = s.port_handle("x").unwrap();
    let out = s.port_handle("o").unwrap();
    s.set_words(x, &[5, 7]).unwrap();
    assert_eq!(s.settled_words(x), Some(&[5, 7][..]), "an input as set");
    assert_eq!(s.settled_words(out), None, "an output before its settle");
    assert_eq!(s.get_words(out).unwrap(), &[5, 7]);
    assert_eq!(s.settled_words(out), Some(&[5, 7][..]), "after it");
    s.set_words(x, &[5, 7]).unwrap();
    assert_eq!(
        s.settled_words(out),
        Some(&[5, 7][..]),
        "after the same words again"
    );
    s.set_words(x, &[5, 8]).unwrap();
    assert_eq!(
        s.settled_words(out),
        None,
        "after a change in the top word alone"
    );
    assert_eq!(s.get_words(out).unwrap(), &[5, 8]);
    assert!(
        matches!(s.set_words(out, &[1, 2]), Err(SimError::NotAnInput(ref n)) if n == "o"),
        "an output given all its words"
    );
    s.set_words(x, &[9]).unwrap();
    assert_eq!(s.settled_words(out), None, "after its input changed");
    let other = Simulator::new(&or_of_inputs()).unwrap();
    assert_eq!(other.settled_words(out), None, "a foreign handle");
}

/// Writing inputs no output depends on leaves the outputs settled: `q` and `mq`
/// come from a register and a memory's read data, `big_q` is the input `big`'s
/// own words (no logic computes it). Every flagship's outputs depend on registers
/// alone, so its test bench's reads after its writes need no settle.
#[test]
fn outputs_no_written_input_reaches_stay_settled() {
    use sim::Backend;
    for backend in [Backend::Interpreted, Backend::Compiled] {
        let mut s = Simulator::with_backend(&module(), backend).unwrap();
        s.reset(1);
        let (d, big) = (s.port_handle("d").unwrap(), s.port_handle("big").unwrap());
        let (q, big_q) = (s.port_handle("q").unwrap(), s.port_handle("big_q").unwrap());
        for v in [3u64, 200, 17] {
            s.set_words(d, &[v]).unwrap();
            s.step();
            assert_eq!(s.get_words(q).unwrap(), &[v], "{backend:?}: the register");
            s.set_words(d, &[v + 1]).unwrap();
            s.set_words(big, &[v, 1]).unwrap();
            assert_eq!(
                s.settled_words(q),
                Some(&[v][..]),
                "{backend:?}: the register after writes of d and big"
            );
            assert_eq!(
                s.settled_words(big_q),
                Some(&[v, 1][..]),
                "{backend:?}: an output that is an input's words, as set"
            );
        }
    }
}

/// Outputs computed from registers (`sum`) and from an input and a register
/// (`mix`).
fn logic_after_registers() -> Module {
    let mut m = ModuleBuilder::new("after");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let d = m.input("d", 8);
    let r1 = m.register(clk, "r1", d);
    let r2 = m.register(clk, "r2", r1);
    let sum = m.add(r1, r2);
    let mix = m.xor(d, r1);
    m.output("sum", sum);
    m.output("mix", mix);
    m.finish().unwrap()
}

/// Once the compiled engine is tuned, a step of a one-clock design is one call
/// into it, which settles the outputs its edge changed: the reads after the step
/// need no settle, and give the interpreter's values. An input an output depends
/// on, set after the step, still leaves the outputs to settle at their read.
#[test]
fn a_tuned_engines_step_leaves_the_outputs_it_changed_settled() {
    use sim::Backend;
    let m = logic_after_registers();
    let mut tuned = Simulator::with_backend(&m, Backend::Compiled).unwrap();
    tuned.set_tune_after(Some(5));
    let mut reference = Simulator::with_backend(&m, Backend::Interpreted).unwrap();
    for s in [&mut tuned, &mut reference] {
        s.reset(1);
    }
    let read = |s: &mut Simulator, port: &str| s.get_u64(port).unwrap();
    let mut checked = 0;
    for cycle in 0..40u64 {
        // The step that tunes the engine still runs on the first one.
        let tuned_before = tuned.tuned_stats().is_some();
        for s in [&mut tuned, &mut reference] {
            s.set_u64("d", cycle * 37 % 256).unwrap();
            s.step();
        }
        if !tuned_before {
            continue;
        }
        checked += 1;
        for port in ["sum", "mix"] {
            let h = tuned.port_handle(port).unwrap();
            let expected = read(&mut reference, port);
            assert_eq!(
                tuned.settled_words(h),
                Some(&[expected][..]),
                "{port} after the step of cycle {cycle}"
            );
        }
    }
    assert!(checked >= 30, "{checked} steps of the tuned engine checked");
    let mix = tuned.port_handle("mix").unwrap();
    for s in [&mut tuned, &mut reference] {
        s.set_u64("d", 0x5a).unwrap();
    }
    assert_eq!(tuned.settled_words(mix), None, "after its input changed");
    assert_eq!(read(&mut tuned, "mix"), read(&mut reference, "mix"));
}

#[test]
fn wide_values_and_handles() {
    let mut s = Simulator::new(&module()).unwrap();
    let big = s.port_handle("big").unwrap();
    let out = s.port_handle("big_q").unwrap();
    s.set_words(big, &[5, 7]).unwrap();
    assert_eq!(s.get_words(out).unwrap(), &[5, 7]);
    assert!(matches!(
        s.get_u64("big_q"),
        Err(SimError::NotU64 { width: 100, .. })
    ));
    assert!(matches!(
        s.get_handle_u64(out),
        Err(SimError::NotU64 { .. })
    ));
    s.set_words(big, &[9]).unwrap();
    assert_eq!(s.get_handle_u64(out).unwrap(), 9);
    assert_eq!(s.get_u64("big_q").unwrap(), 9);
    s.set_words(big, &[1, 0, 0, 0]).unwrap();
    assert!(matches!(
        s.set_words(big, &[1, 1 << 36]),
        Err(SimError::ValueTooWide { .. })
    ));
    assert!(matches!(
        s.set_words(big, &[1, 0, 1]),
        Err(SimError::ValueTooWide { .. })
    ));
    s.set_handle_u64(big, u64::MAX).unwrap();
    assert_eq!(s.get_handle(out).unwrap().to_u64(), Some(u64::MAX));
    let full = Bits::ones(100);
    s.set_handle(big, &full).unwrap();
    assert_eq!(s.get("big_q").unwrap(), full);
    assert_eq!(s.peek("big").unwrap(), full);

    let other = Simulator::new(&module()).unwrap();
    let foreign = other.port_handle("big").unwrap();
    assert!(matches!(
        s.set_handle_u64(foreign, 1),
        Err(SimError::ForeignHandle)
    ));
    let dom = other.domain_handle("clk").unwrap();
    assert!(matches!(s.step_domain(dom), Err(SimError::ForeignHandle)));
    assert!(matches!(
        s.port_handle("zzz"),
        Err(SimError::UnknownPort(_))
    ));
}

#[test]
fn memories_can_be_peeked_and_poked() {
    let mut s = Simulator::new(&module()).unwrap();
    s.poke_mem("ram", 2, &Bits::from_u64(0x42, 8).unwrap())
        .unwrap();
    // Address = d[1:0]; the write port writes d there every edge, read-first.
    s.set_u64("d", 0x02).unwrap();
    s.step();
    assert_eq!(s.get_u64("mq").unwrap(), 0x42);
    assert_eq!(s.peek_mem("ram", 2).unwrap().to_u64(), Some(0x02));
    s.step();
    assert_eq!(s.get_u64("mq").unwrap(), 0x02);
    assert_eq!(s.peek_u64("ram_q").unwrap(), 0x02);
    let names: Vec<&str> = s.ports().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["clk", "rst", "d", "big", "q", "big_q", "mq"]);
}

/// The default engine starts on the interpreter while the compiled engine builds
/// in the background, then switches; which engine ran a cycle never shows in the
/// values (compared every cycle with the interpreter alone). An explicit backend
/// runs from the first cycle on.
#[test]
fn the_default_engine_switches_to_compiled_code_without_a_seam() {
    use sim::Backend;
    let m = module();
    let compiled = Simulator::with_backend(&m, Backend::Compiled).unwrap();
    assert_eq!(compiled.backend(), Backend::Compiled);
    assert_eq!(compiled.compiled_from_cycle(), Some(0));
    let mut tiered = Simulator::new(&m).unwrap();
    let mut reference = Simulator::with_backend(&m, Backend::Interpreted).unwrap();
    for s in [&mut tiered, &mut reference] {
        s.reset(1);
    }
    agree(&mut tiered, &mut reference, 0..100);
    tiered.finish_compile().unwrap();
    assert_eq!(tiered.backend(), Backend::Compiled);
    assert!(tiered.compile_stats().is_some());
    // Reset took one cycle: at most 101 ran before the switch.
    let from = tiered.compiled_from_cycle().expect("switched");
    assert!(from <= tiered.cycles() && tiered.cycles() == 101, "{from}");
    agree(&mut tiered, &mut reference, 100..200);
    assert_eq!(reference.compiled_from_cycle(), None);
}

/// Runs `a` and `b` on the same stimulus (a function of the cycle number) for
/// `cycles` and checks that every output agrees at every cycle.
fn agree(a: &mut Simulator, b: &mut Simulator, cycles: std::ops::Range<u64>) {
    for cycle in cycles {
        let d = cycle.wrapping_mul(0x9e37_79b9) >> 7 & 0xff;
        let big = Bits::from_u64(cycle.wrapping_mul(0x1234_5678_9abc), 100).unwrap();
        for s in [&mut *a, &mut *b] {
            s.set_u64("d", d).unwrap();
            s.set("big", &big).unwrap();
            s.step();
        }
        for port in ["q", "big_q", "mq"] {
            assert_eq!(
                a.get(port).unwrap(),
                b.get(port).unwrap(),
                "{port} at cycle {cycle}"
            );
        }
    }
}

/// [`agree`] for `cycles` cycles after a reset of both.
fn agree_after_reset(a: &mut Simulator, b: &mut Simulator, cycles: u64) {
    for s in [&mut *a, &mut *b] {
        s.reset(1);
    }
    agree(a, b, 0..cycles);
}

/// The files of `dir`, sorted (none before a first store creates it).
fn files_in(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// The compiled engines of a code cache in `dir` (not its compiled programs).
fn engines_in(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = files_in(dir);
    files.retain(|f| f.extension().is_some_and(|e| e == "wsimage"));
    files
}

/// Sets the time of the file at `path` to `secs` seconds ago.
fn set_age(path: &std::path::Path, secs: u64) {
    let when = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(when).unwrap();
}

#[test]
fn a_code_cache_hands_a_later_simulator_its_compiled_engine() {
    use sim::{Backend, CodeCache};
    let m = module();
    let dir = tempfile::tempdir().unwrap();
    let cache = CodeCache::new(dir.path().join("engines"));
    let entries = || engines_in(cache.dir());
    let mut first = Simulator::with_cache(&m, &cache).unwrap();
    first.finish_compile().unwrap();
    assert!(!first.compile_stats().unwrap().cached);
    let stored = entries();
    assert_eq!(stored.len(), 1, "{stored:?}");
    let image = std::fs::read(&stored[0]).unwrap();

    // The same design again: the stored code, loaded in the background.
    let mut second = Simulator::with_cache(&m, &cache).unwrap();
    second.finish_compile().unwrap();
    assert_eq!(second.compiled_from_cycle(), Some(0));
    assert!(second.compile_stats().unwrap().cached);
    let mut reference = Simulator::with_backend(&m, Backend::Interpreted).unwrap();
    agree_after_reset(&mut second, &mut reference, 200);

    // An entry cut short, or with one byte changed, is a miss: rebuilt and replaced.
    let changed = image.len() - 1;
    for spoil in [
        image[..image.len() / 2].to_vec(),
        [&image[..changed], &[image[changed] ^ 1]].concat(),
    ] {
        std::fs::write(&stored[0], spoil).unwrap();
        let mut again = Simulator::with_cache(&m, &cache).unwrap();
        again.finish_compile().unwrap();
        assert!(!again.compile_stats().unwrap().cached);
        assert_eq!(std::fs::read(&stored[0]).unwrap(), image);
    }

    // Another design has its own entry; the first one's still loads.
    let counter = hdl::blocks::counter::up_counter(8).unwrap();
    Simulator::with_cache(&counter, &cache)
        .unwrap()
        .finish_compile()
        .unwrap();
    assert_eq!(entries().len(), 2);
    let mut loaded = Simulator::with_cache(&m, &cache).unwrap();
    loaded.finish_compile().unwrap();
    assert!(loaded.compile_stats().unwrap().cached);
    let mut reference = Simulator::with_backend(&m, Backend::Interpreted).unwrap();
    agree_after_reset(&mut loaded, &mut reference, 50);

    // A store that cannot land (a directory where the entry goes) leaves no
    // temporary file behind, and the simulator runs its freshly built engine.
    let before = entries();
    std::fs::remove_file(&stored[0]).unwrap();
    std::fs::create_dir_all(stored[0].join("blocked")).unwrap();
    let mut unstored = Simulator::with_cache(&m, &cache).unwrap();
    unstored.finish_compile().unwrap();
    assert!(!unstored.compile_stats().unwrap().cached);
    assert_eq!(entries(), before);
    let mut reference = Simulator::with_backend(&m, Backend::Interpreted).unwrap();
    agree_after_reset(&mut unstored, &mut reference, 50);
}

#[test]
fn a_code_cache_keeps_its_budget_by_dropping_the_entries_used_longest_ago() {
    use sim::{Backend, CodeCache};
    let designs = [
        module(),
        hdl::blocks::counter::up_counter(8).unwrap(),
        hdl::blocks::counter::up_counter(9).unwrap(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let obtain = |cache: &CodeCache, m: &Module| {
        let mut s = Simulator::with_cache(m, cache).unwrap();
        s.finish_compile().unwrap();
        s
    };
    // Each design's entries, its compiled program and its compiled engine, from a
    // cache with room for all.
    let roomy = CodeCache::new(dir.path().join("sizes"));
    assert_eq!(roomy.budget(), CodeCache::DEFAULT_BUDGET);
    let mut entry = Vec::new();
    for m in &designs {
        let before = files_in(roomy.dir());
        obtain(&roomy, m);
        let after = files_in(roomy.dir());
        let new: Vec<_> = after.iter().filter(|f| !before.contains(f)).collect();
        let name = |ext: &str| {
            let file = new.iter().find(|f| f.extension().is_some_and(|e| e == ext));
            file.unwrap_or_else(|| panic!("a .{ext} entry per design: {after:?}"))
                .file_name()
                .unwrap()
                .to_owned()
        };
        assert_eq!(new.len(), 2, "two entries per design: {after:?}");
        entry.push([name("wsprog"), name("wsimage")]);
    }
    let size = |name: &std::ffi::OsStr| std::fs::metadata(roomy.dir().join(name)).unwrap().len();
    let total: u64 = entry.iter().flatten().map(|e| size(e)).sum();

    // Room for all six but one byte: storing the third design's engine drops the
    // entry used longest ago, which is the second design's program once the
    // first design has been loaded again.
    let cache = CodeCache::with_budget(dir.path().join("bounded"), total - 1);
    for m in &designs[..2] {
        obtain(&cache, m);
    }
    let program: Vec<_> = entry.iter().map(|[p, _]| cache.dir().join(p)).collect();
    let engine: Vec<_> = entry.iter().map(|[_, e]| cache.dir().join(e)).collect();
    for (file, age) in [
        (&program[0], 7200),
        (&engine[0], 7200),
        (&program[1], 3600),
        (&engine[1], 3500),
    ] {
        set_age(file, age);
    }
    // Temporary files of a process killed mid-store: an old one, a fresh one.
    let (stale, fresh) = (
        cache.dir().join("dead.wsimage.tmp-1-0"),
        cache.dir().join("live.wsimage.tmp-2-0"),
    );
    for t in [&stale, &fresh] {
        std::fs::write(t, b"partial").unwrap();
    }
    set_age(&stale, 7200);
    let mut renewed = obtain(&cache, &designs[0]);
    assert!(renewed.program_from_cache());
    assert!(renewed.compile_stats().unwrap().cached);
    obtain(&cache, &designs[2]);
    let sorted = |mut paths: Vec<std::path::PathBuf>| {
        paths.sort();
        paths
    };
    let expected = sorted(vec![
        program[0].clone(),
        engine[0].clone(),
        engine[1].clone(),
        program[2].clone(),
        engine[2].clone(),
        fresh.clone(),
    ]);
    assert_eq!(
        files_in(cache.dir()),
        expected,
        "the second design's program and the stale temporary went"
    );
    let mut reference = Simulator::with_backend(&designs[0], Backend::Interpreted).unwrap();
    agree_after_reset(&mut renewed, &mut reference, 50);

    // A budget smaller than any entry keeps only the newest: the second design's
    // program, compiled again, goes when its engine (which had been dropped with
    // everything else when the program was stored) is stored.
    let tiny = CodeCache::with_budget(cache.dir(), 1);
    let again = obtain(&tiny, &designs[1]);
    assert!(!again.program_from_cache());
    assert!(
        !again.compile_stats().unwrap().cached,
        "it had been dropped"
    );
    assert_eq!(files_in(tiny.dir()), sorted(vec![fresh, engine[1].clone()]));
}

#[test]
fn a_tuned_engine_takes_over_after_its_profile_and_comes_from_the_cache_too() {
    use sim::{Backend, CodeCache};
    let m = module();
    // A compiled start tunes as soon as the profile is complete, deterministically.
    let mut tuned = Simulator::with_backend(&m, Backend::Compiled).unwrap();
    tuned.set_tune_after(Some(5));
    let mut reference = Simulator::with_backend(&m, Backend::Interpreted).unwrap();
    agree_after_reset(&mut tuned, &mut reference, 100);
    let (cycle, stats) = tuned.tuned_stats().expect("tuned after 5 settles");
    // The profile's window opens at cycle 5 and counts 5 settles.
    assert!((9..=12).contains(&cycle), "tuned from cycle {cycle}");
    let (untested, partitions) = stats.tuned.expect("a tuned engine's stats say so");
    assert!(untested <= partitions && partitions > 0, "{stats:?}");
    assert!(
        tuned.compile_stats().unwrap().tuned.is_none(),
        "the first engine's"
    );

    // Tuning turned off: the first engine runs throughout.
    let mut untuned = Simulator::with_backend(&m, Backend::Compiled).unwrap();
    untuned.set_tune_after(None);
    let mut reference = Simulator::with_backend(&m, Backend::Interpreted).unwrap();
    agree_after_reset(&mut untuned, &mut reference, 100);
    assert_eq!(untuned.tuned_stats(), None);

    // Through a cache: the tuned engine is stored beside the first, and a later
    // simulator with the same profile loads both.
    let dir = tempfile::tempdir().unwrap();
    let cache = CodeCache::new(dir.path().join("engines"));
    let run = || {
        let mut s = Simulator::with_cache(&m, &cache).unwrap();
        s.finish_compile().unwrap();
        s.set_tune_after(Some(5));
        let mut reference = Simulator::with_backend(&m, Backend::Interpreted).unwrap();
        agree_after_reset(&mut s, &mut reference, 20);
        s.finish_compile().unwrap();
        agree(&mut s, &mut reference, 20..60);
        let (_, stats) = s.tuned_stats().expect("tuned after 5 settles");
        (s.compile_stats().unwrap().cached, stats.cached)
    };
    assert_eq!(run(), (false, false));
    assert_eq!(
        engines_in(cache.dir()).len(),
        2,
        "the first engine and the tuned one"
    );
    assert_eq!(run(), (true, true));
}

/// A waiting takeover runs each cycle on the same engine in every run: the
/// compiled engine from the first cycle, the tuned one from the settle that
/// completes its profile, whether the engines are built or loaded from the cache.
#[test]
fn a_waiting_takeover_switches_engines_at_the_same_cycle_in_every_run() {
    use sim::{Backend, CodeCache, Takeover};
    let m = module();
    let dir = tempfile::tempdir().unwrap();
    let cache = CodeCache::new(dir.path().join("engines"));
    let run = || {
        let mut s = Simulator::with_cache_takeover(&m, &cache, Takeover::Waiting).unwrap();
        assert_eq!(s.backend(), Backend::Compiled, "before the first cycle");
        s.set_tune_after(Some(5));
        let mut reference = Simulator::with_backend(&m, Backend::Interpreted).unwrap();
        agree_after_reset(&mut s, &mut reference, 60);
        let (tuned_from, tuned) = s
            .tuned_stats()
            .expect("tuned once its profile was complete");
        let first = s.compile_stats().unwrap();
        (
            s.compiled_from_cycle(),
            tuned_from,
            first.cached,
            tuned.cached,
        )
    };
    let (built, loaded) = (run(), run());
    assert_eq!((built.0, loaded.0), (Some(0), Some(0)));
    assert!((9..=12).contains(&built.1), "tuned from cycle {}", built.1);
    assert_eq!(built.1, loaded.1, "the same cycle, built or loaded");
    assert_eq!((built.2, built.3), (false, false), "built the first time");
    assert_eq!((loaded.2, loaded.3), (true, true), "loaded the second");
}

/// A tiered start switches engines at a settle, with no wait: from the
/// interpreter to the first compiled engine, then, its profile complete, to the
/// tuned one; each switch records the cycle it happened at, and the results stay
/// the reference's throughout. (The builds run in the background: the loop gives
/// them a generous bound, not a time to meet.)
#[test]
fn a_tiered_start_records_each_switch_at_the_settle_it_happens() {
    use sim::Backend;
    let m = module();
    let mut tiered = Simulator::new(&m).unwrap();
    tiered.set_tune_after(Some(5));
    let mut reference = Simulator::with_backend(&m, Backend::Interpreted).unwrap();
    agree_after_reset(&mut tiered, &mut reference, 0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut cycle = 0;
    let mut first = None;
    while tiered.tuned_stats().is_none() && std::time::Instant::now() < deadline {
        agree(&mut tiered, &mut reference, cycle..cycle + 10);
        cycle += 10;
        if tiered.backend() == Backend::Compiled && first.is_none() {
            first = Some(tiered.cycles());
        }
    }
    let seen = first.expect("the compiled engine took over within the bound");
    let from = tiered
        .compiled_from_cycle()
        .expect("the first switch is recorded");
    assert!(
        from <= seen,
        "compiled from cycle {from}, seen running at {seen}"
    );
    let (tuned_from, _) = tiered
        .tuned_stats()
        .expect("the tuned engine took over within the bound");
    assert!(
        from < tuned_from && tuned_from <= tiered.cycles(),
        "first engine from {from}, tuned from {tuned_from}, now {}",
        tiered.cycles()
    );
}
