//! Payload elements: each a little-endian IEEE-754 value of the packet's format
//! (host memory order), held in this crate as its bit pattern in a `u64`.

use super::frame::FrameError;
use super::header::elem_bytes;
use hdl::blocks::fp::FpFormat;

/// Encodes `elements` as little-endian `format` values; an element with bits above
/// the format's width is an error naming its index.
pub fn encode(format: FpFormat, elements: &[u64]) -> Result<Vec<u8>, FrameError> {
    let mut out = Vec::new();
    encode_into(format, elements, &mut out)?;
    Ok(out)
}

/// [`encode`], appending to `out` (which is left as it was on an error).
pub fn encode_into(
    format: FpFormat,
    elements: &[u64],
    out: &mut Vec<u8>,
) -> Result<(), FrameError> {
    if let Some(index) = elements.iter().position(|&v| v >> format.width() != 0) {
        return Err(FrameError::ElementTooWide {
            index,
            value: elements[index],
            format,
        });
    }
    match format {
        FpFormat::Fp32 => put::<4>(elements, out),
        FpFormat::Bf16 | FpFormat::Fp16 => put::<2>(elements, out),
    }
    Ok(())
}

/// The low `N` bytes of each element, little-endian, appended to `out`.
fn put<const N: usize>(elements: &[u64], out: &mut Vec<u8>) {
    out.reserve(elements.len() * N);
    for &value in elements {
        out.extend_from_slice(&value.to_le_bytes()[..N]);
    }
}

/// Decodes whole little-endian `format` elements from `bytes`; a trailing partial
/// element (which a well-formed packet never has) is ignored.
pub fn decode(format: FpFormat, bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(elem_bytes(format))
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_little_endian() {
        let b = encode(FpFormat::Fp32, &[0x3F80_0000]).unwrap();
        assert_eq!(b, [0x00, 0x00, 0x80, 0x3F]);
        let b = encode(FpFormat::Fp16, &[0x3C00, 0x7E00]).unwrap();
        assert_eq!(b, [0x00, 0x3C, 0x00, 0x7E]);
        assert_eq!(decode(FpFormat::Fp16, &b), vec![0x3C00, 0x7E00]);
        assert!(encode(FpFormat::Bf16, &[0x1_0000]).is_err());
    }
}
