//! The mutation campaign (`testbench::mutation`) on a design small enough that
//! every mutant is known: a check that compares every output with a model kills
//! them all; one that looks at a single output lets exactly the others survive.
//! And PANAMA's, Lightning's and the floating-point blocks' mutant checks on the
//! designs they were written for.

use hdl::blocks::fp::{fp_add, fp_add_tree, FpAddConfig, FpFormat, FpTreeConfig};
use hdl::ir::mutate::MutationKind;
use hdl::lightning::config::WeightSource;
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::panama_core;
use hdl::{Module, ModuleBuilder, ResetPolarity};
use rand::Rng;
use testbench::dut::{Dut, NativeDut};
use testbench::fp_adder;
use testbench::lightning::mutants::{self as lightning, Subject};
use testbench::lightning::top_mutants::{check_top, TopSubject};
use testbench::mutation::{campaign, Outcome, Pick};
use testbench::panama::config::SUME_PORTS;
use testbench::panama::mutants::check;
use testbench::rng::seeded;

/// The sites of one kind on the one line of `file` (a path from the workspace
/// root, as the sites name it) that holds `code`. Sites are named by generator
/// line; naming the line by its code keeps a test's site when the lines above
/// it move, and a line that no longer holds the code, or shares it with
/// another, fails here with both named.
fn site(kind: MutationKind, file: &str, code: &str) -> Pick {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(file);
    let source =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let lines: Vec<usize> = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(code))
        .map(|(i, _)| i + 1)
        .collect();
    match lines[..] {
        [line] => Pick::Matching(format!("{} at {file}:{line} ", kind.name())),
        _ => panic!("`{code}` is on lines {lines:?} of {file}, not on one"),
    }
}

/// `y = sel ? a : b`, `same = a == b`, `acc` loading `a + b` when `sel`, reset
/// to 5.
fn design() -> Module {
    let mut m = ModuleBuilder::new("mutation_demo");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let a = m.input("a", 8);
    let b = m.input("b", 8);
    let sel = m.input("sel", 1);
    let y = m.mux(sel, a, b);
    m.output("y", y);
    let same = m.eq(a, b);
    m.output("same", same);
    let acc = m.reg_init(clk, "acc", 8, 5);
    let sum = m.add_wrap(a, b);
    m.set_next(acc, sum);
    m.set_enable(acc, sel);
    m.output("acc_q", acc);
    m.finish().expect("valid")
}

/// Runs `module` on random inputs (equal operands one cycle in four) against the
/// design's model, comparing the outputs named in `watched`.
fn against_model(module: &Module, watched: &[&str]) -> Result<(), String> {
    let mut dut = NativeDut::new(module).map_err(|e| e.to_string())?;
    dut.reset(1);
    let mut rng = seeded("mutation demo", 1);
    let mut acc: u64 = 5;
    for cycle in 0..200 {
        let a: u64 = rng.gen_range(0..256);
        let b = if rng.gen_ratio(1, 4) {
            a
        } else {
            rng.gen_range(0..256)
        };
        let sel: u64 = rng.gen_range(0..2);
        for (name, v) in [("a", a), ("b", b), ("sel", sel)] {
            dut.set_u64(name, v).map_err(|e| e.to_string())?;
        }
        let want = [
            ("y", if sel == 1 { a } else { b }),
            ("same", u64::from(a == b)),
            ("acc_q", acc),
        ];
        for (name, value) in want.into_iter().filter(|(n, _)| watched.contains(n)) {
            let got = dut.get_u64(name).map_err(|e| e.to_string())?;
            if got != value {
                return Err(format!("cycle {cycle}: {name} = {got}, model {value}"));
            }
        }
        if sel == 1 {
            acc = (a + b) & 0xFF;
        }
        dut.step();
    }
    Ok(())
}

