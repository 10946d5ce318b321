package io.engram.network;

import io.engram.platform.http.ApiException;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertPathBuilder;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertStore;
import java.security.cert.CertificateException;
import java.security.cert.CertificateParsingException;
import java.security.cert.CollectionCertStoreParameters;
import java.security.cert.PKIXBuilderParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509CertSelector;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.RSAPrivateKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMEncryptedKeyPair;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo;

/**
 * Reads an uploaded certificate, key and CA bundle (PEM) and checks them as a TLS server would
 * need them: the key is RSA of 2048 bits or more or EC on P-256 or P-384, it belongs to the
 * certificate, the certificate is valid now, its chain builds to a certificate of the bundle, and
 * it names (SAN) a verified domain of the organization. Each failure is a 400 naming the part.
 */
final class CertificateCheck {
  private static final java.security.Provider BOUNCY_CASTLE =
      new org.bouncycastle.jce.provider.BouncyCastleProvider();

  /** What passed: the chain to serve (leaf first), the key, and the names it covers. */
  record Checked(List<X509Certificate> chain, PrivateKey key, List<String> names, String keyType) {
    X509Certificate leaf() {
      return chain.getFirst();
    }

    String fingerprint() {
      try {
        return HexFormat.of()
            .formatHex(
                java.security.MessageDigest.getInstance("SHA-256").digest(leaf().getEncoded()));
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException(e);
      }
    }

    String chainPem() {
      return pem(chain.toArray());
    }

    String keyPem() {
      return CertificateCheck.keyPem(key);
    }
  }

  private CertificateCheck() {}

  static Checked check(
      String certificatePem,
      String keyPem,
      String bundlePem,
      Set<String> verifiedDomains,
      Instant now) {
    List<X509Certificate> chain = certificates(certificatePem, "certificate");
    List<X509Certificate> bundle = certificates(bundlePem, "ca_bundle");
    PrivateKey key = privateKey(keyPem);
    String keyType = keyType(key);
    X509Certificate leaf = chain.getFirst();
    if (!belongs(key, leaf.getPublicKey())) {
      throw ApiException.badRequest(
          "private_key", "The private key does not belong to the certificate");
    }
    Date at = Date.from(now);
    if (at.after(leaf.getNotAfter())) {
      throw ApiException.badRequest(
          "certificate", "The certificate expired on " + leaf.getNotAfter().toInstant());
    }
    if (at.before(leaf.getNotBefore())) {
      throw ApiException.badRequest(
          "certificate",
          "The certificate is not valid before " + leaf.getNotBefore().toInstant());
    }
    buildChain(leaf, chain, bundle, at);
    List<String> names = dnsNames(leaf);
    boolean covers = verifiedDomains.stream().anyMatch(domain -> covers(names, domain));
    if (!covers) {
      throw ApiException.badRequest(
          "certificate",
          "The certificate names " + (names.isEmpty() ? "no DNS name" : String.join(", ", names))
              + " in its subject alternative names, none of this organization's verified domains"
              + (verifiedDomains.isEmpty()
                  ? " (it has none yet: verify a domain first)"
                  : " (" + String.join(", ", verifiedDomains) + ")"));
    }
    return new Checked(List.copyOf(chain), key, names, keyType);
  }

  /** Whether a certificate naming {@code names} serves {@code host} (one-label wildcards). */
  static boolean covers(List<String> names, String host) {
    for (String name : names) {
      String n = name.toLowerCase(Locale.ROOT);
      if (n.equals(host)) {
        return true;
      }
      if (n.startsWith("*.")) {
        int dot = host.indexOf('.');
        if (dot > 0 && host.substring(dot + 1).equals(n.substring(2))) {
          return true;
        }
      }
    }
    return false;
  }

  static List<X509Certificate> certificates(String pem, String param) {
    List<X509Certificate> found = new ArrayList<>();
    try (PEMParser parser = new PEMParser(new StringReader(pem == null ? "" : pem))) {
      JcaX509CertificateConverter converter = new JcaX509CertificateConverter();
      Object item;
      while ((item = parser.readObject()) != null) {
        if (!(item instanceof X509CertificateHolder holder)) {
          throw ApiException.badRequest(
              param, "'" + param + "' must hold only PEM certificates (BEGIN CERTIFICATE)");
        }
        found.add(converter.getCertificate(holder));
      }
    } catch (IOException | CertificateException | RuntimeException e) {
      if (e instanceof ApiException api) {
        throw api;
      }
      throw ApiException.badRequest(param, "'" + param + "' is not a readable PEM certificate");
    }
    if (found.isEmpty()) {
      throw ApiException.badRequest(param, "'" + param + "' holds no PEM certificate");
    }
    return found;
  }

