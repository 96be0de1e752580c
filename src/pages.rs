//! Large temporaries in pages of their own.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

/// Types for which all-zero bytes are a valid value, and that need no drop.
///
/// # Safety
/// Implement only for plain data whose every field accepts zero.
pub(crate) unsafe trait Zeroable: Sized {}

// SAFETY: integers only.
unsafe impl Zeroable for (u32, usize) {}

// SAFETY: an atomic integer is an integer in memory.
unsafe impl Zeroable for std::sync::atomic::AtomicU64 {}

/// A zeroed buffer of `len` values in an anonymous mapping, unmapped when dropped. The
/// allocator would keep a freed block resident for a while, to reuse it: for the graph's
/// temporaries, which are freed before the replay allocates its own arrays, that kept block
/// would add to the run's peak memory.
pub(crate) struct Pages<T: Zeroable> {
    map: memmap2::MmapMut,
    len: usize,
    _of: PhantomData<T>,
}

impl<T: Zeroable> Pages<T> {
    pub(crate) fn zeroed(len: usize) -> Pages<T> {
        let bytes = (len * size_of::<T>()).max(1);
        let map = memmap2::MmapMut::map_anon(bytes)
            .unwrap_or_else(|e| panic!("cannot map {bytes} bytes of memory: {e}"));
        Pages {
            map,
            len,
            _of: PhantomData,
        }
    }

    /// Twice as many values, the new ones zeroed: the old pages copied, then unmapped.
    pub(crate) fn doubled(&self) -> Pages<T>
    where
        T: Copy,
    {
        let mut more = Pages::zeroed(2 * self.len.max(1));
        more[..self.len].copy_from_slice(self);
        more
    }
}

impl<T: Zeroable> Deref for Pages<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the mapping is page-aligned (so aligned for T), holds `len` values, and
        // zeroed bytes are valid values of T.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast(), self.len) }
    }
}

impl<T: Zeroable> DerefMut for Pages<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and the map is borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr().cast(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubling_keeps_the_values_and_zeroes_the_rest() {
        let mut p = Pages::<(u32, usize)>::zeroed(2);
        p.copy_from_slice(&[(7, 8), (9, 10)]);
        let q = p.doubled();
        assert_eq!(&q[..], &[(7, 8), (9, 10), (0, 0), (0, 0)]);
        assert_eq!(Pages::<(u32, usize)>::zeroed(0).doubled().len(), 2);
    }
}
