package io.engram.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.BesideTheRest;
import io.engram.support.Browser;
import io.engram.support.Http;
import io.engram.support.ServerTest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.WindowType;
import org.openqa.selenium.chromium.ChromiumNetworkConditions;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.support.ui.Select;

/**
 * The console end to end in headless Chromium: a person signs in, creates an assistant, configures
 * a capability (the server's validation shown at the field), meets another tab's save, searches
 * memory and opens a result, approves a candidate, revokes a key and sees its next use refused,
 * loses the session and comes back to the page, signs out; and every page passes axe-core's WCAG
 * A/AA rules with no serious violation. Screenshots of each page go to target/console-screenshots
 * (docs/console/ keeps the committed ones: docs/console.md says how to refresh them).
 */
@BesideTheRest
class ConsoleBrowserTest extends ServerTest {
  static final String PASSWORD = "a long passphrase for the console";
  static final String PAYLOAD =
      "<img src=x onerror=\"window.__xss=1\"><script>window.__xss=2</script>";
  static final Path SCREENSHOTS = Path.of("target/console-screenshots");

  static Browser browser;
  static String org;
  static String token;

  @BeforeAll
  static void openBrowser() {
    org = server.createOrganization("growth");
    server.createUser(org, "owner@console.example", "owner", PASSWORD);
    token = server.tokenWithEveryScope(org);
    remember(token, "The Q3 report is due on Friday, says the finance team");
    remember(token, PAYLOAD);
    browser = Browser.open("http://127.0.0.1:" + server.engram.port());
  }

  @AfterAll
  static void closeBrowser() {
    if (browser != null) {
      browser.close();
    }
  }

  @BeforeEach
  void signedOut() {
    browser.go("/");
    browser.driver.manage().deleteAllCookies();
    // Away from the page: a request it still had in flight (signed in a moment ago) is dropped,
    // not answered 401 into the next test's console.
    browser.driver.get("about:blank");
    browser.consoleErrors(); // what earlier tests left in the browser's console is theirs
  }

  static JsonNode remember(String secret, String text) {
    Http.Response answer = http.post("/v1/memory")
        .bearer(secret)
        .json("{\"text\":" + io.engram.platform.json.Json.write(text) + "}")
        .send();
    assertThat(answer.status()).as(answer.text()).isEqualTo(201);
    return answer.json();
  }

  /** Signs in with the keyboard alone: type, Tab, type, Enter. */
  static void signIn(String email) {
    browser.field("Email").sendKeys(email, Keys.TAB, PASSWORD, Keys.ENTER);
  }

  @Test
  void signInCreateAnAssistantAndConfigureACapabilityPastAValidationError() {
    browser.go("/console/assistants");
    browser.until(d -> browser.path().startsWith("/?next="));
    // The organization choice shows only when a person has several (hidden means hidden).
    assertThat(browser.driver.findElement(By.id("organization-field")).isDisplayed())
        .isFalse();
    signIn("owner@console.example");
    browser.until(d -> browser.path().equals("/console/assistants"));
    browser.text(By.id("who"), "owner");

    browser.field("Name").sendKeys("Finance desk");
    int before = assistants();
    // A double click creates one assistant: the button is off until the server answers.
    new Actions(browser.driver).doubleClick(browser.button("Create assistant")).perform();
    browser.until(d -> browser.path().startsWith("/console/assistants/asst_"));
    assertThat(assistants()).isEqualTo(before + 1);

    browser.text(By.tagName("h1"), "Finance desk");
    browser.field("Access Organization Analytics").click();
    // Config fields are labelled in words, not by their keys.
    assertThat(browser
            .driver
            .findElement(By.cssSelector(
                "[data-field='capabilityConfigs.access_org_analytics.dataRetention'] label"))
            .getText())
        .startsWith("Data retention");
    WebElement days = browser.driver.findElement(By.cssSelector(
        "[data-field='capabilityConfigs.access_org_analytics.dataRetention'] input"));
    days.sendKeys("0");
    browser.button("Save capabilities").click();
    WebElement error = browser.text(
        By.cssSelector(
            "[data-field='capabilityConfigs.access_org_analytics.dataRetention'] .error"),
        "between 1 and 730");
    assertThat(error.isDisplayed()).isTrue();
    assertThat(browser
            .driver
            .findElement(By.cssSelector(
                "[data-field='capabilityConfigs.access_org_analytics.allowedMetrics'] .error"))
            .getText())
        .contains("allowedMetrics");

    days.clear();
    days.sendKeys("90");
    browser.field("members").click();
    browser.button("Save capabilities").click();
    browser.text(By.id("banner"), "Saved: the capabilities are at version 2");
    browser.text(By.cssSelector("ol.history"), "added: access_org_analytics");
  }

