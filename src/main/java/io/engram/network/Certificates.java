package io.engram.network;

import io.engram.network.NetworkStore.Audit;
import io.engram.platform.Ids;
import io.engram.platform.crypto.SecretBox;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.MultipartReader;
import java.io.IOException;
import java.io.InputStream;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;

/**
 * Organizations' TLS certificates ({@code POST /ssl}). An upload is checked whole ({@link
 * CertificateCheck}) before anything is kept; the private key is sealed with the server's secret
 * key, never shown and never logged. A verified domain a certificate covers becomes {@code active}
 * in the upload's transaction, and the TLS listener serves the certificate for it within a second
 * on every node ({@link NetworkSync}).
 */
public final class Certificates {
  static final int MAX_PER_ORGANIZATION = 20;
  /** PEM parts beyond this are not a certificate anyone serves. */
  static final int MAX_PART_BYTES = 256 * 1024;

  private final NetworkStore store;
  private final SecretBox secrets;
  private final Clock clock;

  Certificates(NetworkStore store, SecretBox secrets, Clock clock) {
    this.store = store;
    this.secrets = secrets;
    this.clock = clock;
  }

  List<StoredCertificate> list(String orgId) {
    return store.certificates(orgId);
  }

  /** Reads the form (certificate, private_key, ca_bundle), checks it and keeps it. */
  StoredCertificate upload(String orgId, String contentType, InputStream body, Audit who) {
    MultipartReader form = MultipartReader.of(
        contentType,
        body,
        3L * MAX_PART_BYTES,
        () -> MultipartReader.tooLarge(3L * MAX_PART_BYTES, "a certificate upload"));
    Map<String, String> parts = new HashMap<>();
    try {
      Optional<MultipartReader.Part> part;
      while ((part = form.next()).isPresent()) {
        String name = part.get().name();
        if (!Set.of("certificate", "private_key", "ca_bundle").contains(name)) {
          throw ApiException.badRequest(
              name, "Unknown form field '" + name + "'; send certificate, private_key, ca_bundle");
        }
        if (parts.put(name, form.text(name, MAX_PART_BYTES)) != null) {
          throw ApiException.badRequest(name, "Send one '" + name + "' part");
        }
      }
    } catch (IOException e) {
      throw ApiException.badRequest(null, "The upload could not be read: " + e.getMessage());
    }
    for (String required : List.of("certificate", "private_key", "ca_bundle")) {
      if (!parts.containsKey(required)) {
        throw ApiException.badRequest(required, "A '" + required + "' part (PEM) is required");
      }
    }
    Instant now = clock.instant();
    Set<String> verified = store.domains(orgId).stream()
        .filter(domain -> domain.state().serving())
        .map(CustomDomain::domain)
        .collect(Collectors.toSet());
    CertificateCheck.Checked checked = CertificateCheck.check(
        parts.get("certificate"), parts.get("private_key"), parts.get("ca_bundle"), verified, now);
    X509Certificate leaf = checked.leaf();
    StoredCertificate certificate = new StoredCertificate(
        Ids.newId("cert", now.toEpochMilli()),
        orgId,
        leaf.getSubjectX500Principal().getName(),
        checked.names(),
        leaf.getNotBefore().toInstant(),
        leaf.getNotAfter().toInstant(),
        checked.fingerprint(),
        checked.keyType(),
        checked.chainPem(),
        secrets.seal(checked.keyPem()),
        now);
    store.db().write(h -> {
      long kept = h.createQuery("SELECT COUNT(*) FROM tls_certificates WHERE org_id = :org")
          .bind("org", orgId)
          .mapTo(Long.class)
          .one();
      if (kept >= MAX_PER_ORGANIZATION) {
        throw ApiException.badRequest(
            "certificate",
            "An organization may keep at most " + MAX_PER_ORGANIZATION + " certificates");
      }
      NetworkStore.insertCertificate(h, certificate);
      refreshDomainStates(h, orgId, now);
      NetworkStore.changed(
          h,
          now,
          orgId,
          "network.ssl.upload",
          who,
          Map.of(
              "certificate", certificate.id(),
              "names", certificate.names(),
              "not_after", certificate.notAfter().toString(),
              "fingerprint", certificate.fingerprint()));
      return null;
    });
    return certificate;
  }

  void delete(String orgId, String id, Audit who) {
    store.db().write(h -> {
      if (!NetworkStore.deleteCertificate(h, orgId, id)) {
        throw ApiException.notFound("certificate_not_found", null, "No certificate " + id);
      }
      Instant now = clock.instant();
      refreshDomainStates(h, orgId, now);
      NetworkStore.changed(h, now, orgId, "network.ssl.delete", who, Map.of("certificate", id));
      return null;
    });
  }

  /** The key of a stored certificate, unsealed for the TLS listener (never for a response). */
  String privateKeyPem(StoredCertificate certificate) {
    return secrets.open(certificate.sealedKey());
  }

  /** Whether the organization holds a certificate, valid now, that names the domain. */
  static boolean covers(Handle h, String orgId, String domain, Instant now) {
    return h
        .createQuery("""
            SELECT names FROM tls_certificates
            WHERE org_id = :org AND not_before <= :now AND not_after > :now""")
        .bind("org", orgId)
        .bind("now", now.toEpochMilli())
        .mapTo(String.class)
        .stream()
        .anyMatch(names -> CertificateCheck.covers(List.of(names.split(",")), domain));
  }

  /** Verified domains a certificate covers are active, active ones no longer covered verified. */
  private static void refreshDomainStates(Handle h, String orgId, Instant now) {
    for (CustomDomain d : NetworkStore.domains(h, orgId)) {
      if (!d.state().serving()) {
        continue;
      }
      DomainState state =
          covers(h, orgId, d.domain(), now) ? DomainState.ACTIVE : DomainState.VERIFIED;
      if (state != d.state()) {
        NetworkStore.updateDomain(
            h,
            d.moved(state, d.verifiedAt(), d.lastCheckedAt(), d.nextCheckAt(), d.failureReason()));
      }
    }
  }
}
