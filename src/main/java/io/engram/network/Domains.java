package io.engram.network;

import io.engram.network.NetworkStore.Audit;
import io.engram.organizations.Organization;
import io.engram.organizations.Plan;
import io.engram.platform.Ids;
import io.engram.platform.crypto.SigningSecrets;
import io.engram.platform.http.ApiException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jdbi.v3.core.Handle;

/**
 * Custom domains: created pending, proved by a TXT record ({@code _engram-challenge.<domain>} =
 * {@code engram-verification=<token>}), checked on a schedule and on demand. A pending domain is
 * checked every {@code pendingInterval} and fails after {@link #GIVE_UP_AFTER} (DNS propagation
 * takes up to 48 hours); a serving one is checked again every {@code servingInterval}, and stops
 * serving when its record is gone (the name may have changed hands). A DNS failure (timeout,
 * refused) changes nothing but the reason shown.
 */
public final class Domains {
  static final int MAX_PER_ORGANIZATION = 10;
  static final Duration GIVE_UP_AFTER = Duration.ofHours(72);

  private final NetworkStore store;
  private final TxtLookup dns;
  private final Set<String> serverNames;
  private final Duration pendingInterval;
  private final Duration servingInterval;
  private final Clock clock;

  Domains(
      NetworkStore store,
      TxtLookup dns,
      Set<String> serverNames,
      Duration pendingInterval,
      Duration servingInterval,
      Clock clock) {
    this.store = store;
    this.dns = dns;
    this.serverNames = serverNames;
    this.pendingInterval = pendingInterval;
    this.servingInterval = servingInterval;
    this.clock = clock;
  }

  List<CustomDomain> list(String orgId) {
    return store.domains(orgId);
  }

  CustomDomain create(Organization org, String raw, Audit who) {
    if (org.plan().ordinal() < Plan.SCALE.ordinal()) {
      throw ApiException.forbidden(
          "plan_requires_scale",
          "Custom domains need the Scale plan or higher; this organization is on "
              + org.plan().id());
    }
    String domain = HostName.domain(raw, "domain");
    if (serverNames.stream().anyMatch(own -> domain.equals(own) || domain.endsWith("." + own))) {
      throw ApiException.badRequest(
          "domain", "'" + domain + "' is a name this server answers to itself; choose your own");
    }
    Instant now = clock.instant();
    CustomDomain created = new CustomDomain(
        Ids.newId("dom", now.toEpochMilli()),
        org.id(),
        domain,
        DomainState.PENDING_VERIFICATION,
        SigningSecrets.generate(""),
        now,
        null,
        null,
        now,
        null);
    try {
      insert(org, created, who, now);
    } catch (org.jdbi.v3.core.statement.UnableToExecuteStatementException e) {
      // Two registrations of one name at once: the unique index lets one in; the other is a 409.
      if (store.db().read(h -> NetworkStore.domainNamed(h, domain)).isPresent()) {
        throw taken(domain);
      }
      throw e;
    }
    return created;
  }

  private void insert(Organization org, CustomDomain created, Audit who, Instant now) {
    String domain = created.domain();
    store.db().write(h -> {
      if (NetworkStore.domainNamed(h, domain).isPresent()) {
        throw taken(domain);
      }
      if (NetworkStore.domains(h, org.id()).size() >= MAX_PER_ORGANIZATION) {
        throw ApiException.badRequest(
            "domain",
            "An organization may have at most " + MAX_PER_ORGANIZATION + " custom domains");
      }
      NetworkStore.insertDomain(h, created);
      NetworkStore.changed(
          h, now, org.id(), "network.domain.create", who, Map.of("domain", domain));
      return null;
    });
  }

  private static ApiException taken(String domain) {
    return ApiException.conflict(
        "domain_taken", "'" + domain + "' is already registered by an organization");
  }

  /** Looks the TXT record up now (POST /domain/{id}/verify); 404 for another's or none. */
  CustomDomain verify(String orgId, String id, Audit who) {
    CustomDomain domain =
        store.db().read(h -> NetworkStore.domain(h, orgId, id)).orElseThrow(() -> notFound(id));
    return check(domain, who);
  }

