//! Large temporaries in pages of their own, zeroed memory, and pages made present at once.

use super::Shortfall;
use rayon::prelude::*;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Types for which all-zero bytes are a valid value, and that need no drop. Declared with
/// `zeroable!`, which checks that every field is itself zeroable.
///
/// # Safety
/// Implement only for plain data whose every field accepts zero.
pub unsafe trait Zeroable: Sized {}

// SAFETY: integers, tuples of integers and atomic integers: zero bits are a value of each.
unsafe impl Zeroable for u8 {}
unsafe impl Zeroable for u16 {}
unsafe impl Zeroable for u32 {}
unsafe impl Zeroable for u64 {}
unsafe impl Zeroable for usize {}
unsafe impl Zeroable for i32 {}
unsafe impl Zeroable for i64 {}
unsafe impl Zeroable for (u32, usize) {}
unsafe impl Zeroable for std::sync::atomic::AtomicU64 {}

/// Declares a struct zeroable, naming all its fields with their types: the declaration does
/// not compile unless the names are all the fields (an exhaustive pattern) and each type is
/// itself [`Zeroable`]. `zeroable!(enum E = E::A)` declares a one-byte enum whose variant
/// `E::A` is 0.
macro_rules! zeroable {
    ($t:ident { $($f:ident: $ft:ty),+ $(,)? }) => {
        const _: () = {
            #[allow(dead_code)]
            fn all_fields_named(x: $t) { let $t { $($f: _),+ } = x; }
            #[allow(dead_code)]
            fn fields_zeroable(x: &$t) {
                fn zeroable<T: $crate::memory::Zeroable>(_: &T) {}
                $(let f: &$ft = &x.$f; zeroable(f);)+
            }
        };
        // SAFETY: every field is zeroable (checked above). Allowed where the macro is used:
        // the check is this module's.
        #[allow(unsafe_code)]
        unsafe impl $crate::memory::Zeroable for $t {}
    };
    (enum $t:ty = $zero:expr) => {
        const _: () = assert!(size_of::<$t>() == 1 && $zero as u8 == 0);
        // SAFETY: one byte, whose value 0 is the variant named (asserted above).
        #[allow(unsafe_code)]
        unsafe impl $crate::memory::Zeroable for $t {}
    };
}
pub(crate) use zeroable;

/// `n` zeroed values on the heap, whose pages the threads that first write them make present.
pub fn zeroed_slice<T: Zeroable>(n: usize) -> Box<[T]> {
    // SAFETY: zero bytes are a value of T (Zeroable).
    unsafe { Box::<[T]>::new_zeroed_slice(n).assume_init() }
}

/// A zeroed buffer of `len` values in an anonymous mapping, unmapped when dropped (unless
/// [`Pages::recycle`]d). The allocator would keep a freed block resident for a while, to reuse
/// it: for the graph's temporaries, which are freed before the replay allocates its own arrays,
/// that kept block would add to the run's peak memory.
pub(crate) struct Pages<T: Zeroable> {
    map: memmap2::MmapMut,
    len: usize,
    /// Its first bytes that were present and written when it was made ([`Pages::written`]).
    written: usize,
    _of: PhantomData<T>,
}

/// The mapping of a temporary given up by [`Pages::recycle`], for the next [`Pages::zeroed`] to
/// take over. Its pages are resident already: zeroing them costs a fraction of what the kernel
/// takes to fault fresh ones in (a page fault and a clear a page).
static SPARE: Mutex<Option<Spare>> = Mutex::new(None);

/// A mapping [`Pages::recycle`]d, and how many of its first bytes are known to be zero
/// (cleared by its last user, which wrote them).
struct Spare {
    map: memmap2::MmapMut,
    zero: usize,
}

