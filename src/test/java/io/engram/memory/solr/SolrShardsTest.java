package io.engram.memory.solr;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.apache.lucene.util.StringHelper;
import org.junit.jupiter.api.Test;

/**
 * Where a search of an organization goes, from the cluster's state: the shard whose range holds the
 * organization's hashes, only its cores that can answer, and nowhere (the alias) when that is not
 * one shard. That the hash is Solr's own is checked against a real cluster in SolrMemoryIndexTest.
 */
class SolrShardsTest {
  private static JsonNode status(String shards) {
    return Json.read(
        "{\"cluster\":{\"live_nodes\":[\"a:8983_solr\",\"b:8983_solr\"],\"collections\":{\"m_1\":"
            + "{\"shards\":{" + shards + "}}}}}",
        JsonNode.class);
  }

  private static String shard(String name, String range, String state, String replicas) {
    return "\"" + name + "\":{\"range\":\"" + range + "\",\"state\":\"" + state
        + "\",\"replicas\":{" + replicas + "}}";
  }

  private static String replica(String core, String node, String state) {
    return "\"" + core + "\":{\"core\":\"" + core + "\",\"base_url\":\"http://"
        + node.replace("_solr", "/solr")
        + "\",\"node_name\":\"" + node + "\",\"state\":\"" + state + "\"}";
  }

  /** Two shards of the ring's halves, each with these replicas. */
  private static SolrShards halves(String upperReplicas, String lowerReplicas) {
    return SolrShards.of(
        "m_1",
        status(shard("shard1", "80000000-ffffffff", "active", upperReplicas) + ","
            + shard("shard2", "0-7fffffff", "active", lowerReplicas)));
  }

  /** An organization id whose hash has the high bit set (false) or not (true). */
  private static String orgInLowerHalf(boolean lower) {
    for (int i = 0; ; i++) {
      byte[] key = ("org_" + i).getBytes(StandardCharsets.UTF_8);
      if (StringHelper.murmurhash3_x86_32(key, 0, key.length, 0) >= 0 == lower) {
        return "org_" + i;
      }
    }
  }

  @Test
  void anOrganizationGoesToTheActiveCoresOfTheShardThatHoldsItsHashes() {
    SolrShards shards = halves(
        replica("m_1_shard1_replica_n1", "a:8983_solr", "active") + ","
            + replica("m_1_shard1_replica_n2", "b:8983_solr", "recovering"),
        replica("m_1_shard2_replica_n3", "a:8983_solr", "active") + ","
            + replica("m_1_shard2_replica_n4", "c:8983_solr", "active"));
    assertThat(shards.unservedBecause()).isNull();
    // Negative hashes are the upper half of the ring as Solr writes it (80000000-ffffffff).
    assertThat(shards.shardOf(orgInLowerHalf(false)).name()).isEqualTo("shard1");
    assertThat(shards.coresOf(orgInLowerHalf(false)))
        .containsExactly(URI.create("http://a:8983/solr/m_1_shard1_replica_n1"));
    // A replica on a node that is not live is not asked.
    assertThat(shards.coresOf(orgInLowerHalf(true)))
        .containsExactly(URI.create("http://a:8983/solr/m_1_shard2_replica_n3"));
  }

  @Test
  void aShardWithoutAnActiveReplicaIsUnservedAndItsOrganizationsTakeTheAlias() {
    SolrShards shards = halves(
        replica("m_1_shard1_replica_n1", "a:8983_solr", "down"),
        replica("m_1_shard2_replica_n3", "b:8983_solr", "active"));
    assertThat(shards.unservedBecause()).contains("shard1").contains("m_1");
    assertThat(shards.coresOf(orgInLowerHalf(false))).isEmpty();
    assertThat(shards.coresOf(orgInLowerHalf(true))).hasSize(1);
  }

  @Test
  void subShardsUnderConstructionAreNotAskedAndARangeCutInTwoTakesTheAlias() {
    String org = orgInLowerHalf(true);
    byte[] key = org.getBytes(StandardCharsets.UTF_8);
    int high = StringHelper.murmurhash3_x86_32(key, 0, key.length, 0) & 0xFFFF0000;
    String active = replica("m_1_shard2_replica_n3", "a:8983_solr", "active");
    // The parent still serves while its sub-shards are built.
    SolrShards splitting = SolrShards.of(
        "m_1",
        status(shard("shard2", "0-7fffffff", "active", active) + ","
            + shard("shard2_0", "0-3fffffff", "construction", active) + ","
            + shard("shard2_1", "40000000-7fffffff", "construction", active)));
    assertThat(splitting.shardOf(org).name()).isEqualTo("shard2");
    // Two active shards whose ranges cut the organization's 65,536 hashes: no single core holds it.
    String cut = Integer.toHexString(high + 0x8000);
    SolrShards uneven = SolrShards.of(
        "m_1",
        status(shard("shard1", "0-" + Integer.toHexString(high + 0x7fff), "active", active) + ","
            + shard("shard2", cut + "-7fffffff", "active", active)));
    assertThat(uneven.shardOf(org)).isNull();
    assertThat(uneven.coresOf(org)).isEmpty();
  }
}