  static PrivateKey privateKey(String pem) {
    try (PEMParser parser = new PEMParser(new StringReader(pem == null ? "" : pem))) {
      Object item = parser.readObject();
      if (item instanceof PEMEncryptedKeyPair || item instanceof PKCS8EncryptedPrivateKeyInfo) {
        throw ApiException.badRequest(
            "private_key", "The private key is encrypted; upload it without a passphrase");
      }
      // The private part alone: an EC key written without its public point is common.
      PrivateKeyInfo info = item instanceof PEMKeyPair pair
          ? pair.getPrivateKeyInfo()
          : item instanceof PrivateKeyInfo plain ? plain : null;
      if (info != null) {
        // Bouncy Castle reads every encoding (SEC1 keys carry their curve inside the key, where
        // the JDK does not look); the key is then handed to the JDK in its standard form.
        PrivateKey read = new JcaPEMKeyConverter().setProvider(BOUNCY_CASTLE).getPrivateKey(info);
        return KeyFactory.getInstance(read instanceof ECPrivateKey ? "EC" : read.getAlgorithm())
            .generatePrivate(new PKCS8EncodedKeySpec(read.getEncoded()));
      }
    } catch (IOException | GeneralSecurityException | RuntimeException e) {
      if (e instanceof ApiException api) {
        throw api;
      }
    }
    throw ApiException.badRequest(
        "private_key",
        "'private_key' must be an unencrypted PEM private key (PRIVATE KEY, RSA PRIVATE KEY or "
            + "EC PRIVATE KEY)");
  }

  private static String keyType(PrivateKey key) {
    if (key instanceof RSAPrivateKey rsa) {
      int bits = rsa.getModulus().bitLength();
      if (bits < 2048) {
        throw ApiException.badRequest(
            "private_key", "The RSA key has " + bits + " bits; at least 2048 are needed");
      }
      return "RSA-" + bits;
    }
    if (key instanceof ECPrivateKey ec) {
      for (String curve : List.of("secp256r1", "secp384r1")) {
        if (sameCurve(ec.getParams(), curve)) {
          return curve.equals("secp256r1") ? "EC-P256" : "EC-P384";
        }
      }
      throw ApiException.badRequest(
          "private_key", "The EC key is on a curve other than P-256 or P-384");
    }
    throw ApiException.badRequest(
        "private_key", "The key is " + key.getAlgorithm() + "; RSA or EC keys are accepted");
  }

  private static boolean sameCurve(ECParameterSpec params, String curve) {
    try {
      AlgorithmParameters named = AlgorithmParameters.getInstance("EC");
      named.init(new ECGenParameterSpec(curve));
      ECParameterSpec spec = named.getParameterSpec(ECParameterSpec.class);
      return spec.getOrder().equals(params.getOrder())
          && spec.getCurve().equals(params.getCurve())
          && spec.getGenerator().equals(params.getGenerator());
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  /** Signs a random message with the key and verifies it with the certificate's public key. */
  private static boolean belongs(PrivateKey key, PublicKey certified) {
    if (!key.getAlgorithm().equals(certified.getAlgorithm())) {
      return false;
    }
    try {
      String algorithm = key instanceof RSAPrivateKey ? "SHA256withRSA" : "SHA256withECDSA";
      byte[] message = new byte[32];
      new SecureRandom().nextBytes(message);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(message);
      byte[] signed = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(certified);
      verifier.update(message);
      return verifier.verify(signed);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static void buildChain(
      X509Certificate leaf, List<X509Certificate> chain, List<X509Certificate> bundle, Date at) {
    try {
      Set<TrustAnchor> anchors = new HashSet<>();
      bundle.forEach(ca -> anchors.add(new TrustAnchor(ca, null)));
      X509CertSelector target = new X509CertSelector();
      target.setCertificate(leaf);
      PKIXBuilderParameters parameters = new PKIXBuilderParameters(anchors, target);
      parameters.setRevocationEnabled(false);
      parameters.setDate(at);
      Collection<X509Certificate> known = new ArrayList<>(chain);
      known.addAll(bundle);
      parameters.addCertStore(
          CertStore.getInstance("Collection", new CollectionCertStoreParameters(known)));
      CertPathBuilder.getInstance("PKIX").build(parameters);
    } catch (CertPathBuilderException e) {
      throw ApiException.badRequest(
          "ca_bundle",
          "The certificate's chain does not build to a certificate of the CA bundle: "
              + e.getMessage());
    } catch (GeneralSecurityException e) {
      throw ApiException.badRequest("ca_bundle", "The CA bundle cannot be used: " + e.getMessage());
    }
  }

  private static List<String> dnsNames(X509Certificate leaf) {
    List<String> names = new ArrayList<>();
    try {
      Collection<List<?>> alternatives = leaf.getSubjectAlternativeNames();
      if (alternatives != null) {
        for (List<?> entry : alternatives) {
          if (Integer.valueOf(2).equals(entry.get(0))) {
            names.add(String.valueOf(entry.get(1)).toLowerCase(Locale.ROOT));
          }
        }
      }
    } catch (CertificateParsingException e) {
      throw ApiException.badRequest(
          "certificate", "The certificate's alternative names are unreadable");
    }
    return names;
  }

  /**
   * A key as PKCS#8 ({@code PRIVATE KEY}). Not the writer's default for EC keys: it would write
   * SEC1 without the curve when the JDK made the key, which nothing can read back.
   */
  static String keyPem(PrivateKey key) {
    try {
      return pem(new Object[] {new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(key, null)});
    } catch (org.bouncycastle.util.io.pem.PemGenerationException e) {
      throw new IllegalStateException(e);
    }
  }

  static String pem(Object[] items) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
      for (Object item : items) {
        writer.writeObject(item);
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return out.toString();
  }
}
