package io.engram.network;

import io.engram.network.NetworkStore.Audit;
import io.engram.organizations.OrganizationStore;
import io.engram.platform.config.ConfigException;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.crypto.SecretBox;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import io.engram.platform.net.Egress;
import io.engram.settings.OrganizationConfigs;
import io.engram.store.Database;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.BiFunction;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * The organizations' network boundary, wired: the records and their routes, the snapshot every
 * request and outbound call is checked against (refreshed each second from the database, so all
 * nodes agree within a second or two), the domain checks, the TLS listener and the certificate
 * expiry watch.
 */
public final class Network implements Module {
  /** A certificate this close to its end raises the organization's alert. */
  static final Duration EXPIRY_WARNING = Duration.ofDays(14);

  /** What the operator configures (docs/network.md, "Operator settings"). */
  public record Options(
      String dnsResolver,
      Set<String> serverNames,
      Duration pendingCheckInterval,
      Duration servingCheckInterval,
      boolean tlsListener,
      boolean allowTls12,
      String certificateFile,
      String privateKeyFile,
      Path dataDir) {}

  /** Receives the certificate-expiry condition of each organization that holds certificates. */
  @FunctionalInterface
  public interface ExpiryReport {
    void report(String orgId, boolean expiring, double days, String message);
  }

  private final NetworkStore store;
  private final OutboundFirewall firewall;
  private final NetworkState state;
  private final Domains domains;
  private final Certificates certificates;
  private final NetworkLinks links;
  private final Optional<TlsListener> tls;
  private final Clock clock;
  private volatile ExpiryReport expiryReport = (org, expiring, days, message) -> {};
  private volatile Map<String, Double> expiryDays = Map.of();

  public Network(
      Database db,
      SecretBox secrets,
      MeterRegistry registry,
      Clock clock,
      Options options,
      Provisioner provisioner)
      throws IOException {
    this.store = new NetworkStore(db);
    this.firewall = new OutboundFirewall(registry);
    this.state = new NetworkState(store, firewall);
    this.domains = new Domains(
        store,
        new TxtLookup(options.dnsResolver()),
        options.serverNames(),
        options.pendingCheckInterval(),
        options.servingCheckInterval(),
        clock);
    this.certificates = new Certificates(store, secrets, clock);
    this.links = new NetworkLinks(store, provisioner, clock);
    this.clock = clock;
    this.tls = options.tlsListener()
        ? Optional.of(new TlsListener(
            ServerCertificate.load(
                options.certificateFile(),
                options.privateKeyFile(),
                options.dataDir(),
                List.copyOf(options.serverNames())),
            certificates,
            options.allowTls12()))
        : Optional.empty();
    state.refresh(true);
    tls.ifPresent(listener -> state.onChange(listener::load));
    Gauge.builder(
            "engram_tls_certificates_expiring",
            () -> expiryDays.values().stream()
                .filter(days -> days < EXPIRY_WARNING.toDays())
                .count())
        .description("Organizations with a certificate that expires within 14 days (or expired)")
        .register(registry);
    Gauge.builder(
            "engram_tls_certificate_min_seconds_left",
            () -> expiryDays.values().stream()
                .mapToDouble(days -> days * 86_400)
                .min()
                .orElse(Double.NaN))
        .description("Seconds until the first organization certificate expires")
        .register(registry);
  }

  public void onCertificateExpiry(ExpiryReport report) {
    this.expiryReport = report;
  }

  /**
   * The boundary is refreshed every second (all nodes agree within a second or two); pending
   * domains are checked every few seconds, certificates' expiry every minute.
   */
  @Override
  public List<Job> jobs() {
    return List.of(
        Job.every(
            Duration.ofSeconds(1), "refresh the network boundary", () -> state.refresh(false)),
        new Job(
            "check custom domains",
            Duration.ofSeconds(2),
            Duration.ofSeconds(5),
            this::checkDomains),
        new Job(
            "watch certificate expiry",
            Duration.ofSeconds(3),
            Duration.ofMinutes(1),
            this::watchExpiry));
  }

  @Override
  public String name() {
    return "network";
  }