  @Test
  void aSaveInAnotherTabIsShownAsAConflictAndKeepsTheseEdits() {
    browser.go("/");
    signIn("owner@console.example");
    browser.until(d -> browser.path().equals("/console/assistants"));
    String id = createAssistant("Two tabs");
    String first = browser.driver.getWindowHandle();
    browser.driver.switchTo().newWindow(WindowType.TAB);
    browser.go("/console/assistants/" + id).settled();
    browser.field("Summarize Organization Updates").click();
    browser.button("Save capabilities").click();
    browser.text(By.id("banner"), "version 2");
    browser.driver.close();
    browser.driver.switchTo().window(first);

    browser.field("Track Team Decisions").click();
    browser.button("Save capabilities").click();
    WebElement conflict = browser.text(By.cssSelector(".conflict"), "Someone else saved");
    assertThat(conflict.getText()).contains("version 2");
    assertThat(browser.field("Track Team Decisions").isSelected()).isTrue();
    browser.button("Load the saved version (discards your changes)").click();
    browser.until(d -> browser.field("Summarize Organization Updates").isSelected());
  }

  @Test
  void searchMemoryOpenAResultAndSeeMarkupAsText() {
    browser.go("/console/memory");
    signIn("owner@console.example");
    browser.until(d -> browser.path().equals("/console/memory"));
    browser.field("Question").sendKeys("when is the quarterly report due", Keys.ENTER);
    WebElement hit = browser.text(By.cssSelector("ol.results a"), "Q3 report");
    assertThat(browser
            .driver
            .findElement(By.cssSelector("ol.results details summary"))
            .getText())
        .isEqualTo("Why this score");
    hit.click();
    browser.text(By.cssSelector("blockquote.memory-text"), "due on Friday");
    browser.text(By.cssSelector("#provenance-title + p"), "Came from encode");

    // A memory that is markup is shown as its characters, and none of it runs.
    browser.go("/console/memory").settled();
    WebElement shown = browser.text(By.cssSelector("table a"), "onerror");
    assertThat(shown.getText()).isEqualTo(PAYLOAD);
    shown.click();
    assertThat(
            browser.text(By.cssSelector("blockquote.memory-text"), "<script>").getText())
        .isEqualTo(PAYLOAD);
    assertThat(browser.script("return window.__xss === undefined")).isEqualTo(true);
    assertThat(browser.driver.findElements(By.cssSelector("main img, main script")))
        .isEmpty();
  }

  @Test
  void approveACandidateFromTheQueue() {
    String reviewed = server.createOrganization("growth");
    server.createUser(reviewed, "reviewer@console.example", "admin", PASSWORD);
    String secret = server.tokenWithEveryScope(reviewed);
    Http.Response mode = http.patch("/api/memory/settings")
        .bearer(server.apiKey(reviewed, 1000, "admin"))
        .json("{\"writeMode\":\"candidate_review\"}")
        .send();
    assertThat(mode.status()).as(mode.text()).isEqualTo(200);
    String id = remember(secret, "Dana leads the Berlin office").get("id").asText();

    browser.go("/console/memory/candidates");
    signIn("reviewer@console.example");
    browser.text(By.cssSelector("table"), "Dana leads the Berlin office");
    browser.button("Approve").click();
    browser.text(By.id("banner"), "Approved");
    browser.until(
        d -> d.findElements(By.xpath("//td[contains(., 'Berlin office')]")).isEmpty());
    assertThat(http.get("/v1/memory/" + id)
            .bearer(secret)
            .send()
            .json()
            .get("state")
            .asText())
        .isEqualTo("durable");
  }

