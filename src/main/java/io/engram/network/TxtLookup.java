package io.engram.network;

import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import javax.naming.Context;
import javax.naming.NameNotFoundException;
import javax.naming.NamingEnumeration;
import javax.naming.NamingException;
import javax.naming.directory.Attribute;
import javax.naming.directory.Attributes;
import javax.naming.directory.DirContext;
import javax.naming.directory.InitialDirContext;

/**
 * Reads TXT records through a DNS resolver: the one the operator names ({@code
 * ENGRAM_DNS_RESOLVER}, host or host:port) or the system's ({@code /etc/resolv.conf}). A fresh
 * query each time (no cache of its own), so a record just published is seen at the next check.
 */
final class TxtLookup {
  /** The outcome: the record's strings, none (no such name or no TXT), or why it failed. */
  record Answer(List<String> values, String failure) {}

  private final String providerUrl;

  /** @param resolver host or host:port of a DNS server; empty: the system's resolvers */
  TxtLookup(String resolver) {
    this.providerUrl =
        resolver == null || resolver.isBlank() ? "dns:" : "dns://" + resolver.strip();
  }

  Answer lookup(String name) {
    Hashtable<String, String> env = new Hashtable<>();
    env.put(Context.INITIAL_CONTEXT_FACTORY, "com.sun.jndi.dns.DnsContextFactory");
    env.put(Context.PROVIDER_URL, providerUrl);
    env.put("com.sun.jndi.dns.timeout.initial", "1000");
    env.put("com.sun.jndi.dns.timeout.retries", "2");
    DirContext context = null;
    try {
      context = new InitialDirContext(env);
      Attributes attributes = context.getAttributes(name, new String[] {"TXT"});
      Attribute txt = attributes.get("TXT");
      List<String> values = new ArrayList<>();
      if (txt != null) {
        NamingEnumeration<?> all = txt.getAll();
        while (all.hasMore()) {
          values.add(unquoted(String.valueOf(all.next())));
        }
      }
      return new Answer(values, null);
    } catch (NameNotFoundException e) {
      return new Answer(List.of(), null);
    } catch (NamingException e) {
      return new Answer(List.of(), "DNS lookup of " + name + " failed: " + e.getExplanation());
    } finally {
      if (context != null) {
        try {
          context.close();
        } catch (NamingException e) {
          // nothing held
        }
      }
    }
  }

  /** JNDI quotes a TXT string that holds spaces; several strings of one record are joined. */
  private static String unquoted(String value) {
    StringBuilder out = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '"') {
        quoted = !quoted;
      } else if (c != ' ' || quoted) {
        out.append(c);
      }
    }
    return out.toString();
  }
}
