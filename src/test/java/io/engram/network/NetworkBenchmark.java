package io.engram.network;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.platform.net.AddressBook;
import io.engram.platform.net.ClientAddress;
import io.engram.settings.Cidr;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the network boundary costs a chat request (issue 24), in its worst cases: the client's
 * address read through a trusted proxy's X-Forwarded-For and judged against an allowlist of 100
 * ranges that does not hold it (every range looked at), and an outbound call admitted by a
 * firewall of 50 rules where only the last one matches, for a host name (resolved from the
 * address book) and for an address. Run by {@code bench/jmh.sh NetworkBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1)
public class NetworkBenchmark {
  private final List<String> forwarded = List.of("198.51.100.77, 203.0.113.9");
  private List<Cidr> allowlist;
  private ClientAddress clientAddress;
  private OutboundFirewall firewall;

  @Setup
  public void setUp() throws Exception {
    allowlist = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      allowlist.add(Cidr.parse("192.0." + i + ".0/24"));
    }
    clientAddress = ClientAddress.parse("10.0.0.0/8");
    StringBuilder rules = new StringBuilder("[");
    for (int i = 0; i < 49; i++) {
      rules
          .append("{\"destination\":\"")
          .append(i % 2 == 0 ? "198.18." + i + ".0/24" : "h" + i + ".partner.example")
          .append("\",\"port\":443,\"protocol\":\"tcp\",\"action\":\"deny\"},");
    }
    rules.append(
        "{\"destination\":\"0.0.0.0/0\",\"port\":\"*\",\"protocol\":\"*\",\"action\":\"allow\"}]");
    firewall = new OutboundFirewall(new SimpleMeterRegistry());
    firewall.put("org", FirewallRules.parse(Json.read(rules.toString(), JsonNode.class)));
    AddressBook.shared().pin("api.upstream.example", new InetAddress[] {
      InetAddress.getByAddress("api.upstream.example", new byte[] {(byte) 203, 0, 113, 50})
    });
  }

  /** The allowlist check of a request through a trusted proxy: read the chain, scan 100 ranges. */
  @Benchmark
  public boolean allowlist100() {
    byte[] client = clientAddress.of("10.1.2.3", () -> forwarded);
    for (Cidr range : allowlist) {
      if (range.contains(client)) {
        return true;
      }
    }
    return false;
  }

  /** An upstream call by host name, judged by 50 rules (the last one decides) and pinned. */
  @Benchmark
  public void firewall50ByName() {
    firewall.admit("org", "api.upstream.example", 443);
  }

  /** An upstream call to an address literal (no lookup), judged by the same 50 rules. */
  @Benchmark
  public void firewall50ByAddress() {
    firewall.admit("org", "203.0.113.50", 8000);
  }
}
