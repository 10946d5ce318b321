// Network: custom domains with their verification record, certificates, the IP allowlist, the
// outbound firewall, VPC peerings and private endpoints.
import { get, send } from '../api.js';
import { h, fill, table, when } from '../dom.js';
import { field, formError, notify, onAction, onSubmit } from '../forms.js';
import { collection, at } from '../collection.js';

export async function render(main, context) {
  const org = `/v1/organizations/${encodeURIComponent(context.orgId)}`;
  const sections = ['domains', 'certificates', 'allowlist', 'firewall', 'peerings', 'endpoints']
    .map((id) => h('section', { 'aria-labelledby': `${id}-title` }));
  main.append(...sections);
  const [domains, certificates, allowlist, firewall, peerings, endpoints] = sections;
  await Promise.all([
    drawDomains(domains, org), drawCertificates(certificates, org), drawAllowlist(allowlist, org),
    drawFirewall(firewall, org), drawPeerings(peerings, org), drawEndpoints(endpoints, org),
  ]);
}

function drawDomains(section, org) {
  return collection(section, {
    title: 'Custom domains', id: 'domains-title', path: `${org}/domain`, noun: 'domain',
    help: 'Publish the TXT record shown, then verify: the domain serves this organization once verified.',
    columns: [['Domain', (d) => d.domain], ['Status', (d) => d.status],
      ['Verification record', (d) => h('code', {}, `${d.verification.name} TXT "${d.verification.value}"`)],
      ['Verified', (d) => at(d.verified_at)]],
    form: () => {
      const domain = field({ label: 'Domain', name: 'domain', placeholder: 'api.example.com' });
      return { nodes: [domain], body: () => ({ domain: domain.input.value.trim() }) };
    },
    createLabel: 'Add domain',
    name: (d) => d.domain,
    remove: { label: 'Remove', question: (d) => `Stop serving ${d.domain}?` },
    actions: (d, redraw) => {
      if (d.status !== 'pending_verification' && d.status !== 'failed') return [];
      const verify = h('button', { type: 'button', class: 'secondary' }, 'Verify now');
      onAction(verify, async () => {
        const checked = await send('POST', `${org}/domain/${encodeURIComponent(d.id)}/verify`, {});
        notify(`${checked.domain}: ${checked.status}`, checked.status === 'failed' ? 'fail' : 'ok');
        await redraw();
      });
      return [verify];
    },
  });
}

function drawCertificates(section, org) {
  return collection(section, {
    title: 'Certificates', id: 'certificates-title', path: `${org}/ssl`, noun: 'certificate',
    help: 'Served by SNI for your verified domains; the private key is stored sealed and never shown.',
    columns: [['Subject', (c) => c.subject], ['Names', (c) => c.names.join(', ')], ['Key', (c) => c.key_type],
      ['Expires', (c) => `${when(c.not_after)} (${c.expires_in_days} days)`]],
    form: () => {
      const certificate = field({ label: 'Certificate (PEM, then intermediates)', name: 'certificate', kind: 'textarea' });
      const key = field({ label: 'Private key (PEM)', name: 'private_key', kind: 'textarea' });
      const bundle = field({ label: 'CA bundle (PEM)', name: 'ca_bundle', kind: 'textarea' });
      return {
        nodes: [certificate, key, bundle],
        body() {
          const form = new FormData();
          form.append('certificate', new Blob([certificate.input.value]), 'certificate.pem');
          form.append('private_key', new Blob([key.input.value]), 'key.pem');
          form.append('ca_bundle', new Blob([bundle.input.value]), 'ca.pem');
          return form;
        },
      };
    },
    createLabel: 'Upload certificate',
    name: (c) => c.subject,
    remove: { label: 'Remove', question: (c) => `Remove the certificate of ${c.subject}? Its domains fall back to the server's.` },
  });
}

