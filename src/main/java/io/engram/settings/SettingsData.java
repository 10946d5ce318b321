package io.engram.settings;

import io.engram.store.OrganizationData;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The settings' part in snapshots: the organization's configuration and variables, and the
 * instance's variables. Kept to be read; a restore leaves them as they are, since they are the
 * organization's, shared by all its instances.
 */
public final class SettingsData implements OrganizationData {
  @Override
  public Map<String, String> tables() {
    Map<String, String> tables = new LinkedHashMap<>();
    tables.put("organization_config", "SELECT * FROM organization_config WHERE org_id = :org");
    tables.put(
        "organization_variables", "SELECT * FROM organization_variables WHERE org_id = :org");
    tables.put(
        "instance_variables", "SELECT * FROM instance_variables WHERE instance_id = :instance");
    return tables;
  }
}