  void delete(String orgId, String id, Audit who) {
    store.db().write(h -> {
      CustomDomain domain = NetworkStore.domain(h, orgId, id).orElseThrow(() -> notFound(id));
      NetworkStore.deleteDomain(h, id);
      NetworkStore.changed(
          h,
          clock.instant(),
          orgId,
          "network.domain.delete",
          who,
          Map.of("domain", domain.domain()));
      return null;
    });
  }

  /**
   * A plan below Scale has no custom domains: the organization's domains stop serving (failed,
   * with the reason). After an upgrade each is verified again by {@code POST /verify}.
   */
  Map<String, Object> planChanged(Organization after, String requestId) {
    if (after.plan().ordinal() >= Plan.SCALE.ordinal()) {
      return Map.of();
    }
    Instant now = clock.instant();
    int stopped = store.db().write(h -> {
      int count = 0;
      for (CustomDomain d : NetworkStore.domains(h, after.id())) {
        if (d.state() == DomainState.FAILED) {
          continue;
        }
        NetworkStore.updateDomain(
            h,
            d.moved(
                DomainState.FAILED,
                d.verifiedAt(),
                now,
                now,
                "The organization's plan (" + after.plan().id()
                    + ") does not include custom domains: Scale or higher does"));
        NetworkStore.changed(
            h,
            now,
            after.id(),
            "network.domain.state",
            new Audit(null, requestId),
            Map.of("domain", d.domain(), "before", d.state().wireName(), "after", "failed"));
        count++;
      }
      return count;
    });
    return stopped == 0 ? Map.of() : Map.of("custom_domains_stopped", stopped);
  }

  /** The scheduled pass: every domain whose check is due. Returns how many were checked. */
  int checkDue() {
    List<CustomDomain> due = store.domainsDue(clock.instant(), 50);
    for (CustomDomain domain : due) {
      try {
        check(domain, Audit.SYSTEM);
      } catch (ApiException e) {
        // deleted while it was looked up: nothing left to check
      }
    }
    return due.size();
  }

  private CustomDomain check(CustomDomain domain, Audit who) {
    TxtLookup.Answer answer = dns.lookup(domain.recordName());
    Instant now = clock.instant();
    boolean found = answer.values().contains(domain.recordValue());
    return store.db().write(h -> {
      CustomDomain current = NetworkStore.domain(h, domain.orgId(), domain.id()).orElse(null);
      if (current == null) {
        throw notFound(domain.id()); // deleted while its record was looked up
      }
      CustomDomain next = next(h, current, found, answer.failure(), now);
      NetworkStore.updateDomain(h, next);
      if (next.state() != current.state()) {
        NetworkStore.changed(
            h,
            now,
            current.orgId(),
            "network.domain.state",
            who,
            Map.of(
                "domain", current.domain(),
                "before", current.state().wireName(),
                "after", next.state().wireName()));
      }
      return next;
    });
  }

  private CustomDomain next(Handle h, CustomDomain d, boolean found, String failure, Instant now) {
    DomainState state = d.state();
    Instant verifiedAt = d.verifiedAt();
    String reason;
    Duration wait;
    if (found) {
      state = Certificates.covers(h, d.orgId(), d.domain(), now)
          ? DomainState.ACTIVE
          : DomainState.VERIFIED;
      verifiedAt = verifiedAt == null ? now : verifiedAt;
      reason = null;
      wait = servingInterval;
    } else if (failure != null) {
      reason = failure; // the resolver failed: no verdict either way
      wait = pendingInterval;
    } else if (d.state().serving()) {
      state = DomainState.FAILED;
      reason = "The TXT record " + d.recordName() + " is gone; the domain no longer proves it "
          + "belongs to this organization. Publish it again and verify";
      wait = pendingInterval;
    } else if (d.state() == DomainState.PENDING_VERIFICATION
        && d.createdAt().plus(GIVE_UP_AFTER).isAfter(now)) {
      reason = "No TXT record " + d.recordName() + " with the value " + d.recordValue()
          + " was found yet (DNS changes can take up to 48 hours)";
      wait = pendingInterval;
    } else {
      state = DomainState.FAILED;
      reason = "No TXT record " + d.recordName() + " with the value " + d.recordValue()
          + " was found; publish it and verify again";
      wait = pendingInterval;
    }
    return d.moved(state, verifiedAt, now, now.plus(wait), reason);
  }

  private static ApiException notFound(String id) {
    return ApiException.notFound("domain_not_found", null, "No custom domain " + id);
  }
}
