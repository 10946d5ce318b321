package io.engram.support;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** A test certificate authority and the certificates it issues, as PEM, made in memory. */
public final class TestPki {
  /** A certificate with its key. */
  public record Issued(X509Certificate certificate, KeyPair keys) {
    public String certificatePem() {
      return pem(certificate);
    }

    /** The key as PKCS#8 ({@code PRIVATE KEY}), as tools write it today. */
    public String keyPem() {
      try {
        return pem(new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(keys.getPrivate(), null));
      } catch (org.bouncycastle.util.io.pem.PemGenerationException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  private TestPki() {}

  public static KeyPair keys(String algorithm) {
    try {
      if (algorithm.startsWith("EC")) {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec(
            algorithm.equals("EC-384")
                ? "secp384r1"
                : algorithm.equals("EC-K1") ? "secp256k1" : "secp256r1"));
        return generator.generateKeyPair();
      }
      KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
      generator.initialize(Integer.parseInt(algorithm.substring(4)));
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A self-signed certificate authority. */
  public static Issued authority(String name) {
    KeyPair keys = keys("EC");
    return new Issued(
        build(
            name,
            keys,
            name,
            keys,
            List.of(),
            Instant.now().minus(Duration.ofDays(1)),
            Instant.now().plus(Duration.ofDays(3650)),
            true),
        keys);
  }

  /** A server certificate for {@code names}, issued by {@code ca}, with a key of {@code algorithm} (EC, EC-384, RSA-2048...). */
  public static Issued server(
      Issued ca, List<String> names, String algorithm, Instant notBefore, Instant notAfter) {
    KeyPair keys = keys(algorithm);
    X500Name issuer =
        X500Name.getInstance(ca.certificate().getSubjectX500Principal().getEncoded());
    return new Issued(
        build(
            names.getFirst(),
            keys,
            issuer.toString(),
            ca.keys(),
            names,
            notBefore,
            notAfter,
            false),
        keys);
  }

  public static Issued server(Issued ca, List<String> names) {
    return server(
        ca,
        names,
        "EC",
        Instant.now().minus(Duration.ofDays(1)),
        Instant.now().plus(Duration.ofDays(90)));
  }

  private static X509Certificate build(
      String subject,
      KeyPair subjectKeys,
      String issuer,
      KeyPair issuerKeys,
      List<String> names,
      Instant notBefore,
      Instant notAfter,
      boolean authority) {
    try {
      JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(
          issuer.startsWith("CN=") ? new X500Name(issuer) : new X500Name("CN=" + issuer),
          new BigInteger(64, new SecureRandom()),
          Date.from(notBefore),
          Date.from(notAfter),
          new X500Name("CN=" + subject),
          subjectKeys.getPublic());
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(authority));
      if (authority) {
        builder.addExtension(
            Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      }
      if (!names.isEmpty()) {
        builder.addExtension(
            Extension.subjectAlternativeName,
            false,
            new GeneralNames(names.stream()
                .map(n -> new GeneralName(GeneralName.dNSName, n))
                .toArray(GeneralName[]::new)));
      }
      String signature = issuerKeys.getPrivate().getAlgorithm().equals("RSA")
          ? "SHA256withRSA"
          : "SHA256withECDSA";
      return new JcaX509CertificateConverter()
          .getCertificate(
              builder.build(new JcaContentSignerBuilder(signature).build(issuerKeys.getPrivate())));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  public static String pem(Object item) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
      writer.writeObject(item);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return out.toString();
  }
}
