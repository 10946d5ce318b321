package io.engram.network;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.eclipse.jetty.alpn.server.ALPNServerConnectionFactory;
import org.eclipse.jetty.http2.server.HTTP2ServerConnectionFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.ssl.X509;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TLS listener ({@code API_TLS_PORT}): TLS 1.3 (1.2 too when the operator allows it), HTTP/2
 * by ALPN with HTTP/1.1 for clients that do not offer h2. The certificate is chosen by SNI: an
 * organization's, when the name is one of its serving custom domains and a certificate of that
 * organization covers it; otherwise the server's own. Certificates are reloaded from each network
 * snapshot, so an upload is served within a second without a restart; handshakes in progress keep
 * the context they started with.
 */
public final class TlsListener {
  private static final Logger LOG = LoggerFactory.getLogger(TlsListener.class);
  private static final String DEFAULT_ALIAS = "engram-default";
  private static final char[] NO_PASSWORD = new char[0];

  private final SslContextFactory.Server tls = new SslContextFactory.Server();
  private final ServerCertificate serverCertificate;
  private final Certificates certificates;
  /** Alias (as the key store lower-cases it) → the organization whose certificate it is. */
  private volatile Map<String, String> owners = Map.of();

  private volatile Map<String, CustomDomain> domains = Map.of();
  /** The certificates in the key store now (null: none loaded yet). */
  private List<String> loaded;

  TlsListener(ServerCertificate serverCertificate, Certificates certificates, boolean allowTls12) {
    this.serverCertificate = serverCertificate;
    this.certificates = certificates;
    tls.setIncludeProtocols(
        allowTls12 ? new String[] {"TLSv1.3", "TLSv1.2"} : new String[] {"TLSv1.3"});
    tls.setCipherComparator(org.eclipse.jetty.http2.HTTP2Cipher.COMPARATOR);
    tls.setSniRequired(false);
    tls.setSNISelector(this::select);
    tls.setKeyStorePassword("");
  }

  /** The connector Javalin's Jetty adds (HTTP/2 and HTTP/1.1 over TLS). */
  public ServerConnector connector(Server server, HttpConfiguration plain, String host, int port) {
    HttpConfiguration https = new HttpConfiguration(plain);
    SecureRequestCustomizer secure = new SecureRequestCustomizer();
    secure.setSniHostCheck(false); // a host without its own certificate gets the default one
    https.addCustomizer(secure);
    HttpConnectionFactory http1 = new HttpConnectionFactory(https);
    HTTP2ServerConnectionFactory http2 = new HTTP2ServerConnectionFactory(https);
    ALPNServerConnectionFactory alpn = new ALPNServerConnectionFactory("h2", "http/1.1");
    alpn.setDefaultProtocol(http1.getProtocol());
    SslConnectionFactory ssl = new SslConnectionFactory(tls, alpn.getProtocol());
    ServerConnector connector = new ServerConnector(server, ssl, alpn, http2, http1);
    connector.setHost(host);
    connector.setPort(port);
    return connector;
  }

  /** Loads the certificates of a snapshot: every certificate valid now of a serving domain's organization. */
  void load(NetworkState.Snapshot snapshot) {
    domains = snapshot.domainsByHost();
    long now = System.currentTimeMillis();
    List<StoredCertificate> valid = snapshot.certificates().stream()
        .filter(certificate -> certificate.notAfter().toEpochMilli() > now)
        .toList();
    List<String> ids = valid.stream().map(StoredCertificate::id).toList();
    if (ids.equals(loaded)) {
      return; // a change of domains, rules or links: the key store stays as it is
    }
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      put(store, DEFAULT_ALIAS, serverCertificate.key(), serverCertificate.chain());
      Map<String, String> byAlias = new HashMap<>();
      for (StoredCertificate certificate : valid) {
        String alias = certificate.id().toLowerCase(Locale.ROOT);
        put(
            store,
            alias,
            CertificateCheck.privateKey(certificates.privateKeyPem(certificate)),
            CertificateCheck.certificates(certificate.chainPem(), "certificate"));
        byAlias.put(alias, certificate.orgId());
      }
      owners = Map.copyOf(byAlias);
      if (tls.isStarted()) {
        tls.reload(factory -> factory.setKeyStore(store));
      } else {
        tls.setKeyStore(store);
      }
      loaded = ids;
    } catch (Exception e) {
      // A certificate that cannot be loaded must not take TLS down for every organization.
      LOG.error("could not load the TLS certificates; the listener keeps the ones it had", e);
    }
  }

  private static void put(KeyStore store, String alias, PrivateKey key, List<X509Certificate> chain)
      throws GeneralSecurityException, IOException {
    store.setKeyEntry(alias, key, NO_PASSWORD, chain.toArray(Certificate[]::new));
  }

  /**
   * Jetty asks once per key type the client accepts: the organization's certificate when the SNI
   * name is its serving domain and the certificate covers it, else the server's own (or none of
   * this key type: Jetty then tries the next).
   */
  private String select(
      String keyType,
      java.security.Principal[] issuers,
      javax.net.ssl.SSLSession session,
      String sniHost,
      java.util.Collection<X509> candidates) {
    if (sniHost != null) {
      CustomDomain domain = domains.get(sniHost.toLowerCase(Locale.ROOT));
      if (domain != null && domain.state().serving()) {
        for (X509 candidate : candidates) {
          if (domain.orgId().equals(owners.get(candidate.getAlias()))
              && candidate.matches(sniHost)) {
            return candidate.getAlias();
          }
        }
      }
    }
    for (X509 candidate : candidates) {
      if (candidate.getAlias().equals(DEFAULT_ALIAS)) {
        return DEFAULT_ALIAS;
      }
    }
    return null;
  }
}
