package io.engram.memory.solr;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.lucene.util.StringHelper;

/**
 * The collection's shards as one look at the cluster's state saw them: each shard's hash range and
 * the cores of its replicas that can answer (active, on a live node). What a search needs to ask
 * the organization's shard itself, rather than any node that then forwards the request to it.
 *
 * <p>The compositeId router hashes a document id {@code <org>!<memory>} to the high 16 bits of
 * MurmurHash3 (x86, 32 bits, seed 0) of the organization's UTF-8 bytes and the low 16 of the
 * memory's; so an organization's documents all fall in the 65,536 hashes that share those high
 * bits, which Solr's own even split of the hash ring never cuts for up to 65,536 shards.
 */
record SolrShards(String collection, List<Shard> shards, String unservedBecause) {
  /** A shard: its hash range (inclusive, as Solr compares them: signed) and its serving cores. */
  record Shard(String name, int low, int high, List<URI> cores) {
    boolean holds(int from, int to) {
      return low <= to && from <= high;
    }
  }

  /** The shards of {@code collection} in a CLUSTERSTATUS answer. */
  static SolrShards of(String collection, JsonNode status) {
    Set<String> live = new HashSet<>();
    status.path("cluster").path("live_nodes").forEach(node -> live.add(node.asText()));
    List<Shard> shards = new ArrayList<>();
    List<String> unserved = new ArrayList<>();
    status
        .path("cluster")
        .path("collections")
        .path(collection)
        .path("shards")
        .properties()
        .forEach(entry -> {
          // A shard being split hands its range to sub-shards under construction: only active
          // shards hold what a search must see.
          if (!"active".equals(entry.getValue().path("state").asText("active"))) {
            return;
          }
          List<URI> cores = new ArrayList<>();
          for (JsonNode replica : entry.getValue().path("replicas")) {
            if ("active".equals(replica.path("state").asText())
                && live.contains(replica.path("node_name").asText())) {
              String base = replica.path("base_url").asText();
              cores.add(URI.create((base.endsWith("/") ? base : base + "/")
                  + replica.path("core").asText()));
            }
          }
          if (cores.isEmpty()) {
            unserved.add(entry.getKey());
          }
          String[] range = entry.getValue().path("range").asText("").split("-");
          if (range.length == 2) {
            shards.add(new Shard(
                entry.getKey(),
                Integer.parseUnsignedInt(range[0], 16),
                Integer.parseUnsignedInt(range[1], 16),
                List.copyOf(cores)));
          }
        });
    return new SolrShards(
        collection,
        List.copyOf(shards),
        unserved.isEmpty()
            ? null
            : "Solr shards " + unserved + " of " + collection + " have no active replica");
  }

  /**
   * The shard that holds every document of the organization, or null when no single active shard
   * does (its range cut by a split in progress).
   */
  Shard shardOf(String orgId) {
    byte[] key = orgId.getBytes(StandardCharsets.UTF_8);
    int from = StringHelper.murmurhash3_x86_32(key, 0, key.length, 0) & 0xFFFF0000;
    int to = from | 0x0000FFFF;
    Shard only = null;
    for (Shard shard : shards) {
      if (shard.holds(from, to)) {
        if (only != null) {
          return null;
        }
        only = shard;
      }
    }
    return only;
  }

  /** The cores that can answer for the organization alone; empty when none is known. */
  List<URI> coresOf(String orgId) {
    Shard shard = shardOf(orgId);
    return shard == null ? List.of() : shard.cores();
  }
}