  @Test
  void aKeyCreatedHereIsShownOnceAndRefusedOnceRevoked() {
    browser.go("/console/settings");
    signIn("owner@console.example");
    browser.until(d -> browser.path().equals("/console/settings"));
    WebElement keys = browser.visible(By.cssSelector("section[aria-labelledby='keys-title']"));
    keys.findElement(By.xpath(".//label[normalize-space(.)='Name']/following-sibling::input"))
        .sendKeys("Reporting job");
    browser.button("Create key").click();
    String secret = browser.visible(By.id("new-secret")).getAttribute("value");
    assertThat(secret).startsWith("engk_");
    assertThat(http.get("/v1/models").bearer(secret).send().status()).isEqualTo(200);

    WebElement row =
        browser.text(By.xpath("//tr[td[normalize-space(.)='Reporting job']]"), "inference");
    row.findElement(By.xpath(".//button[normalize-space(.)='Revoke']")).click();
    browser.visible(By.cssSelector("dialog[open] button.danger")).click();
    browser.text(By.id("banner"), "Revoked Reporting job");
    assertThat(http.get("/v1/models").bearer(secret).send().status()).isEqualTo(401);
    // Reloaded, the page shows hints only: the secret is nowhere.
    browser.go("/console/settings").settled();
    browser.text(By.cssSelector("section[aria-labelledby='keys-title'] table"), "revoked");
    assertThat(browser.driver.getPageSource()).doesNotContain(secret);
  }

  @Test
  void anEndedSessionLeadsBackToThePageAfterSigningInAndSignOutEndsIt() {
    browser.go("/");
    signIn("owner@console.example");
    browser.until(d -> browser.path().equals("/console/assistants"));
    browser.driver.manage().deleteCookieNamed("engram_session");
    browser.go("/console/reflection");
    browser.until(d -> browser.path().startsWith("/?next=%2Fconsole%2Freflection"));
    browser.text(By.id("notice"), "Your session ended");
    signIn("owner@console.example");
    browser.until(d -> browser.path().equals("/console/reflection"));

    browser.button("Sign out").click();
    browser.until(d -> browser.path().startsWith("/?reason=signed-out"));
    browser.go("/console/usage");
    browser.until(d -> browser.path().startsWith("/?next="));
  }

  @Test
  void theUsagePageShowsEachBudgetWithItsSpendAndWhatRemains() {
    Http.Response created = server.asOperator(http.post("/v1/organizations/" + org + "/budgets")
        .json("{\"scope\":\"organization\",\"period\":\"month\",\"limit\":42.5}"));
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    try {
      browser.go("/console/usage");
      signIn("owner@console.example");
      WebElement budgets =
          browser.text(By.xpath("//table[caption='Budgets in US dollars, this period']"), "$42.50");
      assertThat(budgets.getText()).contains("organization", "month", "$0.000000");
    } finally {
      server.asOperator(http.delete(
          "/v1/organizations/" + org + "/budgets/" + created.json().path("id").asText()));
    }
  }

  @Test
  void aLostConnectionSaysSoAndKeepsWhatWasTyped() {
    browser.go("/console/memory");
    signIn("owner@console.example");
    WebElement text = browser.field("What to remember");
    text.sendKeys("Typed while the network was down");
    browser.driver.setNetworkConditions(offline());
    try {
      browser.button("Remember").click();
      browser.text(By.cssSelector("form .form-error"), "could not be reached");
      assertThat(text.getAttribute("value")).isEqualTo("Typed while the network was down");
    } finally {
      browser.driver.deleteNetworkConditions();
    }
    browser.button("Remember").click();
    browser.text(By.cssSelector("blockquote.memory-text"), "Typed while the network was down");
  }

  @Test
  void aGuardrailAddedOnItsPageHoldsAndATextTriedShowsWhatItWouldDo() {
    browser.go("/console/guardrails");
    signIn("owner@console.example");
    browser.field("Name").sendKeys("Mask emails in the console");
    new org.openqa.selenium.support.ui.Select(browser.field("Action")).selectByValue("redact");
    browser.field("Entities (one a line; none: all)").sendKeys("email");
    browser.button("Add guardrail").click();
    browser.text(By.cssSelector("main table"), "Mask emails in the console");
    // Stored and in force: an API client's view of the organization's guardrails says so.
    String key = server.apiKey(org, 1000, "admin");
    assertThat(http.get("/v1/organizations/" + org + "/guardrails")
            .bearer(key)
            .send()
            .json()
            .at("/data/0/check/entities/0")
            .asText())
        .isEqualTo("email");
    browser.field("Text").sendKeys("Write to ana@example.com today");
    browser.button("Try").click();
    browser.text(
        By.xpath("//table[caption='What would fire, by phase']"), "Write to [EMAIL_1] today");
    browser.button("Turn off").click();
    browser.text(By.cssSelector("main table"), "no");
  }

