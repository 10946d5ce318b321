package io.engram.operations;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.ApiContract;
import io.engram.support.ApiContract.Exchange;
import org.junit.jupiter.api.Test;

/**
 * The checker every test's HTTP exchange goes through ({@link ApiContract}) refuses what drifts
 * from openapi.yaml: were it to accept everything, the whole suite's contract check would be empty.
 */
class ApiContractTest {
  private static final String JSON = "application/json";
  private static final String ORGANIZATION = """
      {"id":"org_1","object":"organization","name":"Acme","plan":"seed","tier":"seed","created_at":1,
       "limits":{"capability_count":7,"requests_per_minute":200,"concurrent_requests":5,"tokens_per_request":4096,
                 "tokens_per_hour":100000,"storage_gb":1}}""";

  @Test
  void aResponseAsDocumentedPasses() {
    assertThat(ApiContract.violations(
            new Exchange("GET", "/v1/organizations/org_1", null, null, 200, JSON, ORGANIZATION)))
        .isEmpty();
  }

  @Test
  void aResponseMissingARequiredFieldOrOfTheWrongTypeFails() {
    assertThat(
            ApiContract.violations(new Exchange("GET", "/v1/health", null, null, 200, JSON, "{}")))
        .singleElement()
        .asString()
        .contains("status");
    assertThat(ApiContract.violations(new Exchange(
            "GET",
            "/v1/organizations/org_1",
            null,
            null,
            200,
            JSON,
            ORGANIZATION.replace("\"name\":\"Acme\"", "\"name\":7"))))
        .isNotEmpty();
  }

  @Test
  void anUndocumentedSuccessStatusFails() {
    assertThat(ApiContract.violations(new Exchange("GET", "/v1/health", null, null, 204, JSON, "")))
        .singleElement()
        .asString()
        .contains("not documented");
  }

  @Test
  void anUndocumentedErrorMustStillBeInItsFamilysShape() {
    assertThat(
            ApiContract.violations(
                new Exchange(
                    "GET",
                    "/v1/health",
                    null,
                    null,
                    418,
                    JSON,
                    "{\"error\":{\"message\":\"m\",\"type\":\"invalid_request_error\",\"code\":\"c\",\"param\":null}}")))
        .isEmpty();
    assertThat(ApiContract.violations(new Exchange(
            "GET", "/api/assistants", null, null, 418, JSON, "{\"error\":{\"message\":\"m\"}}")))
        .isNotEmpty();
  }

  @Test
  void anAcceptedRequestMustMatchTheDocumentedBody() {
    assertThat(ApiContract.violations(new Exchange(
            "POST", "/v1/organizations", JSON, "{\"nom\":\"Acme\"}", 201, JSON, ORGANIZATION)))
        .isNotEmpty();
    assertThat(ApiContract.violations(new Exchange(
            "POST", "/v1/organizations", JSON, "{\"name\":\"Acme\"}", 201, JSON, ORGANIZATION)))
        .isEmpty();
  }

  @Test
  void anHtmlPageWhereJsonIsDocumentedFails() {
    assertThat(ApiContract.violations(new Exchange(
            "GET",
            "/v1/memory/mem_1",
            null,
            null,
            400,
            "text/html;charset=iso-8859-1",
            "<html></html>")))
        .isNotEmpty();
  }

  @Test
  void pathsTheDocumentDoesNotHaveAreLeftToTheRouteListTest() {
    assertThat(ApiContract.violations(
            new Exchange("GET", "/v1/probe/boom", null, null, 500, JSON, "{}")))
        .isEmpty();
  }
}
