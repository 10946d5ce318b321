// Organization settings: people and roles, context access tokens, API keys (the secret shown
// once), and memory's write mode. Owners and admins manage; members see what they may.
import { get, send } from '../api.js';
import { h, fill, table, when } from '../dom.js';
import { field, formError, notify, onAction, onSubmit } from '../forms.js';
import { collection } from '../collection.js';

const SCOPES = ['memory:read', 'memory:write', 'memory:control', 'memory:delete',
  'knowledge:read', 'insights:read', 'actions:request', 'inference:chat'];
const LEVELS = [
  { value: 'read', label: 'Read: run and list models (inference)' },
  { value: 'write', label: 'Write: also train and upload models (inference, training, models)' },
  { value: 'admin', label: 'Admin: every operation (admin)' },
];

const SUBPAGES = [
  ['', 'Organization'],
  ['configuration', 'Configuration'],
  ['alerts', 'Alerts'],
  ['storage', 'Instances and storage'],
  ['network', 'Network'],
  ['models', 'Models and providers'],
  ['fine-tuning', 'Fine-tuning'],
];

export async function render(main, context) {
  const page = context.rest[0] || '';
  const known = SUBPAGES.find(([path]) => path === page);
  document.title = `${known ? known[1] : 'Settings'} · Settings · Engram`;
  fill(main, h('h1', {}, 'Organization settings'),
    context.manages ? h('nav', { class: 'tabs', 'aria-label': 'Settings pages' }, h('ul', {},
      SUBPAGES.map(([path, label]) => h('li', {}, h('a', {
        href: `/console/settings${path ? `/${path}` : ''}`, 'aria-current': path === page ? 'page' : false,
      }, label))))) : null);
  if (!known) {
    main.append(h('p', {}, 'No settings page is at this address.'));
    return;
  }
  if (page && !context.manages) {
    main.append(h('p', { class: 'help' }, 'These settings are managed by the organization\'s owners and admins.'));
    return;
  }
  if (page) {
    const module = await import(`./settings-${page}.js`);
    await module.render(main, context);
    return;
  }
  await organization(main, context);
}

async function organization(main, context) {
  main.append(h('dl', { class: 'facts' },
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
  const rows = users.data.map((u) => {
    const role = h('select', { 'aria-label': `Role of ${u.email}` },
      ['member', 'admin', 'owner'].map((r) => h('option', { value: r, selected: r === u.role }, r)));
    const save = h('button', { type: 'button', class: 'secondary' }, 'Change role');
    onAction(save, async () => {
      if (role.value === u.role) return;
      try {
        const changed = await send('PATCH', `${org}/users/${encodeURIComponent(u.id)}`, { role: role.value });
        notify(`${changed.email} is now ${changed.role}.`);
        await drawPeople(section, org);
      } catch (error) {
        role.value = u.role; // what is stored, not what was refused
        throw error;
      }
    });
    return [u.email, u.name, h('div', { class: 'toolbar' }, role, save), when(u.created_at)];
  });
  fill(section, h('h2', { id: 'people-title' }, 'People'),
    table('People of the organization', ['Email', 'Name', 'Role', 'Added'], rows), form);
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
    columns: ['Name', 'Scopes', 'Agents'],
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
    columns: ['Name', 'Permissions', 'Rate limit'],
    cells: (c) => [c.name, (c.permissions || []).join(', '), c.rate_limit == null ? 'organization\'s' : `${c.rate_limit}/min`],
  };
}

/** A credential collection: the list (hints only), create (secret shown once), revoke. */
function drawCredentials(section, path, kind) {
  return collection(section, {
    title: kind.title,
    id: kind.id,
    path,
    noun: kind.noun,
    help: kind.help,
    columns: [...kind.columns.map((heading, i) => [heading, (c) => kind.cells(c)[i]]),
      ['Secret', (c) => h('code', {}, c.hint)], ['Created', (c) => when(c.created_at)],
      ['Status', (c) => (c.revoked ? `revoked ${when(c.revoked_at)}` : (c.expires_at ? `expires ${when(c.expires_at)}` : 'active'))]],
    form: kind.fields,
    secret: (issued) => [`Your new ${kind.noun} “${issued.name}”`, issued.token],
    name: (c) => c.name,
    remove: {
      label: 'Revoke',
      done: 'Revoked',
      when: (c) => !c.revoked,
      question: (c) => `Revoke the ${kind.noun} “${c.name}”? Anything using it is refused from now on.`,
    },
  });
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
