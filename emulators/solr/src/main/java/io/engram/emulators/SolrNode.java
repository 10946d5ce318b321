package io.engram.emulators;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.solr.cloud.ZkTestServer;
import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;

/**
 * One process of a local SolrCloud cluster: {@code zk <dir> <port>} runs its ZooKeeper, {@code
 * node <home> <port> <zkHost>} one Solr node (Solr's own embedded Jetty runner, as Solr's tests
 * run it). Prints "ready ..." once it serves; runs until killed, which is how a test takes a node
 * away (kill -9 included: the node's data stays in its home for a restart).
 */
public final class SolrNode {
  private SolrNode() {}

  public static void main(String[] args) throws Exception {
    if (args.length >= 3 && args[0].equals("zk")) {
      ZkTestServer zk = new ZkTestServer(Path.of(args[1]), Integer.parseInt(args[2]));
      zk.run(false);
      zk.ensurePathExists("/solr");
      System.out.println("ready " + zk.getZkAddress());
    } else if (args.length >= 4 && args[0].equals("node")) {
      Path home = Path.of(args[1]);
      int port = Integer.parseInt(args[2]);
      Files.createDirectories(home);
      Files.writeString(home.resolve("solr.xml"), """
          <solr>
            <solrcloud>
              <str name="host">127.0.0.1</str>
              <int name="hostPort">%d</int>
              <str name="hostContext">solr</str>
              <int name="zkClientTimeout">15000</int>
              <bool name="genericCoreNodeNames">true</bool>
            </solrcloud>
          </solr>
          """.formatted(port));
      System.setProperty("zkHost", args[3]);
      JettySolrRunner node = new JettySolrRunner(
          home.toString(),
          new Properties(),
          JettyConfig.builder().setPort(port).setContext("/solr").stopAtShutdown(true).build());
      node.start();
      System.out.println("ready " + node.getLocalPort());
    } else {
      System.err.println("usage: SolrNode zk <dir> <port> | node <home> <port> <zkHost>");
      System.exit(2);
    }
    System.out.flush();
    Thread.currentThread().join();
  }
}