  /** The gate of every outbound connection made for an organization. */
  public Egress egress() {
    return firewall;
  }

  public NetworkState state() {
    return state;
  }

  /** The TLS listener's connector for the HTTP server, on {@code port} (empty: no listener). */
  public Optional<BiFunction<Server, HttpConfiguration, ServerConnector>> tlsConnector(
      String host, OptionalInt port) {
    return tls.map(
        listener -> (jetty, http) -> listener.connector(jetty, http, host, port.orElseThrow()));
  }

  private RouteModule routes = table -> {};

  /** The network routes. */
  public Network serving(
      OrganizationStore organizations, OrganizationConfigs configs, long maxBodyBytes) {
    routes = new NetworkRoutes(this, organizations, configs, clock, maxBodyBytes);
    return this;
  }

  @Override
  public void register(Routes table) {
    routes.register(table);
  }

  /** The boundary as the operator configured its edge (docs/network.md, "Operator settings"). */
  public static Network open(
      EngramConfig config, Database db, SecretBox secrets, MeterRegistry registry, Clock clock) {
    EngramConfig.Edge edge = config.edge();
    try {
      return new Network(
          db,
          secrets,
          registry,
          clock,
          new Options(
              edge.dnsResolver(),
              edge.serverNames(),
              edge.domainCheckInterval(),
              Duration.ofHours(6),
              edge.tlsPort().isPresent(),
              edge.allowTls12(),
              edge.certificateFile(),
              edge.privateKeyFile(),
              config.storage().dataDir()),
          new ManualProvisioner());
    } catch (IOException e) {
      throw new ConfigException(List.of("the TLS certificate could not be read or kept: " + e));
    }
  }

  /** Follows a plan change (registered with the organizations): below Scale, domains stop. */
  public Map<String, Object> planChanged(
      io.engram.organizations.Organization before,
      io.engram.organizations.Organization after,
      String requestId) {
    Map<String, Object> consequences = domains.planChanged(after, requestId);
    state.refresh(false);
    return consequences;
  }

  /** Runs the scheduled domain checks now (tests, and an operator's nudge). */
  public int checkDomains() {
    int checked = domains.checkDue();
    state.refresh(false);
    return checked;
  }

  /** Reloads the snapshot now (tests of another node's change). */
  public void refresh() {
    state.refresh(false);
  }

  Domains domains() {
    return domains;
  }

  Certificates certificates() {
    return certificates;
  }

  NetworkLinks links() {
    return links;
  }

  Map<String, String> allowlistNotes(String orgId) {
    return store.allowlistNotes(orgId);
  }

  FirewallRules firewall(String orgId) {
    return store.db().read(h -> NetworkStore.firewall(h, orgId));
  }

  /** Replaces the rules, audited; in force on this node at once, on the others within a second. */
  FirewallRules replaceFirewall(String orgId, FirewallRules rules, Audit who) {
    Instant now = clock.instant();
    store.db().write(h -> {
      FirewallRules before = NetworkStore.firewall(h, orgId);
      NetworkStore.writeFirewall(h, orgId, rules, now);
      NetworkStore.changed(
          h,
          now,
          orgId,
          "network.firewall.replace",
          who,
          Map.of("before", before.toView(), "after", rules.toView()));
      return null;
    });
    firewall.put(orgId, rules);
    return rules;
  }

  /** Each organization with certificates: fired while one expires within 14 days. */
  public void watchExpiry() {
    Instant now = clock.instant();
    Map<String, Double> earliest = new HashMap<>();
    for (StoredCertificate certificate : state.snapshot().certificates()) {
      double days = Duration.between(now, certificate.notAfter()).toSeconds() / 86_400.0;
      earliest.merge(certificate.orgId(), days, Math::min);
    }
    expiryDays = Map.copyOf(earliest);
    earliest.forEach((orgId, days) -> expiryReport.report(
        orgId,
        days < EXPIRY_WARNING.toDays(),
        days,
        days < 0
            ? "A TLS certificate of this organization has expired; upload a new one (POST /ssl)"
            : String.format(
                "A TLS certificate of this organization expires in %.1f days; upload its "
                    + "successor (POST /ssl)",
                days)));
  }
}