  @Test
  void theConfigurationShowsTheServersBoundAtTheFieldThenSavesAndIsEnforced() {
    browser.go("/console/settings/configuration");
    signIn("owner@console.example");
    WebElement tokens = browser.field("quotas.max_tokens_per_request");
    tokens.clear();
    tokens.sendKeys("999999");
    browser.button("Save configuration").click();
    browser.text(
        By.cssSelector("[data-field='quotas.max_tokens_per_request'] .error"), "allowed from 1 to");
    tokens = browser.field("quotas.max_tokens_per_request");
    tokens.clear();
    tokens.sendKeys("512");
    browser.button("Save configuration").click();
    browser.text(By.id("banner"), "Configuration saved");
    browser.visible(By.xpath("//button[normalize-space(.)='Reset quotas.max_tokens_per_request']"));
    // Stored and in force: the organization's configuration says so to an API client too.
    String key = server.apiKey(org, 1000, "admin");
    assertThat(http.get("/v1/organizations/" + org + "/config")
            .bearer(key)
            .send()
            .json()
            .at("/quotas/max_tokens_per_request")
            .asInt())
        .isEqualTo(512);
    browser.button("Reset quotas.max_tokens_per_request").click();
    browser.text(By.id("banner"), "back to its default");
    // The server's own settings (ports, GPU) are folded away from the owner's: listed apart, as
    // the operator's, not among the variables the owner sets.
    WebElement serverSettings = browser.visible(By.cssSelector("details.server-settings"));
    assertThat(serverSettings.getAttribute("open")).isNull();
    assertThat(browser
            .driver
            .findElement(By.xpath("//table[caption='Variables in force']"))
            .getText())
        .doesNotContain("GPU_MEMORY_FRACTION")
        .doesNotContain("API_PORT");
  }

  @Test
  void aMemberIsNotOfferedWhatTheRoleMayNotDo() {
    server.createUser(org, "member@console.example", "member", PASSWORD);
    String key = server.apiKey(org, 1000, "admin");
    String shared = http.post("/api/assistants")
        .bearer(key)
        .json("{\"name\":\"Shared desk\",\"type\":\"org_shared\"}")
        .send()
        .json()
        .at("/assistant/_id")
        .asText();
    browser.go("/console/assistants/" + shared);
    signIn("member@console.example");
    browser.text(By.tagName("h1"), "Shared desk");
    browser.text(
        By.cssSelector("#capabilities-title + p + p.help, section p.help"), "an owner or admin");
    assertThat(browser.driver.findElements(
            By.xpath("//button[normalize-space(.)='Save capabilities']")))
        .isEmpty();
    assertThat(browser.driver.findElements(
            By.xpath("//button[normalize-space(.)='Delete assistant']")))
        .isEmpty();
    assertThat(browser.field("Search Organization Knowledge").isEnabled()).isFalse();

    browser.go("/console/memory").settled();
    browser.visible(By.cssSelector("main h1"));
    assertThat(browser.driver.findElements(By.id("remember-title"))).isEmpty();
    browser.go("/console/settings").settled();
    browser.text(By.cssSelector("main p.help"), "owners and admins");
    assertThat(browser.driver.findElements(By.id("keys-title"))).isEmpty();
    assertThat(browser.driver.findElements(By.cssSelector("nav.tabs"))).isEmpty();
  }

  @Test
  void aPersonOfTwoOrganizationsChoosesOneThenSwitches() {
    String second = server.createOrganization("seed");
    server.createUser(org, "kim@console.example", "admin", PASSWORD);
    server.createUser(second, "kim@console.example", "member", PASSWORD);
    browser.go("/console/memory");
    signIn("kim@console.example");
    WebElement choice = browser.field("Organization");
    browser.text(By.id("signin-error"), "Choose the organization");
    new Select(choice).selectByValue(second);
    browser.button("Sign in").click();
    browser.until(d -> browser.path().equals("/console/memory"));
    WebElement switcher = browser.visible(By.id("organization-switcher"));
    assertThat(new Select(switcher).getFirstSelectedOption().getText()).contains("(member)");
    new Select(switcher).selectByValue(org);
    browser.button("Switch").click();
    browser.until(d -> new Select(d.findElement(By.id("organization-switcher")))
        .getFirstSelectedOption()
        .getText()
        .contains("(admin)"));
    assertThat(browser.path()).isEqualTo("/console/memory");
    browser.text(By.cssSelector("#who .role"), "admin");
  }

