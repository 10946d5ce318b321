package io.engram.network;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The certificate the TLS listener serves for the server's own names (and for any name without
 * an organization's certificate): the operator's ({@code ENGRAM_TLS_CERTIFICATE} and {@code
 * ENGRAM_TLS_PRIVATE_KEY}, PEM files), or one generated at first start, self-signed for the
 * server's names, and kept in the data directory so clients can pin it.
 */
record ServerCertificate(List<X509Certificate> chain, PrivateKey key) {
  private static final Logger LOG = LoggerFactory.getLogger(ServerCertificate.class);
  private static final Duration GENERATED_VALIDITY = Duration.ofDays(825);

  static ServerCertificate load(
      String certificateFile, String keyFile, Path dataDir, List<String> serverNames)
      throws IOException {
    if (!certificateFile.isEmpty()) {
      return new ServerCertificate(
          CertificateCheck.certificates(Files.readString(Path.of(certificateFile)), "certificate"),
          CertificateCheck.privateKey(Files.readString(Path.of(keyFile))));
    }
    Path dir = dataDir.resolve("tls");
    Path certificate = dir.resolve("server.crt");
    Path key = dir.resolve("server.key");
    if (Files.exists(certificate) && Files.exists(key)) {
      ServerCertificate kept = new ServerCertificate(
          CertificateCheck.certificates(Files.readString(certificate), "certificate"),
          CertificateCheck.privateKey(Files.readString(key)));
      if (kept.chain().getFirst().getNotAfter().toInstant().isAfter(Instant.now())) {
        LOG.info(
            "TLS: serving the self-signed certificate in {} (SHA-256 fingerprint {})",
            certificate,
            kept.fingerprint());
        return kept;
      }
    }
    ServerCertificate generated = selfSigned(serverNames);
    Files.createDirectories(dir);
    Files.writeString(key, CertificateCheck.keyPem(generated.key()));
    try {
      Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    } catch (UnsupportedOperationException e) {
      // not a POSIX file system: the data directory's own protection applies
    }
    Files.writeString(certificate, CertificateCheck.pem(generated.chain().toArray()));
    LOG.info(
        "generated a self-signed TLS certificate for {} in {} (SHA-256 fingerprint {})",
        serverNames,
        certificate,
        generated.fingerprint());
    // For the person at the console too: a client pins (or trusts) exactly this certificate.
    System.err.printf(
        "%n  TLS: a self-signed certificate was generated for %s (%s).%n"
            + "  SHA-256 fingerprint: %s%n"
            + "  For local use; set ENGRAM_TLS_CERTIFICATE and ENGRAM_TLS_PRIVATE_KEY for a real one.%n%n",
        serverNames, certificate, generated.fingerprint());
    return generated;
  }

  /** The SHA-256 of the leaf certificate, as browsers and openssl x509 -fingerprint show it. */
  String fingerprint() {
    try {
      byte[] digest = java.security.MessageDigest.getInstance("SHA-256")
          .digest(chain.getFirst().getEncoded());
      return java.util.HexFormat.ofDelimiter(":").withUpperCase().formatHex(digest);
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static ServerCertificate selfSigned(List<String> names) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"));
      KeyPair pair = generator.generateKeyPair();
      Instant now = Instant.now();
      X500Name subject = new X500Name("CN=" + names.getFirst() + ",O=Engram");
      JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(
          subject,
          new BigInteger(64, new SecureRandom()),
          Date.from(now.minus(Duration.ofHours(1))),
          Date.from(now.plus(GENERATED_VALIDITY)),
          subject,
          pair.getPublic());
      List<GeneralName> alternatives = new ArrayList<>();
      for (String name : names) {
        alternatives.add(new GeneralName(
            name.matches("[0-9.]+|.*:.*") ? GeneralName.iPAddress : GeneralName.dNSName, name));
      }
      builder.addExtension(
          Extension.subjectAlternativeName,
          false,
          new GeneralNames(alternatives.toArray(GeneralName[]::new)));
      X509Certificate certificate = new JcaX509CertificateConverter()
          .getCertificate(builder.build(
              new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate())));
      return new ServerCertificate(List.of(certificate), pair.getPrivate());
    } catch (GeneralSecurityException | OperatorCreationException | IOException e) {
      throw new IllegalStateException("could not generate the server's TLS certificate", e);
    }
  }
}
