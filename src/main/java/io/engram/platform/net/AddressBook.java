package io.engram.platform.net;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.net.spi.InetAddressResolver.LookupPolicy;
import java.security.Security;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Host names' addresses, with one cache that the outbound firewall and every client share. The
 * firewall resolves a host here, checks the addresses and pins the ones it let through; a client
 * that connects next (Java's HttpClient, the AWS SDK, Engram's own origin client) resolves the same
 * host through {@link PinnedResolver}, which answers from {@link #shared()}: the connection goes to
 * a checked address even if the name's DNS answer changed in between (DNS rebinding). The JDK's
 * own address cache is turned off ({@link #install}) so it cannot answer with addresses this cache
 * no longer holds.
 */
public final class AddressBook {
  /** How long an answer is kept (the JDK's default positive cache time). */
  static final long TTL_NANOS = 30_000_000_000L;
  /** Past this many names, lapsed answers are dropped before a new one is kept. */
  static final int PURGE_ABOVE = 10_000;

  /** Where answers come from: the system's resolver. */
  @FunctionalInterface
  public interface Lookup {
    InetAddress[] all(String host) throws UnknownHostException;
  }

  private record Entry(InetAddress[] addresses, long expiresAt) {}

  private static final AddressBook SHARED = new AddressBook(null, System::nanoTime);

  private final Map<String, Entry> cache = new ConcurrentHashMap<>();
  private final LongSupplier clock;
  private volatile Lookup lookup;

  /**
   * @param lookup the resolver behind the cache (null: the JDK's, until {@link PinnedResolver}
   *     supplies the system's own)
   */
  public AddressBook(Lookup lookup, LongSupplier nanoClock) {
    this.lookup = lookup;
    this.clock = nanoClock;
  }

  /** The process's book: the one the JVM's resolver answers from. */
  public static AddressBook shared() {
    return SHARED;
  }

  /**
   * Turns off the JDK's address cache, so every lookup reaches {@link PinnedResolver}. Must run
   * before the first lookup of the process (the JDK reads the setting once); {@code Main} calls it
   * first thing.
   */
  public static void install() {
    Security.setProperty("networkaddress.cache.ttl", "0");
    Security.setProperty("networkaddress.cache.negative.ttl", "0");
  }

  void lookup(Lookup system) {
    this.lookup = system;
  }

  /** The host's addresses: an address literal as it is, a name from the cache or resolved now. */
  public InetAddress[] resolve(String host) throws UnknownHostException {
    if (AddressRange.looksLikeAddress(host)) {
      return new InetAddress[] {InetAddress.ofLiteral(host)};
    }
    return cached(host).clone();
  }

  /**
   * Makes these (checked) addresses the host's answer for the next {@link #TTL_NANOS}: a
   * connection that resolves the host now gets them and nothing else.
   */
  public void pin(String host, InetAddress[] addresses) {
    if (!AddressRange.looksLikeAddress(host) && addresses.length > 0) {
      keep(key(host), addresses.clone());
    }
  }

  /**
   * What a client's lookup gets: the cached answer while it holds, else the system's; each
   * address named {@code host}, as the client asked (its TLS server name comes from it).
   */
  InetAddress[] lookup(String host, LookupPolicy policy) throws UnknownHostException {
    int wanted = policy.characteristics();
    List<InetAddress> matching = new ArrayList<>();
    for (InetAddress address : cached(host)) {
      byte[] bytes = address.getAddress();
      if ((wanted & (bytes.length == 4 ? LookupPolicy.IPV4 : LookupPolicy.IPV6)) != 0) {
        matching.add(InetAddress.getByAddress(host, bytes));
      }
    }
    if (matching.isEmpty()) {
      throw new UnknownHostException(host);
    }
    return matching.toArray(InetAddress[]::new);
  }

  private InetAddress[] cached(String host) throws UnknownHostException {
    String key = key(host);
    Entry entry = cache.get(key);
    if (entry != null && entry.expiresAt - clock.getAsLong() > 0) {
      return entry.addresses;
    }
    Lookup system = lookup;
    InetAddress[] found = system != null ? system.all(host) : InetAddress.getAllByName(host);
    keep(key, found);
    return found;
  }

  private void keep(String key, InetAddress[] addresses) {
    long now = clock.getAsLong();
    if (cache.size() > PURGE_ABOVE) {
      cache.values().removeIf(entry -> entry.expiresAt - now <= 0);
    }
    cache.put(key, new Entry(addresses, now + TTL_NANOS));
  }

  private static String key(String host) {
    return host.toLowerCase(Locale.ROOT);
  }
}
