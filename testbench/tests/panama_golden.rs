//! PANAMA packet tools and golden model (`testbench::panama`), checked against
//! hand-computed frames and sums, `etherparse` (for the layers the model writes by
//! hand) and plain integer / `f32` arithmetic (for the sums).
//!
//! Golden model only: the hardware does not exist yet; these tests pin down the
//! reference it will be checked against.

use etherparse::{Ipv4Header, SlicedPacket, TransportSlice};
use hdl::blocks::fp::FpFormat;
use rand::Rng;
use std::path::Path;
use testbench::golden::fp::{to_f64, tree_sum};
use testbench::panama::config::{ConfigError, PLUS_PORTS, SUME_PORTS};
use testbench::panama::golden::{DropReason, GoldenError};
use testbench::panama::header::{self, HEADERS_LEN, PANAMA_OFFSET};
use testbench::panama::pcap::{self, PcapError};
use testbench::panama::traffic::{self, Defect, JobSpec, Values, WorkerStream};
use testbench::panama::{
    classify, run, AggPacket, Class, GoldenConfig, GoldenOutcome, InFrame, Malformed, PanamaHeader,
    SlotConfig,
};
use testbench::rng::seeded;

const PORT: u16 = testbench::panama::config::DEFAULT_AGG_UDP_PORT;
const MAX: usize = 1024;

fn frame(p: &AggPacket) -> Vec<u8> {
    p.to_frame().expect("valid packet")
}

fn f32s(v: &[f32]) -> Vec<u64> {
    v.iter().map(|x| u64::from(x.to_bits())).collect()
}

/// A 64-byte fp32 payload (16 elements) that starts with `head`, zero-padded.
fn fp32_payload(head: &[f32]) -> Vec<u64> {
    let mut p = f32s(head);
    p.resize(16, 0);
    p
}

fn input(src: u8, p: &AggPacket) -> InFrame {
    InFrame {
        src,
        bytes: frame(p),
    }
}

fn be16(f: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([f[at], f[at + 1]])
}

/// Checks a result frame against the worker's frame it answers, field by field,
/// with etherparse for the layers.
fn check_result(result: &[u8], worker: &[u8], ecn: u8, bitmap: u32, sum: &[u64], f: FpFormat) {
    assert_eq!(result.len(), worker.len(), "result keeps the frame length");
    let r = SlicedPacket::from_ethernet(result).expect("etherparse parses the result");
    let w = SlicedPacket::from_ethernet(worker).expect("etherparse parses the worker frame");
    let (Some(etherparse::LinkSlice::Ethernet2(re)), Some(etherparse::LinkSlice::Ethernet2(we))) =
        (&r.link, &w.link)
    else {
        panic!("not Ethernet II");
    };
    assert_eq!(re.source(), we.destination());
    assert_eq!(re.destination(), we.source());
    let (Some(etherparse::NetSlice::Ipv4(ri)), Some(etherparse::NetSlice::Ipv4(wi))) =
        (&r.net, &w.net)
    else {
        panic!("not IPv4");
    };
    let (rh, wh) = (ri.header().to_header(), wi.header().to_header());
    assert_eq!(rh.source, wh.destination);
    assert_eq!(rh.destination, wh.source);
    assert_eq!(rh.total_len, wh.total_len, "IPv4 total length kept");
    assert_eq!(rh.ecn.value(), ecn, "ECN is the OR");
    assert_eq!(rh.dscp, wh.dscp);
    assert_eq!(rh.time_to_live, wh.time_to_live);
    assert_eq!(rh.identification, wh.identification);
    assert_eq!(
        rh.header_checksum,
        rh.calc_header_checksum(),
        "etherparse agrees on the IPv4 header checksum"
    );
    let (Some(TransportSlice::Udp(ru)), Some(TransportSlice::Udp(wu))) =
        (&r.transport, &w.transport)
    else {
        panic!("not UDP");
    };
    assert_eq!(ru.source_port(), wu.destination_port());
    assert_eq!(ru.destination_port(), wu.source_port());
    assert_eq!(ru.length(), wu.length());
    assert_eq!(ru.checksum(), 0, "UDP checksum 0");
    let rp = header_of(result);
    let wp = header_of(worker);
    let mut expect = wp;
    expect.flags = 1;
    expect.bitmap = bitmap;
    assert_eq!(
        rp, expect,
        "PANAMA header: flags.result and bitmap set, rest kept"
    );
    assert_eq!(
        testbench::panama::payload::decode(f, &result[HEADERS_LEN..]),
        sum
    );
}

fn header_of(f: &[u8]) -> PanamaHeader {
    let mut b = [0u8; header::PANAMA_HEADER_LEN];
    b.copy_from_slice(&f[PANAMA_OFFSET..HEADERS_LEN]);
    PanamaHeader::from_bytes(&b)
}

// ---------------------------------------------------------------- frames

