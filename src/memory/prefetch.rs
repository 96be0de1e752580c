//! Cache hints: ask for a line before it is read, where the target has an instruction for it.

/// A hint to bring `x`'s cache line in (nothing where the target has no such instruction).
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    prefetch_ptr((x as *const T).cast());
}

/// [`prefetch`] by address: any address will do, nothing is read.
#[inline(always)]
pub fn prefetch_ptr(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it reads nothing and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast(), std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`prefetch_ptr`] for every cache line of `x`.
#[inline(always)]
pub fn prefetch_all<T>(x: &T) {
    let at: *const u8 = (x as *const T).cast();
    for off in (0..size_of::<T>()).step_by(64) {
        prefetch_ptr(at.wrapping_add(off));
    }
}
