# Sourced by the benchmarks that run a main class of src/test/java: compiles the test classes,
# writes their class path once (target/bench.classpath), and gives
#   bench_java <JVM options...> <main class> <arguments...>
# which runs the class with the engine's JVM flags on that class path.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
mvn -B -q -Dstyle.color=never -DskipTests -Dspotless.check.skip=true -Dcheckstyle.skip=true test-compile
mvn -B -q -Dstyle.color=never dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath

bench_java() {
  "$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
    -cp "target/test-classes:target/classes:$(cat target/bench.classpath)" "$@"
}
