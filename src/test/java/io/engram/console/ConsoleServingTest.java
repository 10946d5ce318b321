package io.engram.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import io.engram.support.ServerTest;
import org.junit.jupiter.api.Test;

/** The console's files over HTTP: pages, headers, caching, what is not served. */
class ConsoleServingTest extends ServerTest {

  @Test
  void theSignInPageIsAtTheRootWithAStrictContentSecurityPolicy() {
    Http.Response page = http.get("/").send();
    assertThat(page.status()).isEqualTo(200);
    assertThat(page.header("Content-Type")).startsWith("text/html");
    assertThat(page.text()).contains("<form id=\"signin\"").doesNotContain("<script>");
    String policy = page.header("Content-Security-Policy");
    assertThat(policy)
        .contains("default-src 'none'", "script-src 'self'", "frame-ancestors 'none'")
        .doesNotContain("unsafe-inline", "unsafe-eval");
    assertThat(page.header("X-Content-Type-Options")).isEqualTo("nosniff");
    assertThat(page.header("X-Frame-Options")).isEqualTo("DENY");
  }

  @Test
  void everyConsolePathAnswersThePageShellWhoseScriptDrawsThePage() {
    for (String path : new String[] {
      "/console",
      "/console/",
      "/console/assistants",
      "/console/assistants/asst_1",
      "/console/memory/m/mem_1",
      "/console/settings"
    }) {
      Http.Response page = http.get(path).send();
      assertThat(page.status()).as(path).isEqualTo(200);
      assertThat(page.text()).as(path).containsPattern("/console/[0-9a-f]{24}/assets/app.js");
      assertThat(page.header("Content-Security-Policy")).as(path).isNotNull();
    }
  }

  @Test
  void scriptsAndStylesAreServedWithTheirTypesAndRevalidatedByEtag() {
    Http.Response script = http.get("/console/assets/app.js").send();
    assertThat(script.status()).isEqualTo(200);
    assertThat(script.header("Content-Type")).startsWith("text/javascript");
    assertThat(script.header("Cache-Control")).isEqualTo("no-cache");
    String etag = script.header("ETag");
    assertThat(http.get("/console/assets/app.js")
            .header("If-None-Match", etag)
            .send()
            .status())
        .isEqualTo(304);
    assertThat(http.get("/console/vendor/uplot.js").send().status()).isEqualTo(200);
    // The page names a versioned copy, cached for good: the version changes with any file.
    String versioned = java.util.regex.Pattern.compile("/console/[0-9a-f]{24}/assets/app.js")
        .matcher(http.get("/console/assistants").send().text())
        .results()
        .findFirst()
        .orElseThrow()
        .group();
    Http.Response cached = http.get(versioned).send();
    assertThat(cached.status()).isEqualTo(200);
    assertThat(cached.header("Cache-Control")).isEqualTo("public, max-age=31536000, immutable");
    assertThat(cached.text()).isEqualTo(script.text());
    assertThat(http.get(versioned.replace("app.js", "pages/memory.js")).send().status())
        .isEqualTo(200);
    assertThat(http.get("/console/assets/console.css").send().header("Content-Type"))
        .startsWith("text/css");
  }

  @Test
  void onlyTheConsolesOwnFilesAreServed() {
    for (String path : new String[] {
      "/console/assets/missing.js",
      "/console/assets/../../openapi.yaml",
      "/console/assets/%2e%2e/%2e%2e/openapi.yaml",
      "/console/vendor/uPlot.esm.js",
      "/console/assets.txt"
    }) {
      Http.Response answer = http.get(path).send();
      assertThat(answer.status()).as(path).isIn(400, 404);
      assertThat(answer.text()).as(path).doesNotContain("capabilities:", "openapi:");
    }
    // A page shell is for reading: a form posted to a console path reaches no handler.
    assertThat(http.post("/console/assistants").json("{}").send().status()).isIn(404, 405);
  }

  @Test
  void theJavaScriptShippedStaysUnderItsBudget() {
    ConsoleFilter filter = new ConsoleFilter(ConsoleFilter.class.getClassLoader());
    // The budget: 150 kB gzipped, every script the console ships (uPlot included).
    assertThat(filter.scriptBytesGzipped()).isLessThan(150_000);
  }
}
