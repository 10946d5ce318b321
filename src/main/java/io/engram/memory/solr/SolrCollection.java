package io.engram.memory.solr;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Engram's collection in Solr: searched and written through an alias ({@code
 * ENGRAM_SOLR_COLLECTION}), which names one real collection, {@code <alias>_<n>}. A full reindex
 * builds the next collection beside it and moves the alias at the end, so retrieval goes on from
 * the old one meanwhile. Created at start when missing, with the configset in
 * src/main/resources/solr/memory, the compositeId router (an organization on one shard), and the
 * shards and replicas configured.
 */
public final class SolrCollection {
  private static final Logger LOG = LoggerFactory.getLogger(SolrCollection.class);
  /** Bumped whenever schema.xml or solrconfig.xml changes: a new configset name. */
  static final String CONFIG_VERSION = "1";

  private final SolrConnection solr;
  private final String alias;
  private final int shards;
  private final int replicas;

  public SolrCollection(SolrConnection solr, String alias, int shards, int replicas) {
    this.solr = solr;
    this.alias = alias;
    this.shards = shards;
    this.replicas = replicas;
  }

  /** The alias every search and write goes through. */
  public String alias() {
    return alias;
  }

  String configName() {
    return alias + "-config-" + CONFIG_VERSION;
  }

  /**
   * Makes sure the configset, a collection and the alias exist; returns whether the collection was
   * created now (then it is empty and must be filled from the database).
   */
  public synchronized boolean ensure() {
    ensureConfig();
    String current = current();
    if (current != null) {
      return false;
    }
    String first = alias + "_1";
    if (!collections().contains(first)) {
      create(first);
    }
    pointAliasAt(first);
    LOG.info(
        "Solr collection {} created ({} shards, {} replicas), alias {}",
        first,
        shards,
        replicas,
        alias);
    return true;
  }

  private void ensureConfig() {
    JsonNode list = solr.get("admin/configs", Map.of("action", "LIST"));
    for (JsonNode name : list.path("configSets")) {
      if (name.asText().equals(configName())) {
        return;
      }
    }
    solr.postBytes(
        "admin/configs", Map.of("action", "UPLOAD", "name", configName()), configsetZip());
  }

  /** The collection the alias names now, or null when there is no alias. */
  public String current() {
    JsonNode aliases = solr.get("admin/collections", Map.of("action", "LISTALIASES"));
    JsonNode target = aliases.path("aliases").path(alias);
    return target.isMissingNode() || target.asText().isEmpty() ? null : target.asText();
  }

  List<String> collections() {
    List<String> names = new ArrayList<>();
    solr.get("admin/collections", Map.of("action", "LIST"))
        .path("collections")
        .forEach(name -> names.add(name.asText()));
    return names;
  }

  /** Creates a collection with this alias's configset, shards and replicas. */
  void create(String name) {
    Map<String, String> params = new LinkedHashMap<>();
    params.put("action", "CREATE");
    params.put("name", name);
    params.put("collection.configName", configName());
    params.put("numShards", Integer.toString(shards));
    params.put("replicationFactor", Integer.toString(replicas));
    params.put("router.name", "compositeId");
    params.put("waitForFinalState", "true");
    try {
      solr.administer("admin/collections", params);
    } catch (SolrConnection.Refused e) {
      // Another Engram node starting at the same moment created it, or a node that timed out
      // waiting for Solr asked again: the collection is there either way.
      if (!collections().contains(name)) {
        throw e;
      }
    }
  }

  void pointAliasAt(String name) {
    solr.administer(
        "admin/collections", Map.of("action", "CREATEALIAS", "name", alias, "collections", name));
  }

  void delete(String name) {
    try {
      solr.administer("admin/collections", Map.of("action", "DELETE", "name", name));
    } catch (SolrConnection.Refused e) {
      // Asked again after a node answered 5xx mid-way: gone is what was wanted.
      if (collections().contains(name)) {
        throw e;
      }
    }
  }

  /** The next collection's name after {@code current} ({@code <alias>_<n+1>}). */
  String next(String current) {
    int at = current.lastIndexOf('_');
    int n = at < 0 ? 1 : Integer.parseInt(current.substring(at + 1));
    return alias + "_" + (n + 1);
  }

  /**
   * The current collection's shards, each with the replicas that can answer (active, on a live
   * node), or null when the alias names no collection.
   */
  SolrShards shards() {
    String current = current();
    if (current == null) {
      return null;
    }
    return SolrShards.of(
        current,
        solr.get("admin/collections", Map.of("action", "CLUSTERSTATUS", "collection", current)));
  }

  /**
   * Why the collection cannot serve everything, or null when it can: each shard needs an active
   * replica on a live node (a node down with its shards' replicas elsewhere serves on).
   */
  static String unservedBecause(String alias, SolrShards shards) {
    return shards == null
        ? "the Solr alias " + alias + " names no collection"
        : shards.unservedBecause();
  }

  /** The memories the current collection holds (its position document left out). */
  public long documents() {
    JsonNode answer = solr.get(
        alias + "/select", Map.of("q", SolrDocuments.MEMORY_ID + ":[* TO *]", "rows", "0"));
    return answer.path("response").path("numFound").asLong();
  }

  private static byte[] configsetZip() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
      for (String file : List.of("solrconfig.xml", "schema.xml")) {
        zip.putNextEntry(new ZipEntry(file));
        try (InputStream in = SolrCollection.class.getResourceAsStream("/solr/memory/" + file)) {
          if (in == null) {
            throw new IllegalStateException("the Solr configset lacks " + file);
          }
          in.transferTo(zip);
        }
        zip.closeEntry();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }
}