#[test]
fn frames_round_trip_through_build_and_classify() {
    let mut rng = seeded("frames_round_trip_through_build_and_classify", 0x5041_0001);
    for _ in 0..300 {
        let format = FpFormat::ALL[rng.gen_range(0..3)];
        let granules = rng.gen_range(1..=MAX / 64);
        let n = granules * 64 / header::elem_bytes(format);
        let payload = (0..n)
            .map(|_| traffic::random_element(&mut rng, format, Values::WithSpecials))
            .collect();
        let mut p = AggPacket::new(
            format,
            rng.gen(),
            rng.gen(),
            rng.gen(),
            rng.gen(),
            PORT,
            payload,
        );
        p.src_mac = rng.gen();
        p.dst_mac = rng.gen();
        p.src_ip = rng.gen();
        p.dst_ip = rng.gen();
        p.ecn = rng.gen_range(0..4);
        p.dscp = rng.gen_range(0..64);
        p.identification = rng.gen();
        p.ttl = rng.gen();
        p.dont_fragment = rng.gen();
        p.src_port = rng.gen();
        let f = frame(&p);
        assert_eq!(f.len(), HEADERS_LEN + granules * 64);
        assert_eq!(classify(&f, PORT, MAX), Class::Aggregation(p.clone()));
        // etherparse reads the same layers, with a valid IPv4 checksum.
        let (ip, _) = Ipv4Header::from_slice(&f[14..]).expect("IPv4");
        assert_eq!(ip.header_checksum, ip.calc_header_checksum());
        assert_eq!(usize::from(ip.total_len), f.len() - 14);
        assert_eq!(ip.ecn.value(), p.ecn);
    }
}

