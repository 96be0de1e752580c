#!/usr/bin/env bash
# Seeds the fuzz corpora with every fixture, in both encodings.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p tests/fuzz/corpus/binary tests/fuzz/corpus/text
cargo build --release --quiet
for f in fixtures/*.txt fixtures/*/*.txt; do
  n=$(echo "$f" | tr / _)
  cp "$f" "tests/fuzz/corpus/text/$n"
  target/release/loggps-predict convert --force "$f" "tests/fuzz/corpus/binary/${n%.txt}.bin"
done
