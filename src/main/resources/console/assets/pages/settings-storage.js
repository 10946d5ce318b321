// Instances and storage: the organization's instances (create, make default, delete, snapshot),
// storage in use against the plan's limits, and the retention policies.
import { get, send } from '../api.js';
import { h, fill, table, when } from '../dom.js';
import { field, formError, notify, onAction, onSubmit } from '../forms.js';
import { collection } from '../collection.js';

const GB = ['training_data_gb', 'embeddings_gb', 'conversation_history_gb', 'lora_adapters_gb', 'results_gb', 'data_gb'];

export async function render(main, context) {
  const org = `/v1/organizations/${encodeURIComponent(context.orgId)}`;
  const usage = h('section', { 'aria-labelledby': 'storage-title' });
  const instances = h('section', { 'aria-labelledby': 'instances-title' });
  const snapshots = h('section', { 'aria-live': 'polite' });
  const retention = h('section', { 'aria-labelledby': 'retention-title' });
  main.append(usage, instances, snapshots, retention);
  await Promise.all([drawUsage(usage, org), drawInstances(instances, org, snapshots), drawRetention(retention, org)]);
}

async function drawUsage(section, org) {
  const s = await get(`${org}/storage`);
  const meter = (label, value, max) => h('div', { class: 'field' },
    h('span', {}, `${label}: ${value} of ${max}`),
    h('meter', { min: 0, max, value, low: max * 0.8, high: max * 0.95, optimum: 0, 'aria-label': label }));
  const total = s.total_bytes / 1e9;
  fill(section, h('h2', { id: 'storage-title' }, 'Storage'),
    meter('Total (GB)', Number(total.toFixed(3)), s.limits.total_gb),
    meter('LoRA adapters', s.lora_adapters_count, s.limits.lora_adapters_count),
    table('Storage by data class, in GB', ['Class', 'Used (GB)'], GB.map((k) => [k.replace(/_gb$/, '').replaceAll('_', ' '), String(s[k])])));
}

async function drawInstances(section, org, snapshots) {
  await collection(section, {
    title: 'Instances', id: 'instances-title', path: `${org}/instances`, noun: 'instance',
    columns: [['Name', (i) => i.name + (i.default ? ' (default)' : '')], ['ID', (i) => h('code', {}, i.id)],
      ['Status', (i) => i.status + (i.restart_required ? ', restart required' : '')], ['Created', (i) => when(i.created_at)]],
    form: () => {
      const name = field({ label: 'Name', name: 'name', required: true });
      return { nodes: [name], body: () => ({ name: name.input.value.trim() }) };
    },
    name: (i) => i.name,
    remove: {
      label: 'Delete', done: 'Deleted', when: (i) => !i.default,
      question: (i) => `Delete the instance “${i.name}” and every file of its storage?`,
    },
    actions: (i, redraw) => {
      const list = h('button', { type: 'button', class: 'secondary' }, 'Snapshots');
      onAction(list, () => drawSnapshots(snapshots, i));
      const take = h('button', { type: 'button', class: 'secondary' }, 'Take snapshot');
      onAction(take, async () => {
        const snapshot = await send('POST', `/v1/nano/${encodeURIComponent(i.id)}/snapshot`, {});
        notify(`Snapshot ${snapshot.id}: ${snapshot.status}.`, snapshot.status === 'failed' ? 'fail' : 'ok');
        await drawSnapshots(snapshots, i);
      });
      const extra = [list, take];
      if (!i.default) {
        const makeDefault = h('button', { type: 'button', class: 'secondary' }, 'Make default');
        onAction(makeDefault, async () => {
          await send('PATCH', `${org}/instances/${encodeURIComponent(i.id)}`, { default: true });
          notify(`${i.name} is the default instance.`);
          await redraw();
        });
        extra.push(makeDefault);
      }
      return extra;
    },
  });
}

async function drawSnapshots(section, instance) {
  const page = await get(`/v1/nano/${encodeURIComponent(instance.id)}/snapshots`);
  fill(section, h('h2', {}, `Snapshots of ${instance.name}`),
    table('Snapshots, newest first', ['Taken', 'Kind', 'Status', 'Files', 'Bytes', 'Expires'],
      page.data.map((s) => [when(s.created_at), s.kind, s.status + (s.error ? `: ${s.error}` : ''),
        String(s.files ?? '—'), String(s.bytes ?? '—'), when(s.expires_at)]), 'No snapshots yet.'));
}

async function drawRetention(section, org) {
  const current = await get(`${org}/retention`);
  const policies = field({ label: 'Policies (JSON: a list of {type, max_age_days, keep_latest, max_size_gb, pattern, ...})',
    name: 'policies', kind: 'textarea', value: JSON.stringify(current.policies, null, 2) });
  policies.input.rows = 8;
  const form = h('form', { 'aria-labelledby': 'retention-title', novalidate: true }, formError(), policies,
    h('div', { class: 'toolbar' }, h('button', { type: 'submit' }, 'Save policies')));
  onSubmit(form, async () => {
    let parsed;
    try {
      parsed = JSON.parse(policies.input.value || '[]');
    } catch (e) {
      throw Object.assign(new Error(`Not JSON: ${e.message}`), { field: 'policies' });
    }
    await send('POST', `${org}/retention`, { policies: parsed });
    notify('Retention policies saved.');
  });
  const dry = h('button', { type: 'button', class: 'secondary' }, 'What would be deleted now?');
  const report = h('div', { 'aria-live': 'polite' });
  onAction(dry, async () => {
    const run = await send('POST', `${org}/retention/run`, { dry_run: true });
    fill(report, h('pre', {}, JSON.stringify(run, null, 2)));
  });
  fill(section, h('h2', { id: 'retention-title' }, 'Retention'),
    h('p', { class: 'meta' }, `Last applied: ${current.last_run_at ? when(current.last_run_at) : 'never'}`),
    form, dry, report);
}
