// Organization settings: people and roles, context access tokens, API keys (the secret shown
// once), and memory's write mode. Owners and admins manage; members see what they may.
import { get, send } from '../api.js';
import { h, fill, table, when } from '../dom.js';
import { confirmAction, field, formError, notify, onAction, onSubmit } from '../forms.js';

const SCOPES = ['memory:read', 'memory:write', 'memory:control', 'memory:delete',
  'knowledge:read', 'insights:read', 'actions:request', 'inference:chat'];
const LEVELS = [
  { value: 'read', label: 'Read: run and list models (inference)' },
  { value: 'write', label: 'Write: also train and upload models (inference, training, models)' },
  { value: 'admin', label: 'Admin: every operation (admin)' },
];

export async function render(main, context) {
  document.title = 'Settings · Engram';
  fill(main, h('h1', {}, 'Organization settings'),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Organization'), h('dd', {}, context.session.organization.name),
      h('dt', {}, 'ID'), h('dd', {}, h('code', {}, context.orgId)),
      h('dt', {}, 'Plan'), h('dd', {}, `${context.session.organization.plan} (tier ${context.session.organization.tier})`),
      h('dt', {}, 'Your role'), h('dd', {}, context.role)));
  if (!context.manages) {
    main.append(h('p', { class: 'help' }, 'People, tokens and keys are managed by the organization\'s owners and admins.'));
    return;
  }
  const org = `/v1/organizations/${encodeURIComponent(context.orgId)}`;
  const people = h('section', { 'aria-labelledby': 'people-title' });
  const tokens = h('section', { 'aria-labelledby': 'tokens-title' });
  const keys = h('section', { 'aria-labelledby': 'keys-title' });
  const memory = h('section', { 'aria-labelledby': 'memory-settings-title' });
  main.append(people, tokens, keys, memory);
  await Promise.all([
    drawPeople(people, org),
    drawCredentials(tokens, `${org}/tokens`, tokenCollection()),
    drawCredentials(keys, `${org}/api-keys`, keyCollection()),
    drawMemorySettings(memory),
  ]);
}

async function drawPeople(section, org) {
  const users = await get(`${org}/users`);
  const email = field({ label: 'Email', name: 'email', kind: 'email', required: true, autocomplete: 'off' });
  const name = field({ label: 'Name', name: 'name' });
  const role = field({ label: 'Role', name: 'role', kind: 'select', value: 'member',
    options: ['member', 'admin', 'owner'].map((r) => ({ value: r })) });
  const password = field({ label: 'Initial password (12 characters or more; they change it after signing in)',
    name: 'password', kind: 'password', autocomplete: 'new-password' });
  const form = h('form', { 'aria-labelledby': 'invite-title', novalidate: true },
    h('h3', { id: 'invite-title' }, 'Add a person'), formError(), h('div', { class: 'row' }, email, name, role), password,
    h('button', { type: 'submit' }, 'Add person'));
  onSubmit(form, async () => {
    const body = { email: email.input.value.trim(), role: role.input.value };
    if (name.input.value.trim()) body.name = name.input.value.trim();
    if (password.input.value) body.password = password.input.value;
    const user = await send('POST', `${org}/users`, body);
    notify(`${user.email} added as ${user.role}.`);
    await drawPeople(section, org);
  });
  fill(section, h('h2', { id: 'people-title' }, 'People'),
    table('People of the organization', ['Email', 'Name', 'Role', 'Added'],
      users.data.map((u) => [u.email, u.name, u.role, when(u.created_at)])), form);
}

function tokenCollection() {
  return {
    title: 'Context access tokens', id: 'tokens-title', noun: 'token',
    help: 'For memory and chat from your services: scopes, optionally bound to agents.',
    fields() {
      const name = field({ label: 'Name', name: 'name', required: true });
      const scopes = SCOPES.map((s) => field({ label: s, name: `scope-${s}`, kind: 'checkbox', value: s === 'memory:read' }));
      const agents = field({ label: 'Agents (one per line; empty: every agent)', name: 'agents', kind: 'list' });
      const group = h('fieldset', { class: 'choices', 'data-field': 'scopes' }, h('legend', {}, 'Scopes'), scopes, h('p', { class: 'error' }));
      return {
        nodes: [name, group, agents],
        body() {
          const body = { name: name.input.value, scopes: SCOPES.filter((_, i) => scopes[i].input.checked) };
          const list = agents.input.value.split('\n').map((s) => s.trim()).filter(Boolean);
          if (list.length) body.agents = list;
          return body;
        },
      };
    },
    columns: ['Name', 'Scopes', 'Agents', 'Secret', 'Created', 'Status', ''],
    cells: (c) => [c.name, (c.scopes || []).join(', '), c.agents ? c.agents.join(', ') : 'all'],
  };
}

