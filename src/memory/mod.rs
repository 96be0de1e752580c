//! The machine's memory, fenced: every `unsafe` of the pipeline's memory handling is here, behind
//! safe functions.
//! - Whether the memory a phase is about to take is there ([`ensure`]): a trace too large for
//!   the machine is a [`Shortfall`] naming what it needs and what is available, before the
//!   allocation, not a process killed for memory minutes into the run.
//! - What the phases before freed, handed back to the system before a phase takes more
//!   ([`release_freed`]); large temporaries in pages of their own (`Pages`); zeroed memory
//!   ([`zeroed_slice`]); pages made present at once (`populate_writes`); a file mapped
//!   read-only ([`MappedFile`]); a parallel counting sort's scatter ([`scatter`]); a large
//!   text's UTF-8 checked in parallel ([`utf8_in_parallel`]); a text's bytes classed sixteen
//!   at a time (`classes16`).
//! - Cache hints ([`prefetch`]).
//! - How many heap allocations a phase made ([`Counting`], [`allocations`]): the figure that
//!   shows none is made per event.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::{Cell, RefCell};
use std::thread::LocalKey;

#[cfg(target_arch = "x86_64")]
mod bytes;
mod pages;
mod prefetch;
mod scatter;

#[cfg(target_arch = "x86_64")]
pub use bytes::classes16;
pub(crate) use pages::zeroable;
pub(crate) use pages::{Pages, populate_writes, populate_writes_in_parallel, zeroed_atomics};
pub use pages::{Zeroable, zeroed_slice};
pub use prefetch::{prefetch, prefetch_all, prefetch_ptr};
pub use scatter::{Scatter, scatter};

/// Not enough memory for what a phase is about to take (or the system refused a mapping):
/// what it needed, where, and what was there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shortfall {
    /// The trace or input it was for, where there is one.
    pub file: Option<String>,
    pub message: String,
}

impl Shortfall {
    /// The system refused `bytes` of fresh memory.
    fn mapping(bytes: usize, e: std::io::Error) -> Shortfall {
        Shortfall {
            file: None,
            message: format!("cannot map {bytes} bytes of memory: {e}"),
        }
    }

    /// The same shortfall, said of `file`.
    pub fn in_file(self, file: &str) -> Shortfall {
        Shortfall {
            file: Some(file.to_string()),
            ..self
        }
    }
}

impl std::fmt::Display for Shortfall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{file}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for Shortfall {}

/// A file mapped read-only into memory, whose pages can be handed back once read.
pub struct MappedFile(memmap2::Mmap);

impl MappedFile {
    /// Maps `file` whole.
    pub fn open(file: &std::fs::File) -> std::io::Result<MappedFile> {
        // SAFETY: the map is read-only and private to this process; a trace file changing
        // underneath a run is outside what we promise.
        unsafe { memmap2::Mmap::map(file) }.map(MappedFile)
    }

    /// Hands the pages of `offset..offset + len` back: read again, they come back from the
    /// file. A failure only leaves them in memory.
    pub fn release(&self, offset: usize, len: usize) {
        // SAFETY: the map is read-only, so a page dropped from it reads back the same bytes
        // from the file when touched again.
        let _ = unsafe {
            self.0
                .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, offset, len)
        };
    }
}

