//! The ADC side of the top: per core an AXI-Stream slave from the RF Data
//! Converter, an optional 8-to-16-sample gearbox, and the asynchronous FIFO into
//! the DAC clock domain; words a full FIFO cannot take are counted.

use super::super::bus::BUS_WIDTH;
use super::counters::saturating_counter;
use crate::blocks::cdc::cross_word;
use crate::blocks::fifo::async_fifo;
use crate::dsl::{Domain, ModuleBuilder, Signal};
use crate::ir::HdlError;

/// One core's ADC words in the DAC clock domain.
pub(super) struct AdcWords {
    /// A word is on `data` in this DAC cycle.
    pub valid: Signal,
    /// 16 samples.
    pub data: Signal,
}

/// The ADC side of every core.
pub(super) struct AdcSide {
    /// Per core, the words in the DAC domain.
    pub words: Vec<AdcWords>,
    /// ADC cycles in which some core's word was dropped, in the AXI-Lite domain.
    pub dropped: Signal,
}

/// Builds `s_axis_adc{c}_*` for `cores` cores with `samples` samples per beat.
pub(super) fn adc_side(
    m: &mut ModuleBuilder,
    domains: &super::Domains,
    cores: u32,
    samples: u32,
    fifo_depth: u32,
    clear_adc: Signal,
) -> Result<AdcSide, HdlError> {
    let one = m.lit(1, 1);
    let fifo = async_fifo(BUS_WIDTH, fifo_depth)?;
    let mut words = Vec::new();
    let mut drops = Vec::new();
    for c in 0..cores {
        let data = m.input(&format!("s_axis_adc{c}_tdata"), 16 * samples);
        let valid = m.input(&format!("s_axis_adc{c}_tvalid"), 1);
        m.output(&format!("s_axis_adc{c}_tready"), one);
        let (word, push) = gearbox(m, domains.adc, c, samples, data, valid);
        let f = m.instance(&format!("u_adc{c}_fifo"), &fifo);
        m.bind_domain(f, "wr", domains.adc);
        m.bind_domain(f, "rd", domains.dac);
        m.connect(f, "wr_en", push);
        m.connect(f, "wr_data", word);
        m.connect(f, "rd_en", one);
        let full = m.instance_output(f, "full");
        drops.push(m.and(push, full));
        let empty = m.instance_output(f, "empty");
        words.push(AdcWords {
            valid: m.not(empty),
            data: m.instance_output(f, "rd_data"),
        });
    }
    let any_drop = m.or_all(&drops);
    let dropped = saturating_counter(m, domains.adc, "adc_dropped_q", any_drop, clear_adc);
    let dropped = cross_word(m, "u_adc_dropped_sync", domains.adc, domains.axil, dropped)?;
    Ok(AdcSide { words, dropped })
}

/// With 16 samples per beat the beat itself; with 8, consecutive beats paired
/// into one 16-sample word (first beat = samples 0–7); returns (word, push).
fn gearbox(
    m: &mut ModuleBuilder,
    adc: Domain,
    core: u32,
    samples: u32,
    data: Signal,
    valid: Signal,
) -> (Signal, Signal) {
    if samples * 16 == BUS_WIDTH {
        return (data, valid);
    }
    let half = m.reg(adc, &format!("adc{core}_half_q"), 16 * samples);
    m.set_next(half, data);
    m.set_enable(half, valid);
    let phase = m.reg(adc, &format!("adc{core}_phase_q"), 1);
    let flipped = m.not(phase);
    m.set_next(phase, flipped);
    m.set_enable(phase, valid);
    let word = m.concat(&[data, half]);
    let push = m.and(valid, phase);
    (word, push)
}