#[test]
fn a_full_check_kills_every_mutant_and_a_partial_one_only_its_own() {
    let top = design();
    let every = Pick::Matching(String::new());
    let full = campaign(
        &top,
        &every,
        |m| against_model(m, &["y", "same", "acc_q"]),
        |_| {},
    );
    assert_eq!(full.trials.len(), 5);
    for t in &full.trials {
        assert!(
            matches!(t.outcome, Outcome::Killed(_)),
            "{} survived",
            t.site.describe()
        );
    }
    assert_eq!(full.score(), 1.0);

    let partial = campaign(&top, &every, |m| against_model(m, &["y"]), |_| {});
    let survived: Vec<MutationKind> = partial.survivors().map(|t| t.site.kind).collect();
    assert_eq!(
        survived,
        [
            MutationKind::Equality,
            MutationKind::Arithmetic,
            MutationKind::Enable,
            MutationKind::ResetValue
        ]
    );
    assert!((partial.score() - 0.2).abs() < 1e-12, "{}", partial.score());
    let by_kind = partial.by_kind();
    assert_eq!(by_kind[&MutationKind::MuxArms], (1, 1));
    assert_eq!(by_kind[&MutationKind::Equality], (0, 1));
}

#[test]
fn a_sample_is_seeded_and_no_larger_than_asked() {
    let top = design();
    let pick = Pick::Sample { count: 3, seed: 9 };
    let run = || campaign(&top, &pick, |_| Ok(()), |_| {});
    let (one, two) = (run(), run());
    assert_eq!(one.trials.len(), 3);
    let sites = |c: &testbench::mutation::Campaign| {
        c.trials.iter().map(|t| t.site.clone()).collect::<Vec<_>>()
    };
    assert_eq!(
        sites(&one),
        sites(&two),
        "the same seed draws the same sites"
    );
    assert_eq!(one.sites.values().sum::<usize>(), 5);
}

/// PANAMA's mutant check (`testbench::panama::mutants`) passes the core as
/// generated, and catches the packet buffers' `full` flag inverted: one line of
/// the generator, which builds the flag of each of the 16 (slot, port)
/// buffers.
#[test]
fn panamas_check_passes_the_core_and_kills_the_buffers_full_flag_inverted() {
    let cfg = PanamaConfig {
        fifo_depth: 4,
        ..PanamaConfig::new(256, &SUME_PORTS)
    };
    let core = panama_core(&cfg).expect("core");
    check(&cfg, &core).expect("the core as generated passes");
    let full = site(
        MutationKind::Equality,
        "hdl/src/panama/core/queues.rs",
        "let full = m.eq_const(count, u64::from(fifo_depth));",
    );
    let c = campaign(&core, &full, |m| check(&cfg, m), |_| {});
    assert_eq!(c.trials.len(), 1);
    let t = &c.trials[0];
    assert_eq!(t.site.targets.len(), (cfg.slots * cfg.ports()) as usize);
    assert!(
        matches!(t.outcome, Outcome::Killed(_)),
        "{}",
        t.site.describe()
    );
}

/// Lightning's mutant check (`testbench::lightning::mutants`) passes the
/// datapath as generated, with memory weights and with streamed ones, and
/// kills four mutants by rules beyond the logits: DAC samples with
/// bit 15 set (the photonic model reads bits 14–7 only; the check's bus-format
/// rule sees them), the `cycles` counter restarting at 0 instead of 1 (the
/// check compares the counters with the cycles the bench saw on the ports), and
/// two that light the modulators with a wrong activation (the activation-stream
/// rule sees them): a partial round's padding lanes written back as 1 instead
/// of 0, and the write-back collector starting each word at 1 instead of 0.
#[test]
fn lightnings_check_passes_the_datapath_and_kills_what_the_logits_hide() {
    for weights in [WeightSource::Memory, WeightSource::Stream] {
        let subject = Subject::new(weights).expect("subject");
        lightning::check(&subject, &subject.module)
            .unwrap_or_else(|e| panic!("{weights:?} weights: {e}"));
    }
    let subject = Subject::new(WeightSource::Memory).expect("subject");
    let writeback = "hdl/src/lightning/datapath/writeback.rs";
    for (file, code, why) in [
        (
            "hdl/src/lightning/datapath/mod.rs",
            "let top = m.zeros(1);",
            "outside the bus format",
        ),
        (
            "hdl/src/lightning/datapath/counters.rs",
            "let c_one = m.lit(1, COUNTER_WIDTH);",
            "the ports showed",
        ),
        (
            writeback,
            "let zero_byte = m.zeros(vw);",
            "activation sample",
        ),
        (
            writeback,
            "let empty = m.zeros(word_w);",
            "activation sample",
        ),
    ] {
        let line = format!("{file}: `{code}`");
        let pick = site(MutationKind::Constant, file, code);
        let c = campaign(
            &subject.module,
            &pick,
            |m| lightning::check(&subject, m),
            |_| {},
        );
        assert_eq!(c.trials.len(), 1, "{line}");
        match &c.trials[0].outcome {
            Outcome::Killed(e) => assert!(e.contains(why), "{line}: killed by {e}"),
            Outcome::Survived => panic!("{line} survived"),
        }
    }
}

