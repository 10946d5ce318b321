#!/usr/bin/env bash
# How a chat's answer is judged to have used a memory (io.engram.memory.AnswerUse), measured on the
# development sets' reference answers with one set left out: precision and recall of "used" over
# each question's first ten memories, an evidence turn counting as used. FILE is a dump of
#   DUMP=FILE bash bench/memory-sets.sh
#   bash bench/answer-use.sh FILE
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/test-classpath.sh"
bench_java io.engram.memory.AnswerUseBench "$@" 2>&1 | grep -v -E '^WARNING|WARN |INFO '