impl std::ops::Deref for MappedFile {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

/// `data` as text where it is UTF-8, checked in pieces in parallel where it is large (each
/// piece ending after a line break, a byte that no other character holds); None where it is
/// not UTF-8 or small (then `std::str::from_utf8` says where it fails).
pub fn utf8_in_parallel(data: &[u8]) -> Option<&str> {
    use rayon::prelude::*;
    const PIECE: usize = 4 << 20;
    if data.len() <= 2 * PIECE {
        return None;
    }
    let mut cuts = vec![0];
    while let Some(&at) = cuts.last().filter(|&&at| at < data.len()) {
        let from = (at + PIECE).min(data.len());
        let next = data[from..].iter().position(|&b| b == b'\n');
        cuts.push(next.map_or(data.len(), |k| from + k + 1));
    }
    let pieces: Vec<&[u8]> = cuts.windows(2).map(|w| &data[w[0]..w[1]]).collect();
    let valid = pieces.par_iter().all(|p| std::str::from_utf8(p).is_ok());
    // SAFETY: every piece is UTF-8 and ends where a character ends (after a line break, or
    // at the end), so the pieces together are.
    valid.then(|| unsafe { std::str::from_utf8_unchecked(data) })
}

/// Turns transparent huge pages off for this process: with them every first touch clears
/// 2 MiB, where the columns are written once, in order, and small pages lose nothing (the
/// `diss` case of tests/bench/run.sh shows the difference).
pub fn disable_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE only sets a flag on this process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// Ends the process with status `code` at once, its output flushed: the memory it holds goes
/// back with it, not block by block (freeing a large trace's columns, then the allocator's
/// purge at exit, take tens of milliseconds that reading it took hundreds).
pub fn exit_now(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` ends the process; nothing of it runs after.
    unsafe { libc::_exit(code) }
}

/// Overrides the memory found available (bytes): to try a smaller machine's limit.
pub const AVAILABLE_VAR: &str = "LOGGPS_MEMORY_AVAILABLE";

/// The memory this process may still take, in bytes: `MemAvailable`, or less where a cgroup
/// (v2) limits it; [`AVAILABLE_VAR`] overrides both (an error if it is not a number). None
/// where none of them can be read.
pub fn available() -> Result<Option<u64>, String> {
    if let Some(v) = std::env::var_os(AVAILABLE_VAR) {
        let v = v.to_string_lossy();
        return match v.trim().parse() {
            Ok(n) => Ok(Some(n)),
            Err(_) => Err(format!("{AVAILABLE_VAR} is {v:?}, not a number of bytes")),
        };
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let system = meminfo.as_deref().and_then(mem_available);
    let read = |f: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{f}")).ok();
    let group = cgroup_left(
        read("memory.max").as_deref(),
        read("memory.current").as_deref(),
    );
    Ok(match (system, group) {
        (Some(s), Some(g)) => Some(s.min(g)),
        (s, g) => s.or(g),
    })
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// What a cgroup v2 limit leaves, from its `memory.max` and `memory.current` (None: no limit).
fn cgroup_left(max: Option<&str>, current: Option<&str>) -> Option<u64> {
    let max: u64 = max?.trim().parse().ok()?; // "max": no limit
    let current: u64 = current?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// Has the allocator of every thread of the pool, and of this one, give back the pages it
/// keeps freed (mimalloc returns them after a delay, and only when its heap is used again):
/// before a phase allocates its arrays on top of what the phases before freed.
pub fn release_freed() {
    rayon::broadcast(|_| release_freed_here());
    release_freed_here();
}

/// [`release_freed`] for this thread's allocator alone: after a large structure this thread
/// built and dropped, while the pool's other threads work on.
pub fn release_freed_here() {
    // SAFETY: mi_collect gives back only memory that no allocation holds.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// A global allocator that counts, per thread, the allocations and reallocations `A` makes:
/// the binary's, so that `loggps-predict bench` tells the heap allocations of each phase (one
/// add to a thread-local counter each; frees are not counted).
pub struct Counting<A>(pub A);

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

#[inline(always)]
fn count() {
    // A constant-initialized cell needs no registration: safe inside the allocator. After the
    // thread's locals are gone (its exit), an allocation goes uncounted.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call goes to `A` as it came; counting allocates nothing.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's promises, passed on.
        unsafe { self.0.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { self.0.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { self.0.realloc(ptr, layout, new_size) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { self.0.dealloc(ptr, layout) }
    }
}

/// The heap allocations (and reallocations) this thread and every thread of the pool have made
/// so far, where the global allocator is a [`Counting`] (0 otherwise).
pub fn allocations() -> u64 {
    rayon::broadcast(|_| ALLOCATIONS.get()).iter().sum::<u64>() + ALLOCATIONS.get()
}

/// Calls `f` with the thread's `kept` (buffers kept from call to call, so that a loop run again
/// and again allocates nothing), or with a new one where the thread is already in such a call
/// (rayon may run another piece of the same work on a thread that waits in one).
pub fn with_kept<T: Default, R>(
    kept: &'static LocalKey<RefCell<T>>,
    f: impl FnOnce(&mut T) -> R,
) -> R {
    kept.with(|k| match k.try_borrow_mut() {
        Ok(mut k) => f(&mut k),
        Err(_) => f(&mut T::default()),
    })
}

/// Ok when `need` bytes for `what` fit in what is available (or it cannot be told), else why
/// not.
pub fn ensure(what: &str, need: u64) -> Result<(), Shortfall> {
    let shortfall = |message| Shortfall {
        file: None,
        message,
    };
    verdict(what, need, available().map_err(shortfall)?).map_err(shortfall)
}

fn verdict(what: &str, need: u64, available: Option<u64>) -> Result<(), String> {
    match available {
        Some(a) if need > a => Err(format!(
            "{what} needs about {} of memory and {} is available; run it on a machine with more \
             memory",
            size(need),
            size(a)
        )),
        _ => Ok(()),
    }
}

/// `n` bytes for a person: kB below a MB, MB below a GB (rounded up), else GB with one
/// decimal.
fn size(n: u64) -> String {
    match n {
        n if n < 1 << 20 => format!("{} kB", n.div_ceil(1 << 10)),
        n if n < 1 << 30 => format!("{} MB", n.div_ceil(1 << 20)),
        n => format!("{:.1} GB", n as f64 / (1u64 << 30) as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_memory_is_read_and_compared() {
        let meminfo = "MemTotal:       24684180 kB\nMemFree:        20145000 kB\n\
                       MemAvailable:   24177964 kB\nBuffers:          123 kB\n";
        assert_eq!(mem_available(meminfo), Some(24_177_964 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(
            cgroup_left(Some("8589934592\n"), Some("1073741824\n")),
            Some(7 << 30)
        );
        assert_eq!(cgroup_left(Some("max\n"), Some("1073741824\n")), None);
        assert_eq!(cgroup_left(None, None), None);
        assert_eq!(verdict("x", 10 << 30, Some(11 << 30)), Ok(()));
        assert_eq!(verdict("x", 10 << 30, None), Ok(()));
        assert_eq!(
            verdict("loading 1000 events", 19 << 30, Some(3 << 29)).unwrap_err(),
            "loading 1000 events needs about 19.0 GB of memory and 1.5 GB is available; run it \
             on a machine with more memory"
        );
        assert_eq!(size(1), "1 kB");
        assert_eq!(size(1 << 20), "1 MB");
        assert_eq!(size((1 << 30) - 1), "1024 MB");
    }
}
