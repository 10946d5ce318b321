#!/usr/bin/env bash
# Retrieval quality on every memory development set of ../shared/datasets (LoCoMo's three
# conversations, RealMem, FriendsQA, QMSum): one memory per turn through the HTTP API, every
# question asked with the shipped ranking and with BM25 alone; hit@5/10/20 per set and per category
# (also in target/memory-sets-report.md). A set that is absent is skipped, saying so.
#   bash bench/memory-sets.sh [set ...]     default: all four (QMSum's 129,177 turns take longest)
#   RANKING=answerType=0,subject=0.3 bash bench/memory-sets.sh ...   the same with other ranking
#                                           weights (io.engram.memory.RankingWeights, BM25's
#                                           bm25K1 and bm25B among them), to measure each with
#                                           one data set left out
#   DUMP=target/sets.jsonl bash bench/memory-sets.sh ...  also writes each question's first 30
#                                           memories (score, similarity, tokens, evidence) and asks
#                                           each conversation 60 questions of another one: what the
#                                           chat block's cut is chosen on (bench/context-cut.py)
#   RECORD_USE=true SHUFFLE=7 bash bench/memory-sets.sh ...  every retrieval recorded as a use, as a
#                                           client's would be, questions in an order of that seed
#   POOL=target/pool.jsonl bash bench/memory-sets.sh ...  also writes each question's 100 best
#                                           memories with every input of their score, and each
#                                           conversation's turns in time: what
#                                           bench/ranking-fit.py chooses the ranking's constants on
#   STAMPED=false bash bench/memory-sets.sh ...  turns without a time of day keep the set's time
#                                           (default: stamped a second apart in their order)
#   SESSION_TIMES=true ...                  LoCoMo's turns at their session's time, not a second apart
#   TWICE=true ...                          every turn written twice (an encode of what a memory
#                                           already says reinforces it): memories held, recall
#   INDEX=solr bash bench/memory-sets.sh ...  the same on the Solr index (a two-node SolrCloud the
#                                           bench starts: emulators/solr, built by ./engram test)
#   CLOCK=2026-11-27T00:00:00Z ...          questions asked at that time (default: a day after the
#                                           conversation's last turn)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/test-classpath.sh"
bench_java -Xmx4g -Dengram.ranking="${RANKING:-}" -Dsets.dump="${DUMP:-}" -Dsets.pool="${POOL:-}" \
  -Dsets.stamped="${STAMPED:-true}" -Dsets.sessionTimes="${SESSION_TIMES:-false}" \
  -Dsets.clock="${CLOCK:-}" -Dsets.index="${INDEX:-lucene}" -Dsets.writers="${WRITERS:-4}" \
  -Dsets.twice="${TWICE:-false}" -Dsets.recordUse="${RECORD_USE:-false}" -Dsets.shuffle="${SHUFFLE:-0}" io.engram.memory.DevelopmentSetsBench "$@" 2>&1 \
  | grep -v -E '^WARNING|WARN |INFO '