#[test]
fn frame_bytes_match_the_spec_layout() {
    let mut p = AggPacket::new(
        FpFormat::Fp32,
        0x0102,
        3,
        0x0A0B_0C0D,
        7,
        PORT,
        fp32_payload(&[1.0]),
    );
    p.ecn = 2;
    let f = frame(&p);
    assert_eq!(f.len(), 128);
    assert_eq!(&f[12..14], &[0x08, 0x00], "EtherType IPv4");
    assert_eq!(f[14], 0x45, "IPv4, IHL 5");
    assert_eq!(f[15] & 3, 2, "ECN");
    assert_eq!(be16(&f, 16), 114, "IPv4 total length");
    assert_eq!(f[23], 17, "UDP");
    assert_eq!(be16(&f, 36), PORT, "UDP destination port");
    assert_eq!(be16(&f, 38), 94, "UDP length");
    assert_eq!(be16(&f, 40), 0, "UDP checksum 0");
    assert_eq!(
        &f[42..64],
        &[1, 0, 1, 2, 3, 0, 0x0A, 0x0B, 0x0C, 0x0D, 0, 7, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(
        &f[64..68],
        &[0x00, 0x00, 0x80, 0x3F],
        "1.0f32 little-endian"
    );
}

#[test]
fn build_errors_name_the_field() {
    let mut p = AggPacket::new(FpFormat::Bf16, 1, 0, 0, 0, PORT, vec![0x1_0000; 32]);
    let e = p.to_frame().unwrap_err().to_string();
    assert!(e.contains("element 0") && e.contains("bf16"), "{e}");
    p.payload = vec![0; 32];
    p.ecn = 4;
    assert!(p.to_frame().unwrap_err().to_string().contains("ECN"));
    p.ecn = 0;
    p.header.format = 9;
    assert!(p
        .to_frame()
        .unwrap_err()
        .to_string()
        .contains("format code 9"));
}

// ---------------------------------------------------------------- classifier

#[test]
fn every_defect_is_classified_malformed_with_its_reason() {
    let mut rng = seeded("every_defect_is_classified_malformed_with_its_reason", 7);
    let p = AggPacket::new(FpFormat::Fp16, 4, 1, 9, 2, PORT, vec![0x3C00; 64]);
    let good = frame(&p);
    for defect in Defect::ALL {
        for _ in 0..20 {
            let f = traffic::with_defect(&mut rng, &good, defect, MAX);
            let Class::Malformed(reason) = classify(&f, PORT, MAX) else {
                panic!("{defect:?} not malformed");
            };
            let ok = match defect {
                Defect::Truncated => matches!(reason, Malformed::Truncated { .. }),
                Defect::PayloadNotGranule => matches!(reason, Malformed::PayloadLength { .. }),
                Defect::PayloadTooLong => {
                    reason
                        == Malformed::PayloadTooLong {
                            bytes: MAX + 64,
                            max: MAX,
                        }
                }
                Defect::EmptyPayload => reason == Malformed::PayloadLength { bytes: 0 },
                Defect::ElemCount => matches!(reason, Malformed::ElemCount { elem_count: 65, .. }),
                Defect::Version => reason == Malformed::Version { version: 2 },
                Defect::ResultFlag => reason == Malformed::Flags { flags: 1 },
                Defect::UnknownFormat => reason == Malformed::UnknownFormat { code: 3 },
                Defect::Ipv4Length => matches!(reason, Malformed::Ipv4Length { .. }),
                Defect::UdpLength => matches!(reason, Malformed::UdpLength { .. }),
                Defect::Fragmented => reason == Malformed::Fragmented,
            };
            assert!(ok, "{defect:?} gave {reason}");
        }
    }
    // Messages name the numbers.
    let f = traffic::with_defect(&mut rng, &good, Defect::PayloadTooLong, 256);
    let Class::Malformed(reason) = classify(&f, PORT, 256) else {
        panic!("not malformed")
    };
    assert_eq!(
        reason.to_string(),
        "payload of 320 bytes exceeds max_payload_bytes = 256"
    );
}

#[test]
fn classifier_edge_cases() {
    let p = AggPacket::new(FpFormat::Fp32, 1, 0, 0, 0, PORT, fp32_payload(&[2.0]));
    let good = frame(&p);
    // A payload of zero bytes.
    let mut empty = p.clone();
    empty.payload.clear();
    empty.header.elem_count = 0;
    assert_eq!(
        classify(&frame(&empty), PORT, MAX),
        Class::Malformed(Malformed::PayloadLength { bytes: 0 })
    );
    // elem_count consistent for the packet's own format (bf16: 32 × 2 bytes).
    let bf = AggPacket::new(FpFormat::Bf16, 1, 0, 0, 0, PORT, vec![0; 32]);
    assert!(matches!(
        classify(&frame(&bf), PORT, MAX),
        Class::Aggregation(_)
    ));
    // Another UDP port, a non-IPv4 EtherType, a short frame: bypass.
    assert_eq!(classify(&good, PORT + 1, MAX), Class::Bypass);
    let mut arp = good.clone();
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    assert_eq!(classify(&arp, PORT, MAX), Class::Bypass);
    assert_eq!(classify(&good[..37], PORT, MAX), Class::Bypass);
    // 38 bytes show the port: an aggregation packet, truncated.
    assert_eq!(
        classify(&good[..38], PORT, MAX),
        Class::Malformed(Malformed::Truncated { len: 38 })
    );
    // A non-first fragment has no UDP header: bypass.
    let mut frag = good.clone();
    frag[20] |= 0x01;
    assert_eq!(classify(&frag, PORT, MAX), Class::Bypass);
    // TCP to the same port: bypass.
    let mut tcp = good.clone();
    tcp[23] = 6;
    assert_eq!(classify(&tcp, PORT, MAX), Class::Bypass);
    // IPv4 options with the UDP port after them: aggregation, malformed.
    let mut opt = good[..34].to_vec();
    opt[14] = 0x46;
    opt.extend_from_slice(&[1, 1, 1, 0]); // NOP NOP NOP EOL
    opt.extend_from_slice(&good[34..]);
    assert_eq!(
        classify(&opt, PORT, MAX),
        Class::Malformed(Malformed::Ipv4Options { ihl: 6 })
    );
    // Random background traffic is always bypassed.
    let mut rng = seeded("classifier_edge_cases", 11);
    for _ in 0..500 {
        let f = traffic::background_frame(&mut rng, PORT);
        assert!((60..=1514).contains(&f.len()), "{}", f.len());
        assert_eq!(classify(&f, PORT, MAX), Class::Bypass);
    }
}

// ---------------------------------------------------------------- golden model

fn one_job_config(format: FpFormat) -> GoldenConfig {
    GoldenConfig::new(format, &SUME_PORTS, vec![SlotConfig::new(5, 0, &[0, 1])])
}

#[test]
fn one_job_two_workers_hand_checked() {
    let cfg = one_job_config(FpFormat::Fp32);
    let a = [1.0f32, 0.1, -2.5, 16_777_216.0, 3.0e38, 3.0];
    let b = [2.0f32, 0.2, 2.5, 1.0, 3.0e38, -0.0];
    let mut p0 = AggPacket::new(FpFormat::Fp32, 5, 0, 0, 10, PORT, fp32_payload(&a));
    let mut p1 = AggPacket::new(FpFormat::Fp32, 5, 0, 0, 11, PORT, fp32_payload(&b));
    p0.ecn = 1;
    p1.ecn = 2;
    let inputs = [input(0x01, &p0), input(0x04, &p1)];
    let out = run(&cfg, &inputs).expect("run");
    assert_eq!(out.aggregations.len(), 1);
    let agg = &out.aggregations[0];
    // Expected bit patterns, independently: f32 addition (round to nearest even).
    let expect: Vec<u64> = (0..16)
        .map(|i| {
            let x = a.get(i).copied().unwrap_or(0.0) + b.get(i).copied().unwrap_or(0.0);
            u64::from(x.to_bits())
        })
        .collect();
    assert_eq!(expect[0], 0x4040_0000, "1 + 2 = 3");
    assert_eq!(expect[1], 0x3E99_999A, "0.1f + 0.2f");
    assert_eq!(expect[2], 0x0000_0000, "−2.5 + 2.5 = +0");
    assert_eq!(expect[3], 0x4B80_0000, "2^24 + 1 rounds to even 2^24");
    assert_eq!(expect[4], 0x7F80_0000, "overflow to +∞");
    assert_eq!(expect[5], 0x4040_0000, "3 + −0 = 3");
    assert_eq!(agg.sum, expect);
    assert_eq!(agg.ecn, 3);
    assert_eq!(agg.bitmap, 0b11);
    assert_eq!(agg.results.len(), 2);
    assert_eq!(agg.results[0].dst, 0x01);
    assert_eq!(agg.results[1].dst, 0x04);
    check_result(
        &agg.results[0].bytes,
        &inputs[0].bytes,
        3,
        0b11,
        &expect,
        FpFormat::Fp32,
    );
    check_result(
        &agg.results[1].bytes,
        &inputs[1].bytes,
        3,
        0b11,
        &expect,
        FpFormat::Fp32,
    );
    assert_eq!(header_of(&agg.results[0].bytes).worker_id, 10);
    assert_eq!(header_of(&agg.results[1].bytes).worker_id, 11);
    assert_eq!(
        out.results_to(0, 0x04),
        vec![agg.results[1].bytes.as_slice()]
    );
    let c = out.counters;
    assert_eq!(
        (c.packets_in, c.accepted, c.results_out, c.bypassed),
        (2, 2, 2, 0)
    );
    assert!(out.waiting.is_empty() && out.drops.is_empty());
}

/// bf16 and fp16 with literal bit patterns; three workers on ports 0, 1 and 3 of
/// four, so the tree is ((p0 + p1) + (−0 + p3)): 2^11 + 1 + 1 in fp16 (and 2^8 + 1 +
/// 1 in bf16) rounds to even twice and stays 2^11 (2^8), where (1 + 1) + 2^11 would
/// give 2^11 + 2.
#[test]
fn half_formats_hand_checked_in_tree_order() {
    // (format, p0, p1, p3, expected) per element.
    let cases: [(FpFormat, [[u64; 4]; 3]); 2] = [
        (
            FpFormat::Fp16,
            [
                [0x3C00, 0x6800, 0x7BFF, 0x3C00], // p0: 1, 2048, 65504, 1
                [0x4000, 0x3C00, 0x5000, 0xBC00], // p1: 2, 1, 32, −1
                [0x0000, 0x3C00, 0x0000, 0x8000], // p3: 0, 1, 0, −0
            ],
        ),
        (
            FpFormat::Bf16,
            [
                [0x3F80, 0x4380, 0x7F7F, 0x3F80], // p0: 1, 256, max, 1
                [0x3F00, 0x3F80, 0x7F7F, 0xBF80], // p1: 0.5, 1, max, −1
                [0x0000, 0x3F80, 0x0000, 0x8000], // p3: 0, 1, 0, −0
            ],
        ),
    ];
    let expected: [[u64; 4]; 2] = [
        [0x4200, 0x6800, 0x7C00, 0x0000], // 3, 2048, +∞ (65536 ≥ 65520), +0
        [0x3FC0, 0x4380, 0x7F80, 0x0000], // 1.5, 256, +∞, +0
    ];
    for ((format, workers), want) in cases.iter().zip(expected) {
        let cfg = GoldenConfig::new(
            *format,
            &SUME_PORTS,
            vec![SlotConfig::new(9, 2, &[0, 1, 3])],
        );
        let inputs: Vec<InFrame> = workers
            .iter()
            .zip([0usize, 1, 3])
            .map(|(head, port)| {
                let mut payload = head.to_vec();
                payload.resize(32, 0);
                let p = AggPacket::new(*format, 9, 2, 0, port as u16, PORT, payload);
                input(SUME_PORTS[port], &p)
            })
            .collect();
        let out = run(&cfg, &inputs).expect("run");
        let agg = &out.aggregations[0];
        assert_eq!(&agg.sum[..4], &want, "{format}");
        assert_eq!(agg.bitmap, 0b1011);
        let dsts: Vec<u8> = agg.results.iter().map(|r| r.dst).collect();
        assert_eq!(dsts, [0x01, 0x04, 0x40]);
        for (r, i) in agg.results.iter().zip(&inputs) {
            check_result(&r.bytes, &i.bytes, 0, 0b1011, &agg.sum, *format);
        }
    }
}

#[test]
fn ecn_is_the_or_of_the_summed_packets() {
    for (e0, e1, want) in [(0, 0, 0), (0, 3, 3), (1, 1, 1), (2, 0, 2), (1, 2, 3)] {
        let mut p0 = AggPacket::new(FpFormat::Fp32, 5, 0, 0, 0, PORT, fp32_payload(&[1.0]));
        let mut p1 = AggPacket::new(FpFormat::Fp32, 5, 0, 0, 1, PORT, fp32_payload(&[1.0]));
        p0.ecn = e0;
        p1.ecn = e1;
        let out = run(
            &one_job_config(FpFormat::Fp32),
            &[input(0x04, &p1), input(0x01, &p0)],
        )
        .expect("run");
        assert_eq!(out.aggregations[0].ecn, want);
        for r in &out.aggregations[0].results {
            let (ip, _) = Ipv4Header::from_slice(&r.bytes[14..]).expect("IPv4");
            assert_eq!(ip.ecn.value(), want);
            assert_eq!(ip.header_checksum, ip.calc_header_checksum());
        }
    }
}

#[test]
fn specials_and_ftz_follow_the_adder_contract() {
    let nan = f32::from_bits(0x7F80_0001); // signalling NaN
    let sub = f32::from_bits(1); // smallest subnormal
    let a = [nan, f32::INFINITY, sub, -0.0];
    let b = [1.0, f32::NEG_INFINITY, sub, -0.0];
    let run_with = |ftz: bool| {
        let mut cfg = one_job_config(FpFormat::Fp32);
        cfg.ftz = ftz;
        let p0 = AggPacket::new(FpFormat::Fp32, 5, 0, 0, 0, PORT, fp32_payload(&a));
        let p1 = AggPacket::new(FpFormat::Fp32, 5, 0, 0, 1, PORT, fp32_payload(&b));
        run(&cfg, &[input(0x01, &p0), input(0x04, &p1)])
            .expect("run")
            .aggregations[0]
            .sum
            .clone()
    };
    let s = run_with(false);
    assert_eq!(&s[..4], &[0x7FC0_0000, 0x7FC0_0000, 2, 0x8000_0000]);
    let s = run_with(true);
    assert_eq!(&s[..4], &[0x7FC0_0000, 0x7FC0_0000, 0, 0x8000_0000]);
}

#[test]
fn seq_gap_drops_the_older_head() {
    let cfg = one_job_config(FpFormat::Fp32);
    let pk = |seq: u32, w: u16| {
        AggPacket::new(
            FpFormat::Fp32,
            5,
            0,
            seq,
            w,
            PORT,
            fp32_payload(&[seq as f32]),
        )
    };
    // Port 0 sends 0,1,2,3; port 1 lost seq 1.
    let s0: Vec<_> = (0..4).map(|s| input(0x01, &pk(s, 0))).collect();
    let s1: Vec<_> = [0, 2, 3].iter().map(|&s| input(0x04, &pk(s, 1))).collect();
    let mut rng = seeded("seq_gap_drops_the_older_head", 3);
    for _ in 0..20 {
        let inputs = traffic::interleave(&mut rng, vec![s0.clone(), s1.clone()]);
        let out = run(&cfg, &inputs).expect("run");
        let seqs: Vec<u32> = out.aggregations.iter().map(|a| a.seq).collect();
        assert_eq!(seqs, [0, 2, 3], "same outcome for every interleaving");
        assert_eq!(out.counters.seq_mismatch, 1);
        assert_eq!(out.drops.len(), 1);
        assert_eq!(out.drops[0].port, 0);
        assert_eq!(out.drops[0].seq, 1);
        assert_eq!(out.drops[0].reason, DropReason::SeqMismatch { newest: 2 });
        assert_eq!(out.aggregations[1].sum[0], u64::from(4.0f32.to_bits()));
        assert!(out.waiting.is_empty());
    }
}

#[test]
fn duplicate_is_dropped_and_leftovers_are_reported() {
    let cfg = one_job_config(FpFormat::Fp32);
    let pk =
        |seq: u32, w: u16| AggPacket::new(FpFormat::Fp32, 5, 0, seq, w, PORT, fp32_payload(&[1.0]));
    let s0 = traffic::with_duplicate((0..3).map(|s| pk(s, 0)).collect(), 1); // 0,1,1,2
    let s1: Vec<_> = (0..4).map(|s| pk(s, 1)).collect(); // 0,1,2,3
    let mut rng = seeded("duplicate_is_dropped_and_leftovers_are_reported", 4);
    for _ in 0..20 {
        let inputs = traffic::interleave(
            &mut rng,
            vec![
                s0.iter().map(|p| input(0x01, p)).collect(),
                s1.iter().map(|p| input(0x04, p)).collect(),
            ],
        );
        let out = run(&cfg, &inputs).expect("run");
        let seqs: Vec<u32> = out.aggregations.iter().map(|a| a.seq).collect();
        assert_eq!(seqs, [0, 1, 2]);
        assert_eq!(out.counters.seq_mismatch, 1);
        assert_eq!(out.waiting.len(), 1, "port 1's seq 3 waits for a partner");
        assert_eq!(out.waiting[0].port, 1);
        assert_eq!(out.waiting[0].packet.header.seq, 3);
        let c = out.counters;
        assert_eq!(c.accepted, c.results_out + c.seq_mismatch + 1);
    }
    // A gap in the middle of a longer stream, built with the helper.
    let s0 = traffic::with_gap((0..5).map(|s| pk(s, 0)).collect(), 2);
    let s1: Vec<_> = (0..5).map(|s| pk(s, 1)).collect();
    let inputs: Vec<_> = s0
        .iter()
        .map(|p| input(0x01, p))
        .chain(s1.iter().map(|p| input(0x04, p)))
        .collect();
    let out = run(&cfg, &inputs).expect("run");
    let seqs: Vec<u32> = out.aggregations.iter().map(|a| a.seq).collect();
    assert_eq!(seqs, [0, 1, 3, 4]);
    assert_eq!(out.drops[0].port, 1);
}

#[test]
fn format_and_elem_count_mismatches_drop_all_heads() {
    let cfg = one_job_config(FpFormat::Fp32);
    let good =
        |seq: u32, w: u16| AggPacket::new(FpFormat::Fp32, 5, 0, seq, w, PORT, fp32_payload(&[1.0]));
    // Seq 0: port 0 sends bf16 (a format the instance was not built for).
    let bf = traffic::with_format(&good(0, 0), FpFormat::Bf16);
    assert!(matches!(
        classify(&frame(&bf), PORT, MAX),
        Class::Aggregation(_)
    ));
    // Seq 1: port 1 sends 32 fp32 elements, port 0 16.
    let mut long = good(1, 1);
    long.payload = vec![0; 32];
    long.header.elem_count = 32;
    let inputs = [
        input(0x01, &bf),
        input(0x04, &good(0, 1)),
        input(0x01, &good(1, 0)),
        input(0x04, &long),
        input(0x01, &good(2, 0)),
        input(0x04, &good(2, 1)),
    ];
    let out = run(&cfg, &inputs).expect("run");
    assert_eq!(out.counters.other_mismatch, 4);
    assert!(out
        .drops
        .iter()
        .all(|d| d.reason == DropReason::OtherMismatch));
    assert_eq!(out.aggregations.len(), 1);
    assert_eq!(out.aggregations[0].seq, 2);
    // Both heads bf16 in an fp32 instance: dropped too.
    let bf1 = traffic::with_format(&good(0, 1), FpFormat::Bf16);
    let out = run(&cfg, &[input(0x01, &bf), input(0x04, &bf1)]).expect("run");
    assert_eq!(out.counters.other_mismatch, 2);
    assert!(out.aggregations.is_empty());
}

#[test]
fn unknown_jobs_and_non_participating_ports_are_bypassed_unchanged() {
    let cfg = one_job_config(FpFormat::Fp32);
    let unknown = AggPacket::new(FpFormat::Fp32, 6, 0, 0, 0, PORT, fp32_payload(&[1.0]));
    let other_tree = AggPacket::new(FpFormat::Fp32, 5, 1, 0, 0, PORT, fp32_payload(&[1.0]));
    let not_participating = AggPacket::new(FpFormat::Fp32, 5, 0, 0, 2, PORT, fp32_payload(&[1.0]));
    let mut disabled = cfg.clone();
    disabled.slots[0].enable = false;
    let inputs = [
        input(0x01, &unknown),
        input(0x04, &other_tree),
        input(0x10, &not_participating),
    ];
    let out = run(&cfg, &inputs).expect("run");
    assert_eq!(out.counters.unknown_job, 3);
    assert_eq!(out.counters.bypassed, 3);
    assert_eq!(out.bypass_to(0x04), vec![inputs[0].bytes.as_slice()]);
    assert_eq!(out.bypass_to(0x01), vec![inputs[1].bytes.as_slice()]);
    assert_eq!(out.bypass_to(0x40), vec![inputs[2].bytes.as_slice()]);
    let p = AggPacket::new(FpFormat::Fp32, 5, 0, 0, 0, PORT, fp32_payload(&[1.0]));
    let out = run(&disabled, &[input(0x01, &p)]).expect("run");
    assert_eq!(out.counters.unknown_job, 1);
}

#[test]
fn configuration_and_input_errors_are_reported() {
    let mut cfg = one_job_config(FpFormat::Fp32);
    let p = AggPacket::new(FpFormat::Fp32, 5, 0, 0, 0, PORT, fp32_payload(&[1.0]));
    let e = run(&cfg, &[input(0x03, &p)]).unwrap_err();
    assert!(
        matches!(
            e,
            GoldenError::UnknownSourcePort {
                index: 0,
                src: 0x03,
                ..
            }
        ),
        "{e}"
    );
    cfg.slots[0].ports = 0b1_0000;
    assert_eq!(
        cfg.validate(),
        Err(ConfigError::SlotPorts {
            slot: 0,
            ports: 0b1_0000,
            port_count: 4
        })
    );
    let mut cfg = GoldenConfig::new(FpFormat::Fp16, &[0x01, 0x03], vec![]);
    assert!(matches!(
        cfg.validate(),
        Err(ConfigError::PortCode { index: 1, code: 3 })
    ));
    cfg.port_codes = PLUS_PORTS.to_vec();
    assert_eq!(cfg.validate(), Err(ConfigError::SlotCount { count: 0 }));
    cfg.slots = vec![SlotConfig::new(1, 0, &[])];
    assert_eq!(cfg.validate(), Err(ConfigError::EmptySlot { slot: 0 }));
    cfg.slots = vec![SlotConfig::new(1, 0, &[0, 1])];
    cfg.max_payload_bytes = 100;
    let msg = run(&cfg, &[]).unwrap_err().to_string();
    assert!(msg.contains("max_payload_bytes = 100"), "{msg}");
}

#[test]
fn host_ports_oversize_and_empty_frames() {
    // SUME: dma0 (0x02) routes to nf0 (0x01), dma1 (0x08) to nf1 (0x04).
    let cfg = one_job_config(FpFormat::Fp32);
    assert_eq!(cfg.host_route(0x02), Some(0x01));
    assert_eq!(cfg.host_route(0x08), Some(0x04));
    let p = AggPacket::new(FpFormat::Fp32, 5, 0, 0, 0, PORT, fp32_payload(&[1.0]));
    let agg = p.to_frame().expect("frame");
    let plain = vec![0x11; 100];
    let inputs = [
        InFrame {
            src: 0x02,
            bytes: plain.clone(),
        },
        InFrame {
            src: 0x08,
            bytes: agg.clone(),
        },
        InFrame {
            src: 0x01,
            bytes: vec![],
        },
        InFrame {
            src: 0x04,
            bytes: vec![0x22; cfg.max_frame_bytes + 1],
        },
        InFrame {
            src: 0x04,
            bytes: vec![0x33; cfg.max_frame_bytes],
        },
        InFrame {
            src: 0x10,
            bytes: vec![0x44; 7],
        },
    ];
    let out = run(&cfg, &inputs).expect("run");
    // The DMA frame and the aggregation packet from a DMA port (no slot has it)
    // go to the host routes; the runt is bypassed like any frame; the empty and
    // the oversize frame are dropped; a frame of exactly max_frame_bytes passes.
    let routed: Vec<(u8, usize)> = out.bypass.iter().map(|f| (f.dst, f.input)).collect();
    assert_eq!(routed, vec![(0x01, 0), (0x04, 1), (0x01, 4), (0x40, 5)]);
    assert_eq!(out.empty, vec![2]);
    assert_eq!(out.oversize, vec![3]);
    let c = out.counters;
    assert_eq!((c.packets_in, c.bypassed, c.unknown_job), (6, 4, 1));
    assert_eq!((c.empty_frames, c.oversize, c.accepted), (1, 1, 0));
}

#[test]
fn a_full_fifo_of_an_unready_slot_makes_the_rest_timing_dependent() {
    let mut cfg = one_job_config(FpFormat::Fp32);
    cfg.fifo_depth = Some(2);
    let pk =
        |seq: u32, w: u16| AggPacket::new(FpFormat::Fp32, 5, 0, seq, w, PORT, fp32_payload(&[1.0]));
    let inputs: Vec<_> = (0..3)
        .map(|s| input(0x01, &pk(s, 0)))
        .chain((0..3).map(|s| input(0x04, &pk(s, 1))))
        .collect();
    let out = run(&cfg, &inputs).expect("run");
    assert_eq!(out.overflow_at, Some(2));
    assert_eq!(out.undetermined, 4);
    assert_eq!(out.counters.packets_in, 6);
    assert_eq!(out.counters.accepted, 2);
    assert_eq!(out.waiting.len(), 2);
    // Depth 3 is enough.
    cfg.fifo_depth = Some(3);
    let out = run(&cfg, &inputs).expect("run");
    assert_eq!(out.overflow_at, None);
    assert_eq!(out.aggregations.len(), 3);
}

/// Three jobs over four SUME ports sharing ports, with background and malformed
/// traffic, interleaved at random; for each format, sums checked against integer
/// arithmetic and the tree order, bypass and results per port, counters.
#[test]
fn three_jobs_four_ports_interleaved_all_formats() {
    let mut rng = seeded("three_jobs_four_ports_interleaved_all_formats", 0x3_4);
    let jobs = [
        JobSpec {
            job_id: 100,
            tree_id: 0,
            ports: vec![0, 1, 2, 3],
            elements: 300,
            payload_bytes: 256,
        },
        JobSpec {
            job_id: 100,
            tree_id: 1,
            ports: vec![0, 2],
            elements: 200,
            payload_bytes: 128,
        },
        JobSpec {
            job_id: 7,
            tree_id: 0,
            ports: vec![1, 2, 3],
            elements: 150,
            payload_bytes: 64,
        },
    ];
    for format in FpFormat::ALL {
        for values in [Values::SmallIntegers, Values::WithSpecials] {
            let mut cfg = GoldenConfig::new(
                format,
                &SUME_PORTS,
                jobs.iter()
                    .map(|j| SlotConfig::new(j.job_id, j.tree_id, &j.ports))
                    .collect(),
            );
            cfg.ftz = values == Values::WithSpecials && format == FpFormat::Fp16;
            let streams: Vec<Vec<WorkerStream>> = jobs
                .iter()
                .map(|j| traffic::job_streams(&mut rng, j, format, PORT, values, true))
                .collect();
            let mut per_source: Vec<Vec<InFrame>> = Vec::new();
            for s in streams.iter().flatten() {
                per_source.push(traffic::stream_frames(&cfg, s).expect("frames"));
            }
            let mut background = Vec::new();
            let mut malformed = 0;
            for (port, &code) in SUME_PORTS.iter().enumerate() {
                let mut frames = Vec::new();
                for _ in 0..30 {
                    frames.push(InFrame {
                        src: code,
                        bytes: traffic::background_frame(&mut rng, PORT),
                    });
                }
                let base = &streams[0][port].packets[0];
                for d in Defect::ALL {
                    frames.push(InFrame {
                        src: code,
                        bytes: traffic::with_defect(&mut rng, &frame(base), d, MAX),
                    });
                    malformed += 1;
                }
                per_source.push(frames.clone());
                background.push(frames);
            }
            let inputs = traffic::interleave(&mut rng, per_source);
            let out = run(&cfg, &inputs).expect("run");
            check_three_jobs(&cfg, &jobs, &streams, &inputs, &out, values);
            assert_eq!(out.counters.malformed, malformed);
            assert_eq!(out.counters.bypassed, 4 * 30);
            // Bypass: each port's background frames arrive at its pair, in order.
            for (port, frames) in background.iter().enumerate() {
                let want: Vec<&[u8]> = frames
                    .iter()
                    .filter(|f| matches!(classify(&f.bytes, PORT, MAX), Class::Bypass))
                    .map(|f| f.bytes.as_slice())
                    .collect();
                assert_eq!(
                    out.bypass_to(SUME_PORTS[port ^ 1]),
                    want,
                    "{format} port {port}"
                );
            }
        }
    }
}

fn check_three_jobs(
    cfg: &GoldenConfig,
    jobs: &[JobSpec],
    streams: &[Vec<WorkerStream>],
    inputs: &[InFrame],
    out: &GoldenOutcome,
    values: Values,
) {
    let f = cfg.format;
    assert!(out.waiting.is_empty() && out.drops.is_empty());
    let c = out.counters;
    assert_eq!(c.packets_in, inputs.len() as u64);
    assert_eq!(c.packets_in, c.bypassed + c.accepted + c.malformed);
    assert_eq!(c.accepted, c.results_out);
    assert_eq!(c.unknown_job, 0);
    for (slot, (job, workers)) in jobs.iter().zip(streams).enumerate() {
        let chunks = workers[0].packets.len();
        let aggs: Vec<_> = out.aggregations.iter().filter(|a| a.slot == slot).collect();
        assert_eq!(aggs.len(), chunks);
        let bitmap = job.ports.iter().fold(0u32, |b, &p| b | 1 << p);
        for (seq, agg) in aggs.iter().enumerate() {
            assert_eq!(agg.seq as usize, seq);
            assert_eq!(agg.bitmap, bitmap);
            let ecn = workers.iter().fold(0, |e, w| e | w.packets[seq].ecn);
            assert_eq!(agg.ecn, ecn);
            for (e, &got) in agg.sum.iter().enumerate() {
                let mut operands = vec![None; 4];
                for w in workers {
                    operands[w.port] = Some(w.packets[seq].payload[e]);
                }
                if values == Values::SmallIntegers {
                    // Exact: the integer sum, independently of the adder.
                    let want: f64 = operands.iter().flatten().map(|&b| to_f64(f, b)).sum();
                    assert_eq!(to_f64(f, got), want, "{f} slot {slot} seq {seq} elem {e}");
                } else {
                    assert_eq!(got, tree_sum(f, cfg.ftz, &operands));
                }
            }
            // One result per participating port, in port order, to that port.
            let dsts: Vec<u8> = agg.results.iter().map(|r| r.dst).collect();
            let want: Vec<u8> = job.ports.iter().map(|&p| SUME_PORTS[p]).collect();
            assert_eq!(dsts, want);
            for (r, &i) in agg.results.iter().zip(&agg.inputs) {
                check_result(&r.bytes, &inputs[i].bytes, ecn, bitmap, &agg.sum, f);
            }
        }
        for (w, &p) in workers.iter().zip(&job.ports) {
            assert_eq!(out.results_to(slot, SUME_PORTS[p]).len(), chunks);
            assert_eq!(w.port, p);
        }
    }
}

/// The per-slot outcome does not depend on how the ports' streams interleave.
#[test]
fn outcome_depends_only_on_per_port_order() {
    let mut rng = seeded("outcome_depends_only_on_per_port_order", 99);
    let job = JobSpec {
        job_id: 1,
        tree_id: 0,
        ports: vec![0, 1, 3],
        elements: 160,
        payload_bytes: 64,
    };
    let cfg = GoldenConfig::new(
        FpFormat::Bf16,
        &SUME_PORTS,
        vec![SlotConfig::new(1, 0, &job.ports)],
    );
    let mut streams =
        traffic::job_streams(&mut rng, &job, FpFormat::Bf16, PORT, Values::Finite, true);
    streams[0].packets = traffic::with_gap(streams[0].packets.clone(), 1);
    streams[2].packets = traffic::with_duplicate(streams[2].packets.clone(), 0);
    let per_port: Vec<Vec<InFrame>> = streams
        .iter()
        .map(|s| traffic::stream_frames(&cfg, s).expect("frames"))
        .collect();
    let reference = run(&cfg, &per_port.concat()).expect("run");
    assert!(!reference.drops.is_empty());
    for _ in 0..30 {
        let inputs = traffic::interleave(&mut rng, per_port.clone());
        let out = run(&cfg, &inputs).expect("run");
        // The frames, not the input indices (those follow the arrival order).
        let frames = |o: &GoldenOutcome| -> Vec<(u8, Vec<u8>)> {
            o.slot_results(0)
                .into_iter()
                .map(|f| (f.dst, f.bytes.clone()))
                .collect()
        };
        assert_eq!(frames(&out), frames(&reference));
        assert_eq!(out.counters, reference.counters);
    }
}

// ---------------------------------------------------------------- pcap

fn sample_inputs(seed: u64) -> Vec<InFrame> {
    let mut rng = seeded("pcap sample", seed);
    (0..40)
        .map(|i| InFrame {
            src: SUME_PORTS[rng.gen_range(0..4)],
            bytes: if i % 3 == 0 {
                frame(&AggPacket::new(
                    FpFormat::Fp32,
                    1,
                    0,
                    i,
                    0,
                    PORT,
                    fp32_payload(&[i as f32]),
                ))
            } else {
                traffic::background_frame(&mut rng, PORT)
            },
        })
        .collect()
}

#[test]
fn pcap_per_port_and_pcapng_round_trip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs = sample_inputs(21);
    let paths: Vec<_> = (0..4)
        .map(|i| dir.path().join(format!("nf{i}.pcap")))
        .collect();
    let files: Vec<(u8, &Path)> = SUME_PORTS
        .iter()
        .zip(&paths)
        .map(|(&c, p)| (c, p.as_path()))
        .collect();
    pcap::write_port_pcaps(&files, &inputs).expect("write pcaps");
    assert_eq!(pcap::read_port_pcaps(&files).expect("read pcaps"), inputs);
    let one = pcap::read_pcap(&paths[0]).expect("read one");
    assert_eq!(
        one.iter().map(|s| &s.bytes).collect::<Vec<_>>(),
        inputs
            .iter()
            .filter(|f| f.src == SUME_PORTS[0])
            .map(|f| &f.bytes)
            .collect::<Vec<_>>()
    );
    let ng = dir.path().join("all.pcapng");
    pcap::write_pcapng(&ng, &SUME_PORTS, &inputs).expect("write pcapng");
    assert_eq!(pcap::read_pcapng(&ng).expect("read pcapng"), inputs);
}

#[test]
fn pcap_errors_name_the_path_and_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.pcap");
    let e = pcap::read_pcap(&missing).unwrap_err();
    assert!(matches!(e, PcapError::Io { .. }));
    assert!(e.to_string().contains("missing.pcap"), "{e}");
    let garbage = dir.path().join("garbage.pcap");
    std::fs::write(&garbage, b"this is not a capture file").expect("write");
    let e = pcap::read_pcap(&garbage).unwrap_err().to_string();
    assert!(
        e.contains("garbage.pcap") && e.contains("not a valid pcap"),
        "{e}"
    );
    let e = pcap::read_pcapng(&garbage).unwrap_err().to_string();
    assert!(e.contains("garbage.pcap") && e.contains("pcapng"), "{e}");
    let ng = dir.path().join("x.pcapng");
    let inputs = sample_inputs(5);
    let e = pcap::write_pcapng(&ng, &SUME_PORTS[..2], &inputs).unwrap_err();
    assert!(matches!(e, PcapError::UnknownPort { .. }), "{e}");
}
