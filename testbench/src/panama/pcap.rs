//! pcap files for the accelerator's inputs and outputs, through `pcap-file`.
//!
//! Two layouts:
//! - **one classic pcap per port** (Ethernet link type, microsecond timestamps):
//!   [`write_pcap`] / [`read_pcap`] for one file, [`read_port_pcaps`] merges several
//!   into one arrival order by timestamp (ties: the order of the files given, then
//!   the order within a file). [`write_port_pcaps`] stamps frame *i* of the merged
//!   sequence with *i* µs so the merge restores the order exactly.
//! - **one pcapng file** for all ports ([`write_pcapng`] / [`read_pcapng`]): one
//!   Interface Description Block per port, in port-index order, named `port<i>`,
//!   whose description (option `if_description`) is the one-hot tuser code in hex,
//!   e.g. `0x04`; each Enhanced Packet Block's `interface_id` says the source port.
//!   Timestamps are the arrival index in µs; the file order is the arrival order.
//!
//! Errors name the file and the reason; a file whose writing failed is removed
//! (see [`crate::files`]).

use super::golden::InFrame;
use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::{Block, PcapNgReader, PcapNgWriter};
use pcap_file::DataLink;
use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// Why a pcap file could not be read or written.
#[derive(Debug, Error)]
pub enum PcapError {
    /// Opening, creating or flushing the file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The reason.
        source: std::io::Error,
    },
    /// pcap-file refused to write a block (no I/O error: that is [`PcapError::Io`]).
    #[error("{}: cannot write the capture: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The reason.
        source: pcap_file::PcapError,
    },
    /// pcap-file rejected the file's contents.
    #[error("{}: not a valid {kind} file: {source}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// "pcap" or "pcapng".
        kind: &'static str,
        /// The reason.
        source: pcap_file::PcapError,
    },
    /// The link type is not Ethernet.
    #[error("{}: link type {datalink:?}, expected Ethernet", path.display())]
    LinkType {
        /// The file.
        path: PathBuf,
        /// The link type found.
        datalink: DataLink,
    },
    /// A packet was captured shorter than it was on the wire.
    #[error("{}: packet {index} captured {captured} of {original} bytes (snap length too short)", path.display())]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Packet index in the file.
        index: usize,
        /// Bytes in the file.
        captured: usize,
        /// Bytes on the wire.
        original: u32,
    },
    /// A pcapng interface has no usable one-hot port code in its description.
    #[error("{}: interface {interface} has no one-hot tuser port code (if_description like `0x04`)", path.display())]
    PortCode {
        /// The file.
        path: PathBuf,
        /// Interface id.
        interface: u32,
    },
    /// A pcapng packet names an interface the file did not describe.
    #[error("{}: packet {index} is on interface {interface}, which the file does not describe", path.display())]
    Interface {
        /// The file.
        path: PathBuf,
        /// Packet index in the file.
        index: usize,
        /// The interface id.
        interface: u32,
    },
    /// The file is neither a classic pcap nor a pcapng file.
    #[error("{}: neither a pcap nor a pcapng file ({found}; expected magic a1b2c3d4, d4c3b2a1, a1b23c4d or 4d3cb2a1 for pcap, 0a0d0d0a for pcapng)", path.display())]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// What the file starts with.
        found: String,
    },
    /// A frame's source code is not one of the port codes given for writing.
    #[error("{}: frame {index} has source port code {src:#04x}, not one of {ports:02x?}", path.display())]
    UnknownPort {
        /// The file.
        path: PathBuf,
        /// Frame index.
        index: usize,
        /// Its source code.
        src: u8,
        /// The port codes given.
        ports: Vec<u8>,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PcapError + '_ {
    move |source| PcapError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn format<'a>(
    path: &'a Path,
    kind: &'static str,
) -> impl FnOnce(pcap_file::PcapError) -> PcapError + 'a {
    move |source| PcapError::Format {
        path: path.to_path_buf(),
        kind,
        source,
    }
}

/// A timestamped frame of a classic pcap file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamped {
    /// Capture time.
    pub time: Duration,
    /// The frame.
    pub bytes: Vec<u8>,
}

/// The error of a write into `path` that pcap-file refused: the I/O error itself
/// when there is one (a full disk is no format problem).
fn written(path: &Path) -> impl FnOnce(pcap_file::PcapError) -> PcapError + '_ {
    move |source| match source {
        pcap_file::PcapError::IoError(source) => PcapError::Io {
            path: path.to_path_buf(),
            source,
        },
        source => PcapError::Write {
            path: path.to_path_buf(),
            source,
        },
    }
}