/// The Lightning top's mutant check (`testbench::lightning::top_mutants`)
/// passes the top as generated, and kills the answer stream's `tlast` raised
/// on every beat but the last (its comparison inverted), which the logit
/// registers do not show.
#[test]
fn lightning_tops_check_passes_the_top_and_kills_a_wrong_tlast() {
    let subject = TopSubject::new().expect("subject");
    check_top(&subject, &subject.module).expect("the top as generated passes");
    let pick = site(
        MutationKind::Equality,
        "hdl/src/lightning/top/results.rs",
        "let is_last = m.eq_const(beat.index, last_index);",
    );
    let c = campaign(&subject.module, &pick, |m| check_top(&subject, m), |_| {});
    assert_eq!(c.trials.len(), 1);
    match &c.trials[0].outcome {
        Outcome::Killed(e) => assert!(e.contains("answer beats"), "killed by {e}"),
        Outcome::Survived => panic!("{} survived", c.trials[0].site.describe()),
    }
}

/// The adder the floating-point checks are run on (5 stages, PANAMA's) and a
/// 5-input × 4-lane tree of it (an odd input carried past a level).
fn fp_subjects(format: FpFormat, ftz: bool) -> (FpAddConfig, FpTreeConfig) {
    let adder = FpAddConfig {
        format,
        stages: 5,
        ftz,
    };
    let tree = FpTreeConfig {
        inputs: 5,
        lanes: 4,
        adder,
    };
    (adder, tree)
}

/// The floating-point checks (`testbench::fp_adder`) pass the adder and the
/// tree as generated in every format, with and without flush-to-zero, and kill
/// the pipeline's valid registers reset to 1: an `out_valid` in the cycles
/// after reset that no operation caused, which a check that starts comparing
/// once the pipeline has filled never sees.
#[test]
fn fp_checks_pass_the_blocks_and_kill_a_valid_set_by_reset() {
    for format in FpFormat::ALL {
        for ftz in [false, true] {
            let (adder, tree) = fp_subjects(format, ftz);
            fp_adder::check(&adder, &fp_add(&adder).expect("adder"))
                .unwrap_or_else(|e| panic!("{e}"));
            fp_adder::check_tree(&tree, &fp_add_tree(&tree).expect("tree"))
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let (adder, tree) = fp_subjects(FpFormat::Fp32, false);
    let valid_reset = site(
        MutationKind::ResetValue,
        "hdl/src/blocks/fp/add.rs",
        "let v = m.register(d, &format!(\"valid_s{at}\"), valid);",
    );
    let on_adder = campaign(
        &fp_add(&adder).expect("adder"),
        &valid_reset,
        |m| fp_adder::check(&adder, m),
        |_| {},
    );
    let on_tree = campaign(
        &fp_add_tree(&tree).expect("tree"),
        &valid_reset,
        |m| fp_adder::check_tree(&tree, m),
        |_| {},
    );
    for c in [on_adder, on_tree] {
        assert_eq!(c.trials.len(), 1);
        match &c.trials[0].outcome {
            Outcome::Killed(e) => assert!(e.contains("out_valid 1 in cycle 0"), "killed by {e}"),
            Outcome::Survived => panic!("{} survived", c.trials[0].site.describe()),
        }
    }
}
