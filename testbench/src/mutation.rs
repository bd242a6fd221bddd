//! Test strength by mutation (QUALITY.md, "Test strength"): a design's
//! [mutation sites](hdl::ir::mutate) sampled, each applied alone, and a check
//! run on each mutant. A mutant the check fails (an error, a panic, a hang
//! caught by the check's own bounds) is *killed*; one it passes *survived*: a
//! generator mistake of that kind at that line would go unnoticed, unless the
//! mutant is equivalent to the original.

use hdl::ir::mutate::{apply, sites, MutationKind, Site};
use hdl::Module;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What one mutant did under the check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The check failed; its first line.
    Killed(String),
    /// The check passed.
    Survived,
}

/// One sampled site and its mutant's outcome.
#[derive(Clone, Debug)]
pub struct Trial {
    /// The mutation.
    pub site: Site,
    /// What the check said.
    pub outcome: Outcome,
}

/// A mutation run: how many sites the design has and what the sampled ones did.
#[derive(Clone, Debug, Default)]
pub struct Campaign {
    /// Sites of the design, by kind.
    pub sites: BTreeMap<MutationKind, usize>,
    /// The sampled sites' trials, in sample order.
    pub trials: Vec<Trial>,
}

impl Campaign {
    /// (killed, tried) per kind, for every kind with a site.
    pub fn by_kind(&self) -> BTreeMap<MutationKind, (usize, usize)> {
        let mut out: BTreeMap<MutationKind, (usize, usize)> =
            self.sites.keys().map(|&k| (k, (0, 0))).collect();
        for t in &self.trials {
            let e = out.entry(t.site.kind).or_default();
            e.1 += 1;
            if t.outcome != Outcome::Survived {
                e.0 += 1;
            }
        }
        out
    }

    /// Killed mutants over tried ones (1 when none was tried).
    pub fn score(&self) -> f64 {
        if self.trials.is_empty() {
            return 1.0;
        }
        let survived = self.survivors().count();
        1.0 - survived as f64 / self.trials.len() as f64
    }

    /// The trials whose mutant survived.
    pub fn survivors(&self) -> impl Iterator<Item = &Trial> {
        self.trials
            .iter()
            .filter(|t| t.outcome == Outcome::Survived)
    }
}

/// Which sites a [`campaign`] tries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pick {
    /// `count` sites drawn at random with `seed` (all of them when `count` is
    /// larger).
    Sample {
        /// Sites to draw.
        count: usize,
        /// The draw's seed.
        seed: u64,
    },
    /// Every site whose [description](Site::describe) contains this text, such
    /// as `queues.rs:143`: a survivor looked at again.
    Matching(String),
}

/// Runs `check` on the mutant of each site of `top` that `pick` picks, and
/// tells `progress` each trial as it ends. `check` returns an error for a
/// design it finds wrong; a panic in it counts as a kill too (and its message is
/// not printed).
pub fn campaign(
    top: &Module,
    pick: &Pick,
    mut check: impl FnMut(&Module) -> Result<(), String>,
    mut progress: impl FnMut(&Trial),
) -> Campaign {
    let all = sites(top);
    let mut per_kind = BTreeMap::new();
    for s in &all {
        *per_kind.entry(s.kind).or_insert(0) += 1;
    }
    let sampled: Vec<Site> = match pick {
        Pick::Sample { count, seed } => {
            let mut rng = ChaCha8Rng::seed_from_u64(*seed);
            all.choose_multiple(&mut rng, *count).cloned().collect()
        }
        Pick::Matching(text) => all
            .into_iter()
            .filter(|s| s.describe().contains(text))
            .collect(),
    };
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut trials = vec![];
    for site in sampled {
        let mutant = apply(top, &site).expect("a site of a design applies to it");
        let outcome = match catch_unwind(AssertUnwindSafe(|| check(&mutant))) {
            Ok(Ok(())) => Outcome::Survived,
            Ok(Err(e)) => Outcome::Killed(first_line(&e)),
            Err(panic) => Outcome::Killed(format!("panicked: {}", panic_text(&panic))),
        };
        let trial = Trial { site, outcome };
        progress(&trial);
        trials.push(trial);
    }
    std::panic::set_hook(quiet);
    Campaign {
        sites: per_kind,
        trials,
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    let text = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)");
    first_line(text)
}