impl<T: Zeroable> Pages<T> {
    /// `len` zeroed values, in the pages a temporary left ([`Pages::recycle`]) where there are
    /// some: cut or grown to size, zeroed in parallel (but what is known to be zero). The spare
    /// goes either way, so that no resident pages are kept past the next buffer.
    pub(crate) fn zeroed(len: usize) -> Result<Pages<T>, Shortfall> {
        let bytes = (len * size_of::<T>()).max(1);
        let spare = SPARE.lock().unwrap_or_else(|e| e.into_inner()).take();
        let mut written = 0;
        let map = match spare {
            Some(Spare { mut map, zero }) => {
                // What the spare held, up to the end of its last page (a buffer cut to a
                // smaller size keeps its last page whole, written past its length).
                // SAFETY: sysconf only reads a constant.
                let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as usize;
                let reused = map.len().next_multiple_of(page).min(bytes);
                // SAFETY: nothing else refers to the spare's memory (it was taken out of its
                // buffer, which is gone); a move leaves no reference behind either.
                unsafe { map.remap(bytes, memmap2::RemapOptions::new().may_move(true)) }
                    .map_err(|e| Shortfall::mapping(bytes, e))?;
                map[zero.min(reused)..reused]
                    .par_chunks_mut(1 << 20)
                    .for_each(|c| c.fill(0));
                written = reused;
                map
            }
            None => memmap2::MmapMut::map_anon(bytes).map_err(|e| Shortfall::mapping(bytes, e))?,
        };
        Ok(Pages {
            map,
            len,
            written,
            _of: PhantomData,
        })
    }

    /// How many of its first values were in pages present and written when it was made: those
    /// of a recycled buffer, written by its user or cleared here (the rest are fresh pages, to
    /// fault in as they are first written).
    pub(crate) fn written(&self) -> usize {
        self.written.min(self.len * size_of::<T>()) / size_of::<T>().max(1)
    }

    /// Drops the buffer but keeps its pages for the next [`Pages::zeroed`] (replacing any
    /// spare not yet taken): for a temporary freed just before a buffer of about its size is
    /// made, as the graph's bucketed sends before the replay's call times. `cleared`: the
    /// caller has set every value back to zero (where it last read it, in cache: a write), so
    /// that the next buffer need not clear them.
    pub(crate) fn recycle(self, cleared: bool) {
        let zero = if cleared {
            self.len * size_of::<T>()
        } else {
            0
        };
        debug_assert!(self.map[..zero].iter().all(|&b| b == 0));
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again: its map is moved out once.
        let map = unsafe { std::ptr::read(&this.map) };
        let old = SPARE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replace(Spare { map, zero });
        drop(old);
    }

    /// Twice as many values, the new ones zeroed: the old pages copied, then unmapped.
    pub(crate) fn doubled(&self) -> Result<Pages<T>, Shortfall>
    where
        T: Copy,
    {
        let mut more = Pages::zeroed(2 * self.len.max(1))?;
        more[..self.len].copy_from_slice(self);
        Ok(more)
    }
}

/// Buffers from this size on hand their pages back in parallel before they are unmapped: else
/// one thread unmaps them at the end of the replay while the others idle, a cost already at a
/// few MB (see the `diss` and `gauss` cases of tests/bench/run.sh).
const PARALLEL_RELEASE_BYTES: usize = 4 << 20;
/// The pieces a parallel release hands back at a time.
const RELEASE_PIECE_BYTES: usize = 1 << 20;