  /** A provider and a model over it, so the models page is checked with what it lists. */
  private void routedModel() {
    String key = server.apiKey(org, 1000, "admin");
    String provider = server
        .http
        .post("/v1/organizations/" + org + "/providers")
        .bearer(key)
        .json("{\"name\":\"local\",\"kind\":\"openai\",\"base_url\":\"http://127.0.0.1:1/v1\","
            + "\"api_key\":\"sk-local\"}")
        .send()
        .json()
        .path("id")
        .asText();
    assertThat(server
            .http
            .post("/v1/organizations/" + org + "/models")
            .bearer(key)
            .json("{\"id\":\"team-chat\",\"pricing\":{\"input_per_million\":1},\"deployments\":"
                + "[{\"provider_id\":\"" + provider + "\",\"model\":\"llama\"}]}")
            .send()
            .status())
        .isEqualTo(201);
  }

  @Test
  void everyPageHasNoSeriousAccessibilityViolation() {
    browser.go("/").settled();
    List<String> found = new ArrayList<>(axe("sign-in"));
    signIn("owner@console.example");
    browser.until(d -> browser.path().equals("/console/assistants"));
    String id = createAssistant("Accessible");
    String memory =
        remember(token, "Accessibility matters to everyone").get("id").asText();
    routedModel();
    Map<String, String> pages = new java.util.LinkedHashMap<>();
    pages.put("assistants", "/console/assistants");
    pages.put("assistant", "/console/assistants/" + id);
    pages.put("memory", "/console/memory");
    pages.put("memory-detail", "/console/memory/m/" + memory);
    pages.put("candidates", "/console/memory/candidates");
    pages.put("events", "/console/memory/events");
    pages.put("reflection", "/console/reflection");
    pages.put("usage", "/console/usage");
    pages.put("requests", "/console/requests");
    pages.put("guardrails", "/console/guardrails");
    pages.put("settings", "/console/settings");
    pages.put("configuration", "/console/settings/configuration");
    pages.put("alerts", "/console/settings/alerts");
    pages.put("storage", "/console/settings/storage");
    pages.put("network", "/console/settings/network");
    pages.put("fine-tuning", "/console/settings/fine-tuning");
    pages.put("models", "/console/settings/models");
    for (var page : pages.entrySet()) {
      browser.go(page.getValue()).settled();
      browser.visible(By.cssSelector("main h1"));
      assertThat(browser.driver.findElements(By.cssSelector("main > h1 + p.error")))
          .as(page.getKey())
          .isEmpty();
      found.addAll(axe(page.getKey()));
    }
    assertThat(found).isEmpty();
  }

  /**
   * axe's serious violations on the page, and anything the browser's console reports as an error
   * there: a Content-Security-Policy refusal, a script error or a failed load.
   */
  private static List<String> axe(String page) {
    browser.screenshot(SCREENSHOTS.resolve(page + ".png"));
    List<String> found = new ArrayList<>(browser.seriousAccessibilityViolations().stream()
        .map(v -> page + ": " + v)
        .toList());
    browser.consoleErrors().forEach(e -> found.add(page + ": console: " + e));
    return found;
  }

  private static ChromiumNetworkConditions offline() {
    ChromiumNetworkConditions conditions = new ChromiumNetworkConditions();
    conditions.setOffline(true);
    return conditions;
  }

  private static String createAssistant(String name) {
    browser.go("/console/assistants").settled();
    browser.field("Name").sendKeys(name, Keys.ENTER);
    browser.until(d -> browser.path().startsWith("/console/assistants/asst_"));
    browser.text(By.tagName("h1"), name);
    browser.settled();
    browser.visible(By.cssSelector("ol.history, p.empty"));
    return browser.path().substring("/console/assistants/".length());
  }

  private static int assistants() {
    String key = server.apiKey(org, 1000, "admin");
    return http.get("/api/assistants?limit=200")
        .bearer(key)
        .send()
        .json()
        .get("assistants")
        .size();
  }
}