/// Creates `path` and writes it with `write`; if that fails, the incomplete file
/// is removed (when it is a regular file) and the error returned.
fn create_with(
    path: &Path,
    write: impl FnOnce(BufWriter<File>) -> Result<(), PcapError>,
) -> Result<(), PcapError> {
    let file = File::create(path).map_err(io(path))?;
    write(BufWriter::new(file)).inspect_err(|_| {
        crate::files::remove_incomplete(path);
    })
}

/// Writes `frames` to a classic pcap file at `path` (Ethernet, µs timestamps).
pub fn write_pcap(path: &Path, frames: &[Stamped]) -> Result<(), PcapError> {
    create_with(path, |out| {
        let mut w = PcapWriter::new(out).map_err(written(path))?;
        for f in frames {
            let packet = PcapPacket::new(f.time, f.bytes.len() as u32, &f.bytes);
            w.write_packet(&packet).map_err(written(path))?;
        }
        w.into_writer().flush().map_err(io(path))
    })
}

/// Reads every frame of the classic pcap file at `path`.
pub fn read_pcap(path: &Path) -> Result<Vec<Stamped>, PcapError> {
    let file = File::open(path).map_err(io(path))?;
    let mut r = PcapReader::new(BufReader::new(file)).map_err(format(path, "pcap"))?;
    let datalink = r.header().datalink;
    if datalink != DataLink::ETHERNET {
        return Err(PcapError::LinkType {
            path: path.to_path_buf(),
            datalink,
        });
    }
    let mut out = Vec::new();
    while let Some(packet) = r.next_packet() {
        let packet = packet.map_err(format(path, "pcap"))?;
        if packet.data.len() != packet.orig_len as usize {
            return Err(PcapError::Truncated {
                path: path.to_path_buf(),
                index: out.len(),
                captured: packet.data.len(),
                original: packet.orig_len,
            });
        }
        out.push(Stamped {
            time: packet.timestamp,
            bytes: packet.data.into_owned(),
        });
    }
    Ok(out)
}

/// Writes `frames` as one classic pcap per port: `files[i]` = (port code, path);
/// frame *i* is stamped *i* µs. Frames from ports not listed are an error.
pub fn write_port_pcaps(files: &[(u8, &Path)], frames: &[InFrame]) -> Result<(), PcapError> {
    let ports: Vec<u8> = files.iter().map(|(c, _)| *c).collect();
    let mut per_file: Vec<Vec<Stamped>> = vec![Vec::new(); files.len()];
    for (index, f) in frames.iter().enumerate() {
        let Some(k) = ports.iter().position(|&c| c == f.src) else {
            return Err(PcapError::UnknownPort {
                path: files
                    .first()
                    .map_or_else(PathBuf::new, |(_, p)| p.to_path_buf()),
                index,
                src: f.src,
                ports,
            });
        };
        per_file[k].push(Stamped {
            time: Duration::from_micros(index as u64),
            bytes: f.bytes.clone(),
        });
    }
    for ((_, path), frames) in files.iter().zip(&per_file) {
        write_pcap(path, frames)?;
    }
    Ok(())
}

/// Reads one classic pcap per port (`files[i]` = (port code, path)) and merges them
/// into arrival order by timestamp; ties keep file order, then in-file order.
pub fn read_port_pcaps(files: &[(u8, &Path)]) -> Result<Vec<InFrame>, PcapError> {
    merge_by_time(files, read_pcap)
}

/// Reads `files` with `read` and merges them by timestamp (ties: file order, then
/// in-file order), each frame entering on its file's port code.
fn merge_by_time(
    files: &[(u8, &Path)],
    read: fn(&Path) -> Result<Vec<Stamped>, PcapError>,
) -> Result<Vec<InFrame>, PcapError> {
    let mut all: Vec<(Duration, usize, usize, InFrame)> = Vec::new();
    for (k, (src, path)) in files.iter().enumerate() {
        for (i, s) in read(path)?.into_iter().enumerate() {
            all.push((
                s.time,
                k,
                i,
                InFrame {
                    src: *src,
                    bytes: s.bytes,
                },
            ));
        }
    }
    all.sort_by_key(|(t, k, i, _)| (*t, *k, *i));
    Ok(all.into_iter().map(|(_, _, _, f)| f).collect())
}

