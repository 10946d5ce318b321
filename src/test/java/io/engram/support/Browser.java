package io.engram.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Debian's headless Chromium driven over WebDriver (chromedriver from chromium-driver): the real
 * browser, no browser download. Missing outside CI, the tests that need it are skipped with a
 * message; under CI=true a missing browser fails them (./engram test installs it).
 */
public final class Browser implements AutoCloseable {
  private static final Path AXE = Path.of("console-test/node_modules/axe-core/axe.min.js");
  private static final ObjectMapper JSON = new ObjectMapper();

  public final ChromeDriver driver;
  private final String baseUrl;
  private final Path profile;

  private Browser(String baseUrl) {
    this.baseUrl = baseUrl;
    try {
      this.profile = Files.createTempDirectory("engram-chromium");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ChromeOptions options = new ChromeOptions();
    options.setBinary(
        executable("ENGRAM_CHROMIUM", "/usr/lib/chromium/chromium", "/usr/bin/chromium"));
    // The browser's console, to find what the Content-Security-Policy blocked (nothing may be).
    org.openqa.selenium.logging.LoggingPreferences logs =
        new org.openqa.selenium.logging.LoggingPreferences();
    logs.enable(org.openqa.selenium.logging.LogType.BROWSER, java.util.logging.Level.ALL);
    options.setCapability("goog:loggingPrefs", logs);
    options.addArguments(
        "--headless=new",
        "--no-sandbox", // the tests may run as root, where Chromium's sandbox cannot start
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,1000",
        "--lang=en-US",
        "--user-data-dir=" + profile);
    ChromeDriverService service = new ChromeDriverService.Builder()
        .usingDriverExecutable(new File(executable("ENGRAM_CHROMEDRIVER", "/usr/bin/chromedriver")))
        .usingAnyFreePort()
        .build();
    this.driver = new ChromeDriver(service, options);
    driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(30));
  }

  /** A browser for the server at baseUrl; skipped (or, in CI, failed) when there is none. */
  public static Browser open(String baseUrl) {
    boolean present = Files.isExecutable(Path.of("/usr/bin/chromedriver"))
        || System.getenv("ENGRAM_CHROMEDRIVER") != null;
    if (!present && "true".equals(System.getenv("CI"))) {
      throw new AssertionError("chromium-driver is missing: ./engram test installs it");
    }
    Assumptions.assumeTrue(
        present, "Chromium and chromium-driver missing (./engram test installs them)");
    return new Browser(baseUrl);
  }

  private static String executable(String variable, String... candidates) {
    String chosen = System.getenv(variable);
    if (chosen != null) {
      return chosen;
    }
    for (String candidate : candidates) {
      if (Files.isExecutable(Path.of(candidate))) {
        return candidate;
      }
    }
    throw new AssertionError("None of " + List.of(candidates) + " exists; set " + variable);
  }

  public Browser go(String path) {
    driver.get(baseUrl + path);
    return this;
  }

  public String path() {
    return driver.getCurrentUrl().substring(baseUrl.length());
  }

  public <T> T until(Function<WebDriver, T> condition) {
    // A page that redraws replaces its elements: one found a moment ago may be gone; look again.
    // Chromium says so as a stale element, or, when the node went between two commands of one
    // read, as "Node with given id does not belong to the document": a plain WebDriverException.
    // A condition that never holds still fails after the wait, with the last of these as cause.
    return new WebDriverWait(driver, Duration.ofSeconds(15))
        .ignoring(StaleElementReferenceException.class)
        .ignoring(org.openqa.selenium.WebDriverException.class)
        .until(condition);
  }

  /** The element once it is there and shown. */
  public WebElement visible(By by) {
    return until(d -> {
      List<WebElement> found = d.findElements(by);
      return found.isEmpty() || !found.getFirst().isDisplayed() ? null : found.getFirst();
    });
  }

  /** Waits until some element's text contains the text; returns it. */
  public WebElement text(By by, String text) {
    return until(d -> d.findElements(by).stream()
        .filter(e -> e.getText().contains(text))
        .findFirst()
        .orElse(null));
  }

  public Object script(String script, Object... args) {
    return ((JavascriptExecutor) driver).executeScript(script, args);
  }

  /** The field whose label is this text (labels are tied to their inputs by for/id). */
  public WebElement field(String label) {
    WebElement element = visible(By.xpath("//label[normalize-space(.)=" + quote(label) + "]"));
    return driver.findElement(By.id(element.getAttribute("for")));
  }

  public WebElement button(String text) {
    return visible(By.xpath("//button[normalize-space(.)=" + quote(text) + "]"));
  }

  static String quote(String text) {
    return text.contains("'") ? "\"" + text + "\"" : "'" + text + "'";
  }

  /** Waits until the page's script has drawn it (no "Loading…" left in main). */
  public Browser settled() {
    until(
        d -> (Boolean)
            ((JavascriptExecutor) d)
                .executeScript(
                    "const m = document.getElementById('main');"
                        + " return document.readyState === 'complete' && (!m || !m.querySelector('.loading'));"));
    return this;
  }

  /**
   * axe-core's WCAG 2.1 A and AA rules on the page as it is; returns the serious and critical
   * violations (id, impact and the first offending element).
   */
  public List<String> seriousAccessibilityViolations() {
    try {
      script(Files.readString(AXE));
    } catch (IOException e) {
      throw new UncheckedIOException("axe-core missing: ./engram test installs console-test/", e);
    }
    Object result = ((JavascriptExecutor) driver)
        .executeAsyncScript("const done = arguments[arguments.length - 1];"
            + "axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a',"
            + " 'wcag21aa']}}).then(r => done(JSON.stringify(r.violations)), e => done('E' + e));");
    String text = String.valueOf(result);
    if (text.startsWith("E")) {
      throw new AssertionError("axe failed: " + text);
    }
    List<String> serious = new ArrayList<>();
    try {
      for (JsonNode violation : JSON.readTree(text)) {
        String impact = violation.path("impact").asText();
        if (impact.equals("serious") || impact.equals("critical")) {
          serious.add(violation.path("id").asText() + " (" + impact + "): "
              + violation.path("nodes").path(0).path("html").asText());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return serious;
  }

  /** The browser console's errors since the last call (CSP refusals, script errors, failed loads). */
  public List<String> consoleErrors() {
    return driver.manage().logs().get(org.openqa.selenium.logging.LogType.BROWSER).getAll().stream()
        .filter(e -> e.getLevel().intValue() >= java.util.logging.Level.SEVERE.intValue())
        .map(e -> e.getMessage())
        .toList();
  }

  /** The whole page (the window made as tall as the page for the picture, then put back). */
  public void screenshot(Path file) {
    org.openqa.selenium.Dimension size = driver.manage().window().getSize();
    long height = ((Number) script("return document.documentElement.scrollHeight")).longValue();
    driver.manage().window().setSize(new org.openqa.selenium.Dimension(size.getWidth(), (int)
        Math.min(Math.max(height + 120, size.getHeight()), 6000)));
    try {
      Files.createDirectories(file.getParent());
      Files.write(file, driver.getScreenshotAs(OutputType.BYTES));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      driver.manage().window().setSize(size);
    }
  }

  @Override
  public void close() {
    driver.quit();
    try (var files = Files.walk(profile)) {
      files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    } catch (IOException ignored) {
      // a temporary profile left behind is harmless
    }
  }
}
