//! `loggps-predict`: parse the flags, run the pipeline, print. Every error exits with status 2.

#![deny(unsafe_code)]

mod cli;

use clap::Parser;

fn main() {
    loggps_predict::memory::disable_transparent_huge_pages();
    let cli = cli::Cli::parse();
    // MPI, where it was started, is finalized before the process exits.
    loggps_predict::memory::exit_now(cli::main(cli))
}

/// mimalloc keeps freed memory for reuse instead of handing large blocks back to the kernel and
/// faulting them in again, page clearing and all (see the `diss` case of tests/bench/run.sh).
/// Counted, for `bench`'s allocations per phase.
#[global_allocator]
static GLOBAL: loggps_predict::memory::Counting<mimalloc::MiMalloc> =
    loggps_predict::memory::Counting(mimalloc::MiMalloc);
