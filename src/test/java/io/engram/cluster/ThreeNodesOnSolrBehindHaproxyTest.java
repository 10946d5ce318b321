package io.engram.cluster;

import io.engram.support.BesideTheRest;
import io.engram.support.SolrCluster;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;

/**
 * The three-node test again, with the memory index on a two-node SolrCloud instead of each node's
 * own Lucene copy (ENGRAM_MEMORY_INDEX=solr): the same limits, revocations, memory found across
 * nodes, reflection, Redis outage and a node killed, with every write indexed once, by the node
 * that made it.
 */
@BesideTheRest
class ThreeNodesOnSolrBehindHaproxyTest extends ThreeNodesBehindHaproxyTest {
  private SolrCluster solr;

  @Override
  Map<String, String> nodeEnvironment() {
    solr = SolrCluster.start(2);
    return Map.of(
        "ENGRAM_MEMORY_INDEX", "solr",
        "ENGRAM_SOLR_URL", solr.urls(),
        "ENGRAM_SOLR_COLLECTION", "three-nodes");
  }

  /** The Engram nodes first (their last index writes go to Solr), then Solr. */
  @AfterAll
  @Override
  void stop() {
    super.stop();
    if (solr != null) {
      solr.close();
    }
  }
}