/// Writes `frames` (arrival order) to one pcapng file, one interface per entry of
/// `port_codes` (see the module docs); frame *i* is stamped *i* µs.
pub fn write_pcapng(path: &Path, port_codes: &[u8], frames: &[InFrame]) -> Result<(), PcapError> {
    write_pcapng_stamped(path, port_codes, frames, |i| {
        Duration::from_micros(i as u64)
    })
}

/// [`write_pcapng`] with frame *i* stamped `time(i)`; the file keeps the order of
/// `frames`, which is the order [`read_pcapng`] gives back.
pub fn write_pcapng_stamped(
    path: &Path,
    port_codes: &[u8],
    frames: &[InFrame],
    time: impl Fn(usize) -> Duration,
) -> Result<(), PcapError> {
    create_with(path, |out| {
        write_pcapng_blocks(out, path, port_codes, frames, time)
    })
}

/// The blocks of [`write_pcapng_stamped`] into `out`, the file at `path`.
fn write_pcapng_blocks(
    out: BufWriter<File>,
    path: &Path,
    port_codes: &[u8],
    frames: &[InFrame],
    time: impl Fn(usize) -> Duration,
) -> Result<(), PcapError> {
    let mut w = PcapNgWriter::new(out).map_err(written(path))?;
    for (i, code) in port_codes.iter().enumerate() {
        let idb = InterfaceDescriptionBlock {
            linktype: DataLink::ETHERNET,
            snaplen: 0,
            options: vec![
                InterfaceDescriptionOption::IfName(Cow::Owned(format!("port{i}"))),
                InterfaceDescriptionOption::IfDescription(Cow::Owned(format!("{code:#04x}"))),
            ],
        };
        w.write_pcapng_block(idb).map_err(written(path))?;
    }
    for (index, f) in frames.iter().enumerate() {
        let Some(interface) = port_codes.iter().position(|&c| c == f.src) else {
            return Err(PcapError::UnknownPort {
                path: path.to_path_buf(),
                index,
                src: f.src,
                ports: port_codes.to_vec(),
            });
        };
        let epb = EnhancedPacketBlock {
            interface_id: interface as u32,
            timestamp: time(index),
            original_len: f.bytes.len() as u32,
            data: Cow::Borrowed(&f.bytes),
            options: vec![],
        };
        w.write_pcapng_block(epb).map_err(written(path))?;
    }
    w.into_inner().flush().map_err(io(path))
}

/// The two capture formats, told apart by their first four bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureFormat {
    /// Classic pcap (magic `a1b2c3d4` µs or `a1b23c4d` ns, either byte order).
    Pcap,
    /// pcapng (a Section Header Block, `0a0d0d0a`).
    PcapNg,
}

impl CaptureFormat {
    /// The format whose magic number `bytes` starts with, if any.
    pub fn from_magic(bytes: &[u8]) -> Option<Self> {
        let magic: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
        match u32::from_be_bytes(magic) {
            0xa1b2_c3d4 | 0xd4c3_b2a1 | 0xa1b2_3c4d | 0x4d3c_b2a1 => Some(CaptureFormat::Pcap),
            0x0a0d_0d0a => Some(CaptureFormat::PcapNg),
            _ => None,
        }
    }

    /// The format of the file at `path`, from its magic number.
    pub fn of_file(path: &Path) -> Result<Self, PcapError> {
        let mut head = Vec::with_capacity(4);
        File::open(path)
            .and_then(|f| f.take(4).read_to_end(&mut head))
            .map_err(io(path))?;
        Self::from_magic(&head).ok_or_else(|| PcapError::UnknownFormat {
            path: path.to_path_buf(),
            found: if head.len() < 4 {
                format!("only {} bytes long", head.len())
            } else {
                format!(
                    "starts with {:02x}{:02x}{:02x}{:02x}",
                    head[0], head[1], head[2], head[3]
                )
            },
        })
    }
}

/// Reads every frame of a capture file, classic pcap or pcapng (told by its magic
/// number), with its timestamp; pcapng interfaces are ignored (every frame counts).
pub fn read_capture(path: &Path) -> Result<Vec<Stamped>, PcapError> {
    match CaptureFormat::of_file(path)? {
        CaptureFormat::Pcap => read_pcap(path),
        CaptureFormat::PcapNg => read_pcapng_stamped(path),
    }
}

