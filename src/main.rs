//! `loggps-predict`: parse the flags, run the pipeline, print. Every error exits with status 2.

mod cli;

use clap::Parser;

fn main() {
    // Transparent huge pages make every first touch clear 2 MiB; on the 262,144-rank
    // dissemination trace end to end took 3.7-4.9 s with them and 2.5-2.9 s without (three
    // alternating runs each, 2 threads). The columns are written once, in order: small pages
    // lose nothing.
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE only sets a flag on this process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    let cli = cli::Cli::parse();
    if let Err(e) = cli::run(cli) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

/// mimalloc keeps freed memory for reuse instead of handing large blocks back to the kernel and
/// faulting them in again (a third of the time on a 262,144-rank trace went to page clearing).
/// Counted, for `bench`'s allocations per phase.
#[global_allocator]
static GLOBAL: loggps_predict::memory::Counting<mimalloc::MiMalloc> =
    loggps_predict::memory::Counting(mimalloc::MiMalloc);