impl<T: Zeroable> Drop for Pages<T> {
    fn drop(&mut self) {
        let (at, len) = (self.map.as_mut_ptr() as usize, self.map.len());
        if len < PARALLEL_RELEASE_BYTES || rayon::current_num_threads() < 2 {
            return;
        }
        (0..len.div_ceil(RELEASE_PIECE_BYTES))
            .into_par_iter()
            .for_each(|k| {
                let from = k * RELEASE_PIECE_BYTES;
                // SAFETY: the pieces are whole pages of the mapping (it starts on a page, and
                // pieces are whole pages but the last, which ends where the mapping does), no
                // longer referred to: the buffer is being dropped, and its map is unmapped
                // right after (when the field is dropped), so nothing reads what the advice
                // drops (it would read back as zeroes).
                unsafe {
                    libc::madvise(
                        (at + from) as *mut libc::c_void,
                        RELEASE_PIECE_BYTES.min(len - from),
                        libc::MADV_DONTNEED,
                    );
                }
            });
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

/// Maps the whole pages inside `s` present and writable at once (`MADV_POPULATE_WRITE`, Linux
/// 5.14), not one fault a page as they are first written. False where the kernel has no such
/// advice (then nothing is done).
pub(crate) fn populate_writes<T>(s: &mut [T]) -> bool {
    const PAGE: usize = 4096;
    let (at, len) = (s.as_mut_ptr() as usize, size_of_val(s));
    let (first, end) = (at.next_multiple_of(PAGE), (at + len) / PAGE * PAGE);
    // SAFETY: the advice only maps pages of `s`'s own memory (whole pages inside it), leaving
    // their contents as they are.
    end <= first
        || unsafe {
            libc::madvise(
                first as *mut libc::c_void,
                end - first,
                libc::MADV_POPULATE_WRITE,
            ) == 0
        }
}

/// [`populate_writes`] in parallel, 2 MiB at a time, or in four pieces a thread where that is
/// less (the whole pages inside each piece: where `s` does not start on a page, the page at
/// each seam is left to fault when written). False where the kernel has no such advice. Four
/// pieces a thread, so that a buffer of a few MB is still shared evenly (see the `gauss` case
/// of tests/bench/run.sh).
pub(crate) fn populate_writes_in_parallel<T: Send>(s: &mut [T]) -> bool {
    const PIECE: usize = 2 << 20;
    const PAGE: usize = 4096;
    let shares = 4 * rayon::current_num_threads();
    let piece = PIECE.min(size_of_val(s).div_ceil(shares).next_multiple_of(PAGE));
    s.par_chunks_mut((piece / size_of::<T>().max(1)).max(1))
        .all(populate_writes)
}

/// `n` atomics at 0, in pages of their own ([`Pages`]: unmapped when dropped, where the
/// allocator would keep a freed block resident), made present and writable in parallel
/// ([`populate_for_writes`]). They take the pages a temporary left ([`Pages::recycle`]) as far
/// as those go: those are present and written already, and made present again they would cost
/// the kernel a walk of their pages.
pub(crate) fn zeroed_atomics(n: usize) -> Result<Pages<AtomicU64>, Shortfall> {
    let mut calls = Pages::zeroed(n)?;
    let written = calls.written();
    populate_for_writes(&mut calls[written..]);
    Ok(calls)
}

/// Makes the pages of `a` present and writable before they are read. A page of fresh zeroed
/// memory that a thread reads first is mapped to the shared zero page; the first write then
/// copies it and flushes the page from every core's TLB, an interrupt to each other core the
/// process runs on (the `ring` and `gauss` cases of tests/bench/run.sh, where ranks look at
/// partners' times before they are written). `MADV_POPULATE_WRITE` maps the pages writable in
/// pieces, in parallel ([`populate_writes_in_parallel`]; `a` starts on a page, a [`Pages`]'s
/// first or the first past what of it was written, so every piece does); where the kernel has
/// no such advice, a write to each page does it.
fn populate_for_writes(a: &mut [AtomicU64]) {
    const PAGE: usize = 4096;
    if !populate_writes_in_parallel(a) {
        let per_page = PAGE / size_of::<AtomicU64>();
        a.par_chunks(per_page)
            .for_each(|c| c[0].store(0, Ordering::Relaxed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubling_keeps_the_values_and_zeroes_the_rest() {
        let mut p = Pages::<(u32, usize)>::zeroed(2).unwrap();
        p.copy_from_slice(&[(7, 8), (9, 10)]);
        let q = p.doubled().unwrap();
        assert_eq!(&q[..], &[(7, 8), (9, 10), (0, 0), (0, 0)]);
        assert_eq!(
            Pages::<(u32, usize)>::zeroed(0)
                .unwrap()
                .doubled()
                .unwrap()
                .len(),
            2
        );
    }

    /// Recycled pages come back zeroed, cut or grown to the new length, also those of a buffer
    /// cut mid-page and then grown (whichever buffer takes them: another test may make one in
    /// between), those of a buffer set back to zero by its user (whose last page, cut from a
    /// larger buffer's, still holds that one's values past its length), and those of one large
    /// enough to be handed back in parallel when dropped (the last, dropped on two threads).
    #[test]
    fn recycled_pages_come_back_zeroed_at_any_length() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build();
        pool.expect("a pool").install(|| {
            let mut p = Pages::<(u32, usize)>::zeroed(5000).unwrap();
            let lengths = [3000, 100_000, 1, 700_000, 20, 3_000_000, 2_000_000, 5, 9000];
            for (k, len) in lengths.into_iter().enumerate() {
                let cleared = k % 3 == 2;
                p.fill(if cleared { (0, 0) } else { (7, 9) });
                let pages = (p.len() * 16).next_multiple_of(4096) / 16;
                p.recycle(cleared);
                p = Pages::<(u32, usize)>::zeroed(len).unwrap();
                assert_eq!(p.len(), len);
                assert!(p.iter().all(|&v| v == (0, 0)), "{len}");
                // Written: what of the spare it took, if no other buffer took the spare first.
                assert!(
                    [0, len.min(pages)].contains(&p.written()),
                    "{len}: {}",
                    p.written()
                );
            }
            p.fill((7, 9));
        });
    }
}