/// Reads every Enhanced Packet Block of the pcapng file at `path` with its
/// timestamp, whatever its interface (Ethernet interfaces only).
fn read_pcapng_stamped(path: &Path) -> Result<Vec<Stamped>, PcapError> {
    let file = File::open(path).map_err(io(path))?;
    let mut r = PcapNgReader::new(BufReader::new(file)).map_err(format(path, "pcapng"))?;
    let mut out = Vec::new();
    while let Some(block) = r.next_block() {
        match block.map_err(format(path, "pcapng"))? {
            Block::InterfaceDescription(idb) if idb.linktype != DataLink::ETHERNET => {
                return Err(PcapError::LinkType {
                    path: path.to_path_buf(),
                    datalink: idb.linktype,
                });
            }
            Block::EnhancedPacket(epb) => {
                if epb.data.len() != epb.original_len as usize {
                    return Err(PcapError::Truncated {
                        path: path.to_path_buf(),
                        index: out.len(),
                        captured: epb.data.len(),
                        original: epb.original_len,
                    });
                }
                out.push(Stamped {
                    time: epb.timestamp,
                    bytes: epb.data.into_owned(),
                });
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Like [`read_port_pcaps`], but each file may be a classic pcap or a pcapng
/// ([`read_capture`]): every frame of `files[i]` enters on port code `files[i].0`,
/// merged by timestamp (ties: file order, then in-file order).
pub fn read_port_captures(files: &[(u8, &Path)]) -> Result<Vec<InFrame>, PcapError> {
    merge_by_time(files, read_capture)
}

/// Reads a pcapng file written as the module docs say: frames in file order with
/// their source port codes.
pub fn read_pcapng(path: &Path) -> Result<Vec<InFrame>, PcapError> {
    let file = File::open(path).map_err(io(path))?;
    let mut r = PcapNgReader::new(BufReader::new(file)).map_err(format(path, "pcapng"))?;
    let mut codes: Vec<Option<u8>> = Vec::new();
    let mut out = Vec::new();
    while let Some(block) = r.next_block() {
        match block.map_err(format(path, "pcapng"))? {
            Block::InterfaceDescription(idb) => {
                if idb.linktype != DataLink::ETHERNET {
                    return Err(PcapError::LinkType {
                        path: path.to_path_buf(),
                        datalink: idb.linktype,
                    });
                }
                let code = idb.options.iter().find_map(|o| match o {
                    InterfaceDescriptionOption::IfDescription(d) => {
                        let hex = d.trim().trim_start_matches("0x");
                        u8::from_str_radix(hex, 16)
                            .ok()
                            .filter(|c| c.count_ones() == 1)
                    }
                    _ => None,
                });
                codes.push(code);
            }
            Block::EnhancedPacket(epb) => {
                let index = out.len();
                let interface = epb.interface_id;
                let code = match codes.get(interface as usize) {
                    None => {
                        return Err(PcapError::Interface {
                            path: path.to_path_buf(),
                            index,
                            interface,
                        })
                    }
                    Some(None) => {
                        return Err(PcapError::PortCode {
                            path: path.to_path_buf(),
                            interface,
                        })
                    }
                    Some(Some(c)) => *c,
                };
                if epb.data.len() != epb.original_len as usize {
                    return Err(PcapError::Truncated {
                        path: path.to_path_buf(),
                        index,
                        captured: epb.data.len(),
                        original: epb.original_len,
                    });
                }
                out.push(InFrame {
                    src: code,
                    bytes: epb.data.into_owned(),
                });
            }
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A write that fails (here every one: `/dev/full`, a full disk) is an I/O
    /// error naming the file, not a format error; a device is left in place.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_capture_that_cannot_be_written_is_an_io_error_naming_it() {
        let full = Path::new("/dev/full");
        let frames: Vec<InFrame> = (0..64)
            .map(|i| InFrame {
                src: 0x04,
                bytes: vec![i as u8; 1514],
            })
            .collect();
        let e = write_pcapng(full, &[0x01, 0x04], &frames).unwrap_err();
        assert!(
            matches!(&e, PcapError::Io { path, source }
                if path == full && source.kind() == std::io::ErrorKind::StorageFull),
            "{e}"
        );
        let stamped = [Stamped {
            time: Duration::ZERO,
            bytes: vec![0; 9000],
        }];
        let e = write_pcap(full, &stamped).unwrap_err();
        assert!(matches!(e, PcapError::Io { .. }), "{e}");
        assert!(full.exists());
    }
}
