// One assistant: rename, delete, the capability editor (grouped by category, locked ones with the
// tier that unlocks them, a form per capability from its config schema, the server's validation
// next to each field, the optimistic-concurrency conflict), and the history of changes.
import { api, get, send } from '../api.js';
import { h, fill, when } from '../dom.js';
import { confirmAction, field, formError, notify, onAction, onSubmit, showError } from '../forms.js';

const CATEGORY_NAMES = {
  org_intelligence: 'Organization intelligence',
  commerce: 'Commerce',
  productivity: 'Productivity',
  intelligence: 'Intelligence',
};

export async function render(main, context) {
  const id = context.rest[0];
  const base = `/api/assistants/${encodeURIComponent(id)}`;
  const { json } = await api('GET', base);
  const assistant = json.assistant;
  document.title = `${assistant.name} · Assistants · Engram`;
  const mayModify = context.manages
    || (assistant.type === 'employee_personal' && assistant.ownerId === context.session.user.id);
  const editor = h('section', { 'aria-labelledby': 'capabilities-title' });
  const history = h('section', { 'aria-labelledby': 'history-title' });
  fill(main,
    h('p', { class: 'crumbs' }, h('a', { href: '/console/assistants' }, 'Assistants'), ' / '),
    h('h1', { id: 'assistant-name' }, assistant.name),
    h('p', { class: 'meta' }, assistant.type === 'org_shared' ? 'Shared by the organization' : 'Personal',
      ` · created ${when(assistant.createdAt)}`),
    mayModify ? manage(assistant, base) : null,
    editor, history);
  await drawEditor(editor, base, assistant, mayModify, () => drawHistory(history, base, context));
  await drawHistory(history, base, context);
}

function manage(assistant, base) {
  const name = field({ label: 'Name', name: 'name', value: assistant.name, required: true });
  const rename = h('form', { class: 'inline', 'aria-label': 'Rename the assistant', novalidate: true },
    formError(), name, h('button', { type: 'submit' }, 'Rename'));
  onSubmit(rename, async () => {
    const renamed = await send('PATCH', base, { name: name.input.value });
    fill(document.getElementById('assistant-name'), renamed.assistant.name);
    notify(renamed.message);
  });
  const remove = h('button', { type: 'button', class: 'danger' }, 'Delete assistant');
  onAction(remove, async () => {
    if (!await confirmAction(`Delete the assistant “${assistant.name}”? Its history is kept for audit.`,
      'Delete')) return;
    await send('DELETE', base);
    location.assign('/console/assistants');
  });
  return h('div', { class: 'toolbar' }, rename, remove);
}

