package io.engram.network;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.RSAPrivateKey;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The PEM private keys that openssl writes, in each of its forms, are read. */
class CertificateCheckTest {
  @Test
  void readsTheKeyFormsOpensslWrites() throws Exception {
    // SEC1 "EC PRIVATE KEY" (the curve inside the key), PKCS#8, and PKCS#1 "RSA PRIVATE KEY".
    String sec1 = openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout");
    assertThat(sec1).contains("BEGIN EC PRIVATE KEY");
    assertThat(CertificateCheck.privateKey(sec1)).isInstanceOf(ECPrivateKey.class);
    String pkcs8 = openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384");
    assertThat(pkcs8).contains("BEGIN PRIVATE KEY");
    assertThat(CertificateCheck.privateKey(pkcs8)).isInstanceOf(ECPrivateKey.class);
    String pkcs1 = openssl("genrsa", "-traditional", "2048");
    assertThat(pkcs1).contains("BEGIN RSA PRIVATE KEY");
    assertThat(CertificateCheck.privateKey(pkcs1)).isInstanceOf(RSAPrivateKey.class);
  }

  private static String openssl(String... arguments) throws Exception {
    String[] command = new String[arguments.length + 1];
    command[0] = "openssl";
    System.arraycopy(arguments, 0, command, 1, arguments.length);
    Process process = new ProcessBuilder(command).start();
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
  }
}
