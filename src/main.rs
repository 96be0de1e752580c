//! `loggps-predict`: parse the flags, run the pipeline, print. Every error exits with status 2.

mod cli;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    if let Err(e) = cli::run(cli) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