/** A config key as words: maxOrdersPerDay is "Max orders per day" (the key stays the field's name). */
function words(key) {
  const spaced = key.replace(/_/g, ' ').replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** One control per config field, from the registry's schema (type, bounds, enum). */
function configField(capability, name, schema, value) {
  const path = `capabilityConfigs.${capability.id}.${name}`;
  const label = `${words(name)}${schema.required ? '' : ' (optional)'}`;
  const help = schema.description || null;
  if (schema.type === 'string_array' && schema.enum) {
    const chosen = new Set(value || []);
    const boxes = schema.enum.map((option) => field({
      label: option, name: `${path}[]`, kind: 'checkbox', value: chosen.has(option),
    }));
    const group = h('fieldset', { class: 'choices', 'data-field': path },
      h('legend', {}, label), help ? h('p', { class: 'help' }, help) : null, boxes,
      h('p', { class: 'error' }));
    group.read = () => schema.enum.filter((_, i) => boxes[i].input.checked);
    return group;
  }
  let wrapper;
  if (schema.type === 'string_array') {
    wrapper = field({ label, name: path, kind: 'list', value: value || [], help: `${help ? `${help} ` : ''}One per line.` });
    wrapper.read = () => wrapper.input.value.split('\n').map((s) => s.trim()).filter(Boolean);
  } else if (schema.type === 'boolean') {
    wrapper = field({ label, name: path, kind: 'checkbox', value: value === true, help });
    wrapper.read = () => wrapper.input.checked;
  } else if (schema.type === 'integer' || schema.type === 'number') {
    wrapper = field({ label, name: path, kind: 'number', value: value ?? '', help, min: schema.minimum, max: schema.maximum });
    wrapper.input.step = schema.type === 'integer' ? '1' : 'any';
    // Sent as typed: a bad number reaches the server, whose message names the bound.
    wrapper.read = () => (wrapper.input.value === '' ? undefined : Number(wrapper.input.value));
  } else if (schema.enum) {
    const options = [...(schema.required ? [] : [{ value: '', label: '(default)' }]),
      ...schema.enum.map((v) => ({ value: v }))];
    wrapper = field({ label, name: path, kind: 'select', value: value ?? '', options, help });
    wrapper.read = () => wrapper.input.value || undefined;
  } else {
    wrapper = field({ label, name: path, value: value ?? '', help });
    wrapper.read = () => (wrapper.input.value === '' ? undefined : wrapper.input.value);
  }
  wrapper.setAttribute('data-field', path);
  return wrapper;
}

async function drawEditor(section, base, assistant, mayModify, afterSave) {
  const [available, registry, current] = await Promise.all([
    get(`${base}/available-capabilities`),
    get(`/api/capabilities/registry?assistantType=${encodeURIComponent(assistant.type)}`),
    api('GET', `${base}/capabilities`),
  ]);
  let version = current.json.version;
  const enabled = new Set(current.json.capabilities);
  const configs = current.json.capabilityConfigs || {};
  const allowed = new Set(available.capabilities.map((c) => c.id));
  const limit = available.capabilityLimit;
  const count = h('p', { class: 'meta', 'aria-live': 'polite' });
  const rows = new Map();
  const groups = new Map();
  for (const capability of registry.capabilities) {
    const locked = !allowed.has(capability.id) && !capability.alwaysEnabled;
    const toggle = field({
      label: capability.name, name: capability.id, kind: 'checkbox',
      value: enabled.has(capability.id) || capability.alwaysEnabled,
      help: capability.description,
    });
    toggle.input.disabled = !mayModify || locked || capability.alwaysEnabled;
    const fields = Object.entries(capability.configSchema || {})
      .map(([name, schema]) => configField(capability, name, schema, (configs[capability.id] || {})[name]));
    fields.forEach((f) => f.querySelectorAll('input, select, textarea').forEach((i) => { i.disabled = !mayModify; }));
    const config = fields.length ? h('fieldset', { class: 'config' },
      h('legend', {}, `${capability.name}: configuration`), fields) : null;
    const badges = [
      capability.alwaysEnabled ? h('span', { class: 'badge' }, 'Always on') : null,
      locked ? h('span', { class: 'badge locked' }, `Requires the ${capability.tierRequirement} tier or higher`) : null,
    ];
    const row = h('div', { class: `capability${locked ? ' is-locked' : ''}` }, toggle, badges, config);
    const sync = () => {
      if (config) config.hidden = !toggle.input.checked;
      const on = [...rows.values()].filter((r) => r.toggle.input.checked).length;
      fill(count, limit == null ? `${on} enabled (no limit on this plan)` : `${on} of ${limit} enabled on the ${available.organizationTier} tier`);
    };
    toggle.input.addEventListener('change', sync);
    rows.set(capability.id, { capability, toggle, fields, sync });
    if (!groups.has(capability.category)) groups.set(capability.category, []);
    groups.get(capability.category).push(row);
  }
  const conflict = h('div', { class: 'conflict', role: 'alert', hidden: true });
  const form = h('form', { 'aria-labelledby': 'capabilities-title', novalidate: true },
    formError(), conflict,
    [...groups.entries()].map(([category, items]) => h('fieldset', { class: 'category' },
      h('legend', {}, CATEGORY_NAMES[category] || category), items)),
    mayModify ? h('button', { type: 'submit' }, 'Save capabilities') : null);
  rows.forEach((r) => r.sync());
  fill(section, h('h2', { id: 'capabilities-title' }, 'Capabilities'), count,
    mayModify ? null : h('p', { class: 'help' }, 'You may look at these capabilities; an owner or admin changes them.'),
    form);
  onSubmit(form, async () => {
    conflict.hidden = true;
    const capabilities = [];
    const capabilityConfigs = {};
    for (const [id, r] of rows) {
      if (!r.toggle.input.checked) continue;
      capabilities.push(id);
      const config = {};
      for (const f of r.fields) {
        const value = f.read();
        if (value !== undefined) config[f.getAttribute('data-field').split('.').pop()] = value;
      }
      capabilityConfigs[id] = config;
    }
    try {
      const saved = await send('PATCH', `${base}/capabilities`, { capabilities, capabilityConfigs },
        { headers: { 'If-Match': `"${version}"` } });
      version = saved.assistant.version;
      notify(`Saved: the capabilities are at version ${version}.`);
      await afterSave();
    } catch (error) {
      if (error.status !== 412) throw error;
      showConflict(conflict, error, async () => {
        await drawEditor(section, base, (await get(base)).assistant, mayModify, afterSave);
      });
    }
  });
}

/** Someone else saved first: say so, keep this person's edits, offer their version. */
function showConflict(box, error, reload) {
  const load = h('button', { type: 'button', class: 'secondary' }, 'Load the saved version (discards your changes)');
  onAction(load, reload);
  fill(box, h('p', {}, h('strong', {}, 'Someone else saved these capabilities first. '),
    'Your changes are still below, not saved. ', error.message), load);
  box.hidden = false;
  box.focus?.();
}

async function drawHistory(section, base, context) {
  const page = await get(`${base}/capabilities/history?limit=20`);
  let people = new Map();
  if (context.manages) {
    const users = await get(`/v1/organizations/${encodeURIComponent(context.orgId)}/users`);
    people = new Map(users.data.map((u) => [u.id, u.email]));
  }
  const who = (by) => (by?.userId ? people.get(by.userId) || by.userId : by?.kind || '—');
  const items = page.history.map((v) => h('li', {},
    h('strong', {}, `Version ${v.version}`), ` · ${when(v.changedAt)} · by ${who(v.changedBy)}`,
    change('added', v.added), change('removed', v.removed), change('reconfigured', v.reconfigured)));
  fill(section, h('h2', { id: 'history-title' }, 'History'),
    items.length ? h('ol', { class: 'history', reversed: true }, items) : h('p', { class: 'empty' }, 'No changes yet.'));
}

function change(label, ids) {
  return ids && ids.length ? h('span', { class: `change ${label}` }, ` · ${label}: ${ids.join(', ')}`) : null;
}
