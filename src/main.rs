//! `loggps-predict`: parse the flags, run the pipeline, print. Every error exits with status 2.

mod cli;

use clap::Parser;
use loggps_predict::memory::{Counting, HugePages};

fn main() {
    // Huge pages for the large arrays only (memory::HugePages): on the allocator's small
    // blocks, each first touch would clear 2 MiB.
    loggps_predict::memory::huge_pages_where_advised();
    let cli = cli::Cli::parse();
    if let Err(e) = cli::run(cli) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

/// mimalloc for the small blocks: it keeps freed memory for reuse instead of handing it back to
/// the kernel and faulting it in again; the large ones in mappings of their own on huge pages
/// ([`HugePages`]). Counted, for `bench`'s allocations per phase.
#[global_allocator]
static GLOBAL: Counting<HugePages<mimalloc::MiMalloc>> = Counting(HugePages(mimalloc::MiMalloc));