function keyCollection() {
  return {
    title: 'API keys', id: 'keys-title', noun: 'key',
    help: 'For the extended surface (inference, training, models). The level sets the key\'s permissions.',
    fields() {
      const name = field({ label: 'Name', name: 'name', required: true });
      const level = field({ label: 'Level', name: 'level', kind: 'select', value: 'read', options: LEVELS });
      const limit = field({ label: 'Requests per minute (empty: the organization\'s limit)', name: 'rate_limit', kind: 'number', min: 1 });
      return {
        nodes: [name, level, limit],
        body() {
          const body = { name: name.input.value, level: level.input.value };
          if (limit.input.value !== '') body.rate_limit = Number(limit.input.value);
          return body;
        },
      };
    },
    columns: ['Name', 'Permissions', 'Rate limit', 'Secret', 'Created', 'Status', ''],
    cells: (c) => [c.name, (c.permissions || []).join(', '), c.rate_limit == null ? 'organization\'s' : `${c.rate_limit}/min`],
  };
}

/** A credential collection: the list (hints only), create (secret shown once), revoke. */
async function drawCredentials(section, path, kind) {
  const list = await get(path);
  const created = h('div', { 'aria-live': 'polite' });
  const inputs = kind.fields();
  const form = h('form', { 'aria-labelledby': `${kind.id}-new`, novalidate: true },
    h('h3', { id: `${kind.id}-new` }, `New ${kind.noun}`), formError(), inputs.nodes,
    h('button', { type: 'submit' }, `Create ${kind.noun}`));
  onSubmit(form, async () => {
    const issued = await send('POST', path, inputs.body());
    await drawCredentials(section, path, kind);
    section.querySelector('[aria-live]').replaceWith(secretOnce(issued, kind.noun));
  });
  const rows = list.data.map((c) => {
    const revoke = h('button', { type: 'button', class: 'danger' }, 'Revoke');
    onAction(revoke, async () => {
      if (!await confirmAction(`Revoke the ${kind.noun} “${c.name}”? Anything using it is refused from now on.`, 'Revoke')) return;
      await send('DELETE', `${path}/${encodeURIComponent(c.id)}`);
      notify(`Revoked ${c.name}.`);
      await drawCredentials(section, path, kind);
    });
    return [...kind.cells(c), h('code', {}, c.hint), when(c.created_at),
      c.revoked ? `revoked ${when(c.revoked_at)}` : (c.expires_at ? `expires ${when(c.expires_at)}` : 'active'),
      c.revoked ? '' : revoke];
  });
  fill(section, h('h2', { id: kind.id }, kind.title), h('p', { class: 'help' }, kind.help), created,
    table(kind.title, kind.columns, rows, `No ${kind.noun}s yet.`), form);
}

/** The new secret, once: it is not stored in clear and cannot be shown again. */
function secretOnce(issued, noun) {
  const secret = h('input', { type: 'text', readonly: true, value: issued.token, id: 'new-secret', 'aria-label': `The new ${noun}'s secret` });
  const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy');
  copy.addEventListener('click', async () => {
    secret.select();
    try {
      await navigator.clipboard.writeText(issued.token);
      notify('Copied to the clipboard.');
    } catch {
      notify('Select the secret and copy it with your keyboard.', 'fail');
    }
  });
  return h('div', { class: 'secret', role: 'status' },
    h('p', {}, h('strong', {}, `Your new ${noun} “${issued.name}”. `), 'Copy it now: it will not be shown again.'),
    h('div', { class: 'row' }, secret, copy));
}

async function drawMemorySettings(section) {
  const { settings } = await get('/api/memory/settings');
  const mode = field({ label: 'How memories are written', name: 'writeMode', kind: 'select', value: settings.writeMode,
    options: settings.availableWriteModes.map((m) => ({ value: m, label: m === 'direct' ? 'Directly (durable at once)' : 'As candidates for review' })) });
  const form = h('form', { class: 'inline', 'aria-labelledby': 'memory-settings-title', novalidate: true },
    formError(), mode, h('button', { type: 'submit' }, 'Save'));
  onSubmit(form, async () => {
    await send('PATCH', '/api/memory/settings', { writeMode: mode.input.value });
    notify('Memory settings saved.');
  });
  fill(section, h('h2', { id: 'memory-settings-title' }, 'Memory'), form);
}
