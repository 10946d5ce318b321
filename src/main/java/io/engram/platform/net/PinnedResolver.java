package io.engram.platform.net;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.net.spi.InetAddressResolver;
import java.net.spi.InetAddressResolverProvider;
import java.util.Arrays;
import java.util.stream.Stream;

/**
 * The JVM's resolver (registered in {@code META-INF/services}): every name lookup of the process
 * goes through {@link AddressBook#shared()}, which answers with what the outbound firewall checked
 * and pinned. The system's resolver does the actual work.
 */
public final class PinnedResolver extends InetAddressResolverProvider {

  @Override
  public InetAddressResolver get(Configuration configuration) {
    InetAddressResolver system = configuration.builtinResolver();
    AddressBook book = AddressBook.shared();
    book.lookup(host -> system
        .lookupByName(
            host,
            InetAddressResolver.LookupPolicy.of(
                InetAddressResolver.LookupPolicy.IPV4 | InetAddressResolver.LookupPolicy.IPV6))
        .toArray(InetAddress[]::new));
    return new InetAddressResolver() {
      @Override
      public Stream<InetAddress> lookupByName(String host, LookupPolicy policy)
          throws UnknownHostException {
        return Arrays.stream(book.lookup(host, policy));
      }

      @Override
      public String lookupByAddress(byte[] address) throws UnknownHostException {
        return system.lookupByAddress(address);
      }
    };
  }

  @Override
  public String name() {
    return "engram-pinned";
  }
}
