package io.engram.network;

import io.engram.platform.http.ApiException;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The identifiers of each cloud, as its consoles print them, and the regions Engram peers in.
 * A request names its provider; every field is checked against that provider's format.
 */
enum CloudIds {
  AWS(
      Pattern.compile("vpc-([0-9a-f]{8}|[0-9a-f]{17})"),
      Pattern.compile("[0-9]{12}"),
      Pattern.compile("subnet-([0-9a-f]{8}|[0-9a-f]{17})"),
      Pattern.compile("sg-([0-9a-f]{8}|[0-9a-f]{17})"),
      Set.of(
          "us-east-1",
          "us-east-2",
          "us-west-1",
          "us-west-2",
          "ca-central-1",
          "sa-east-1",
          "eu-west-1",
          "eu-west-2",
          "eu-west-3",
          "eu-central-1",
          "eu-central-2",
          "eu-north-1",
          "eu-south-1",
          "ap-south-1",
          "ap-southeast-1",
          "ap-southeast-2",
          "ap-northeast-1",
          "ap-northeast-2",
          "ap-northeast-3",
          "ap-east-1",
          "me-south-1",
          "af-south-1"),
      "vpc-0a1b2c3d4e5f60718",
      "123456789012 (12 digits)",
      "subnet-0a1b2c3d4e5f60718",
      "sg-0a1b2c3d4e5f60718"),
  GCP(
      Pattern.compile("[a-z]([-a-z0-9]{0,61}[a-z0-9])?"),
      Pattern.compile("[a-z][-a-z0-9]{4,28}[a-z0-9]"),
      Pattern.compile("[a-z]([-a-z0-9]{0,61}[a-z0-9])?"),
      Pattern.compile("[a-z]([-a-z0-9]{0,61}[a-z0-9])?"),
      Set.of(
          "us-central1",
          "us-east1",
          "us-east4",
          "us-east5",
          "us-west1",
          "us-west2",
          "us-west4",
          "northamerica-northeast1",
          "southamerica-east1",
          "europe-west1",
          "europe-west2",
          "europe-west3",
          "europe-west4",
          "europe-west6",
          "europe-north1",
          "asia-east1",
          "asia-northeast1",
          "asia-south1",
          "asia-southeast1",
          "australia-southeast1"),
      "a VPC network name such as prod-network",
      "a project id such as acme-prod-123",
      "a subnetwork name such as prod-subnet",
      "a network tag such as engram-clients"),
  AZURE(
      Pattern.compile(
          "/subscriptions/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
              + "/resourceGroups/[-\\w._()]{1,90}/providers/Microsoft\\.Network/virtualNetworks/"
              + "[A-Za-z0-9][-\\w.]{0,62}[\\w]",
          Pattern.CASE_INSENSITIVE),
      Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
      Pattern.compile("[A-Za-z0-9][-\\w.]{0,78}[\\w]|[A-Za-z0-9]"),
      Pattern.compile("[A-Za-z0-9][-\\w.]{0,78}[\\w]|[A-Za-z0-9]"),
      Set.of(
          "eastus",
          "eastus2",
          "westus",
          "westus2",
          "westus3",
          "centralus",
          "northcentralus",
          "southcentralus",
          "canadacentral",
          "brazilsouth",
          "northeurope",
          "westeurope",
          "uksouth",
          "francecentral",
          "germanywestcentral",
          "swedencentral",
          "switzerlandnorth",
          "japaneast",
          "koreacentral",
          "southeastasia",
          "eastasia",
          "australiaeast",
          "centralindia"),
      "/subscriptions/<subscription id>/resourceGroups/<group>/providers/Microsoft.Network/"
          + "virtualNetworks/<name>",
      "a subscription id (a UUID)",
      "a subnet name",
      "a network security group name");

  private final Pattern vpc;
  private final Pattern account;
  private final Pattern subnet;
  private final Pattern securityGroup;
  private final Set<String> regions;
  private final String vpcExample;
  private final String accountExample;
  private final String subnetExample;
  private final String securityGroupExample;

  CloudIds(
      Pattern vpc,
      Pattern account,
      Pattern subnet,
      Pattern securityGroup,
      Set<String> regions,
      String vpcExample,
      String accountExample,
      String subnetExample,
      String securityGroupExample) {
    this.vpc = vpc;
    this.account = account;
    this.subnet = subnet;
    this.securityGroup = securityGroup;
    this.regions = regions;
    this.vpcExample = vpcExample;
    this.accountExample = accountExample;
    this.subnetExample = subnetExample;
    this.securityGroupExample = securityGroupExample;
  }

  String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  static CloudIds of(String provider, String param) {
    for (CloudIds cloud : values()) {
      if (cloud.wireName().equals(provider)) {
        return cloud;
      }
    }
    throw ApiException.badRequest(param, "'" + param + "' must be one of aws, gcp, azure");
  }

  /** The provider a VPC id belongs to, for a private endpoint that does not name one. */
  static CloudIds ofVpc(String vpcId) {
    for (CloudIds cloud : values()) {
      if (cloud.vpc.matcher(vpcId).matches()) {
        return cloud;
      }
    }
    throw ApiException.badRequest(
        "vpc_id",
        "'vpc_id' is not a VPC id of aws (vpc-…), gcp (a network name) or azure (a virtual "
            + "network resource id)");
  }

  void vpc(String value) {
    require(vpc, value, "vpc_id", vpcExample);
  }

  void account(String value) {
    require(account, value, "account_id", accountExample);
  }

  void region(String value) {
    if (!regions.contains(value)) {
      throw ApiException.badRequest(
          "region",
          "'region' must be a " + wireName() + " region Engram peers in: "
              + String.join(", ", regions.stream().sorted().toList()));
    }
  }

  void subnets(List<String> values) {
    each(subnet, values, "subnet_ids", subnetExample);
  }

  void securityGroups(List<String> values) {
    each(securityGroup, values, "security_group_ids", securityGroupExample);
  }

  private void each(Pattern pattern, List<String> values, String field, String example) {
    for (int i = 0; i < values.size(); i++) {
      require(pattern, values.get(i), field + "[" + i + "]", example);
    }
  }

  private void require(Pattern pattern, String value, String param, String example) {
    if (!pattern.matcher(value).matches()) {
      throw ApiException.badRequest(
          param,
          "'" + param + "' is not a " + wireName() + " id of that kind: expected " + example);
    }
  }
}
