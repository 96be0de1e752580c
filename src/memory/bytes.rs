//! Bytes classed sixteen at a time (SSE2, part of every x86_64 processor), for the text
//! readers' plain lines.

use std::arch::x86_64::*;

/// Which of the 16 bytes of `part` are a colon, a line feed, an ASCII digit: a bit each, the
/// first byte's the lowest.
#[inline(always)]
pub fn classes16(part: &[u8; 16]) -> (u16, u16, u16) {
    // SAFETY: SSE2 is in every x86_64 processor's instruction set (the target's baseline);
    // the load reads the 16 bytes of `part` and no others.
    unsafe {
        let x = _mm_loadu_si128(part.as_ptr().cast());
        let colon = _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(b':' as i8)));
        let newline = _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(b'\n' as i8)));
        // A digit: at most 9 once '0' is taken away, as unsigned bytes.
        let nine = _mm_set1_epi8(9);
        let d = _mm_max_epu8(_mm_sub_epi8(x, _mm_set1_epi8(b'0' as i8)), nine);
        let digit = _mm_movemask_epi8(_mm_cmpeq_epi8(d, nine));
        (colon as u16, newline as u16, digit as u16)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_byte_is_classed_as_it_is() {
        for start in [0u8, 16, 32, 48, 64, 240] {
            let part: [u8; 16] = std::array::from_fn(|i| start.wrapping_add(i as u8));
            let mut want = (0u16, 0u16, 0u16);
            for (i, b) in part.iter().enumerate() {
                want.0 |= u16::from(*b == b':') << i;
                want.1 |= u16::from(*b == b'\n') << i;
                want.2 |= u16::from(b.is_ascii_digit()) << i;
            }
            assert_eq!(super::classes16(&part), want, "{part:?}");
        }
    }
}
