#!/bin/bash
# Retrieval quality on LoCoMo (../shared/datasets/locomo-dev): one memory per turn through the HTTP
# API, every question of categories 1-4 asked in four rankings; prints recall@5/10/20 overall, per
# category and per conversation of the shipped ranking (also in target/locomo-report.md). Skips,
# saying why, where the data set is absent (-Dengram.locomo=<file> points elsewhere).
#   bash bench/locomo.sh            the report
#   bash bench/locomo.sh misses     also target/locomo-misses.txt: each question the shipped
#                                   ranking misses at 10, its evidence's rank and the top 3
set -euo pipefail
cd "$(dirname "$0")/.."
extra=()
if [ "${1:-}" = misses ]; then
  rm -f target/locomo-misses.txt
  extra=(-Dlocomo.misses="$PWD/target/locomo-misses.txt")
fi
./engram test -Dtest=LocomoRetrievalTest -Dsurefire.failIfNoSpecifiedTests=false "${extra[@]}" \
  | grep -E '^(LoCoMo|\||Shipped|.*Skipped.*|.*LoCoMo data set)' || true