async function drawAllowlist(section, org) {
  const list = await get(`${org}/allowlist`);
  const ranges = field({ label: 'Allowed ranges: one per line, a CIDR then an optional description', name: 'ip_ranges', kind: 'textarea',
    value: list.ip_ranges.map((r) => `${r.cidr}${r.description ? ` ${r.description}` : ''}`).join('\n') });
  const form = h('form', { 'aria-labelledby': 'allowlist-title', novalidate: true }, formError(), ranges,
    h('button', { type: 'submit' }, 'Save allowlist'));
  onSubmit(form, async () => {
    const entries = ranges.input.value.split('\n').map((l) => l.trim()).filter(Boolean).map((l) => {
      const [cidr, ...rest] = l.split(/\s+/);
      return rest.length ? { cidr, description: rest.join(' ') } : { cidr };
    });
    const saved = await send('POST', `${org}/allowlist`, { ip_ranges: entries });
    notify(saved.allows_all ? 'Every address may call.' : `${saved.ip_ranges.length} ranges allowed.`);
  });
  fill(section, h('h2', { id: 'allowlist-title' }, 'IP allowlist'),
    h('p', { class: 'help' }, list.allows_all ? 'Empty: every address may call. Careful: a list without your own address locks you out.' : 'Only these addresses may call.'),
    form);
}

async function drawFirewall(section, org) {
  const fw = await get(`${org}/firewall`);
  const rules = field({ label: 'Outbound rules, first match wins: one per line as "allow|deny destination port"', name: 'outbound_rules', kind: 'textarea',
    value: fw.outbound_rules.map((r) => `${r.action} ${r.destination} ${r.port}`).join('\n') });
  const form = h('form', { 'aria-labelledby': 'firewall-title', novalidate: true }, formError(), rules,
    h('button', { type: 'submit' }, 'Save rules'));
  onSubmit(form, async () => {
    const parsed = rules.input.value.split('\n').map((l) => l.trim()).filter(Boolean).map((l) => {
      const [action, destination, port = '*'] = l.split(/\s+/);
      return { action, destination, port: port === '*' ? '*' : Number(port), protocol: 'tcp' };
    });
    await send('POST', `${org}/firewall`, { outbound_rules: parsed });
    notify(`${parsed.length} outbound rules saved.`);
  });
  fill(section, h('h2', { id: 'firewall-title' }, 'Outbound firewall'),
    h('p', { class: 'help' }, `Where the gateway, webhooks and bridges may connect. No rule matching: ${fw.default_action}.`), form);
}

function drawPeerings(section, org) {
  return collection(section, {
    title: 'VPC peering', id: 'peerings-title', path: `${org}/vpc-peering`, noun: 'peering',
    columns: [['Provider', (p) => p.provider], ['VPC', (p) => p.vpc_id], ['CIDR', (p) => p.cidr || '—'], ['Status', (p) => p.status]],
    form: () => {
      const provider = field({ label: 'Provider', name: 'provider', kind: 'select', options: ['aws', 'gcp', 'azure'].map((v) => ({ value: v })) });
      const vpc = field({ label: 'VPC ID', name: 'vpc_id' });
      const region = field({ label: 'Region', name: 'region' });
      const cidr = field({ label: 'CIDR', name: 'cidr' });
      const account = field({ label: 'Account ID', name: 'account_id' });
      return {
        nodes: [h('div', { class: 'row' }, provider, vpc, region, cidr, account)],
        body: () => ({ provider: provider.input.value, vpc_id: vpc.input.value.trim(), region: region.input.value.trim(),
          cidr: cidr.input.value.trim(), account_id: account.input.value.trim() }),
      };
    },
    createLabel: 'Request peering',
    name: (p) => p.vpc_id,
    remove: { label: 'Delete', done: 'Deleted', question: (p) => `Tear down the peering with ${p.vpc_id}?` },
  });
}

function drawEndpoints(section, org) {
  return collection(section, {
    title: 'Private endpoints', id: 'endpoints-title', path: `${org}/private-endpoint`, noun: 'endpoint',
    columns: [['Provider', (p) => p.provider], ['VPC', (p) => p.vpc_id], ['Status', (p) => p.status]],
    form: () => {
      const vpc = field({ label: 'VPC ID', name: 'vpc_id' });
      const subnets = field({ label: 'Subnet IDs (one per line)', name: 'subnet_ids', kind: 'list' });
      const groups = field({ label: 'Security group IDs (one per line)', name: 'security_group_ids', kind: 'list' });
      const lines = (f) => f.input.value.split('\n').map((s) => s.trim()).filter(Boolean);
      return {
        nodes: [vpc, h('div', { class: 'row' }, subnets, groups)],
        body: () => ({ vpc_id: vpc.input.value.trim(), subnet_ids: lines(subnets), security_group_ids: lines(groups) }),
      };
    },
    createLabel: 'Request endpoint',
    name: (p) => p.vpc_id,
    remove: { label: 'Delete', done: 'Deleted', question: (p) => `Tear down the endpoint in ${p.vpc_id}?` },
  });
}
