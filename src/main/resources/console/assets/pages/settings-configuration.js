// Configuration: the organization's own settings (quotas, network, WebSockets; each with where its
// value comes from and its bounds) and its environment variables by layer.
import { get, send } from '../api.js';
import { h, fill, table } from '../dom.js';
import { confirmAction, field, formError, notify, onAction, onSubmit } from '../forms.js';

const SOURCES = {
  system: 'server default', plan: 'plan', organization: 'this organization', instance: 'instance',
  override: 'runtime override',
};

export async function render(main, context) {
  const org = `/v1/organizations/${encodeURIComponent(context.orgId)}`;
  const config = h('section', { 'aria-labelledby': 'config-title' });
  const variables = h('section', { 'aria-labelledby': 'variables-title' });
  main.append(config, variables);
  await Promise.all([drawConfig(config, org), drawVariables(variables, org)]);
}

function controlFor(name, spec) {
  const bounds = spec.min != null ? `${spec.min} to ${spec.max}${spec.unit ? ` ${spec.unit}` : ''}` : spec.unit;
  const help = `From: ${SOURCES[spec.source] || spec.source}${bounds ? ` · ${bounds}` : ''}`;
  if (typeof spec.value === 'boolean') {
    const f = field({ label: name, name, kind: 'checkbox', value: spec.value, help });
    f.read = () => f.input.checked;
    return f;
  }
  if (Array.isArray(spec.value)) {
    const f = field({ label: name, name, kind: 'list', value: spec.value, help: `${help} · one per line` });
    f.read = () => f.input.value.split('\n').map((s) => s.trim()).filter(Boolean);
    return f;
  }
  const f = field({ label: name, name, kind: 'number', value: spec.value, help, min: spec.min, max: spec.max });
  f.read = () => (f.input.value === '' ? null : Number(f.input.value));
  return f;
}

async function drawConfig(section, org) {
  const config = await get(`${org}/config`);
  const controls = Object.entries(config.fields).map(([name, spec]) => [name, spec, controlFor(name, spec)]);
  const form = h('form', { 'aria-labelledby': 'config-title', novalidate: true }, formError(),
    controls.map(([, , control]) => control), h('button', { type: 'submit' }, 'Save configuration'));
  onSubmit(form, async () => {
    const patch = {};
    for (const [name, spec, control] of controls) {
      const value = control.read();
      if (JSON.stringify(value) === JSON.stringify(spec.value)) continue;
      const [group, key] = name.split('.');
      patch[group] = patch[group] || {};
      patch[group][key] = value;
    }
    if (!Object.keys(patch).length) {
      notify('Nothing changed.');
      return;
    }
    await send('PATCH', `${org}/config`, patch);
    notify('Configuration saved: it applies to new requests at once.');
    await drawConfig(section, org);
  });
  const overridden = controls.filter(([, spec]) => spec.source === 'organization');
  const resets = overridden.map(([name]) => {
    const button = h('button', { type: 'button', class: 'secondary' }, `Reset ${name}`);
    onAction(button, async () => {
      const [group, key] = name.split('.');
      await send('PATCH', `${org}/config`, { [group]: { [key]: null } });
      notify(`${name} is back to its default.`);
      await drawConfig(section, org);
    });
    return button;
  });
  fill(section, h('h2', { id: 'config-title' }, 'Configuration'),
    h('p', { class: 'help' }, `Version ${config.version}. A value you set overrides the plan's; it can never exceed what the plan allows.`),
    form, resets.length ? h('div', { class: 'toolbar' }, resets) : null);
}

async function drawVariables(section, org) {
  const env = await get(`${org}/env`);
  const settable = env.data.filter((v) => v.settable);
  // The organization's own: what it can set, or has set. The server's (ports, GPU, paths) are the
  // operator's, listed apart and folded so they do not read as settings the owner could change.
  const own = env.data.filter((v) => v.settable || v.source === 'organization');
  const servers = env.data.filter((v) => !own.includes(v));
  const rows = own.map((v) => {
    let action = '';
    if (v.source === 'organization') {
      action = h('button', { type: 'button', class: 'danger' }, 'Remove');
      onAction(action, async () => {
        if (!await confirmAction(`Remove ${v.name}? The next lower layer's value applies again.`, 'Remove')) return;
        await send('DELETE', `${org}/env/${encodeURIComponent(v.name)}`);
        notify(`Removed ${v.name}.`);
        await drawVariables(section, org);
      });
    }
    return [h('code', {}, v.name), v.value == null ? '—' : String(v.value), SOURCES[v.source] || v.source,
      v.live ? 'at once' : 'after a restart', v.description || '', action];
  });
  const name = field({ label: 'Variable', name: 'name', placeholder: 'RATE_LIMIT_REQUESTS',
    help: `Known: ${settable.map((v) => v.name).join(', ')}; or your own (A-Z, 0-9, _).` });
  const value = field({ label: 'Value', name: 'value' });
  const form = h('form', { 'aria-labelledby': 'variable-new', novalidate: true },
    h('h3', { id: 'variable-new' }, 'Set a variable'), formError(), h('div', { class: 'row' }, name, value),
    h('button', { type: 'submit' }, 'Set variable'));
  onSubmit(form, async () => {
    const key = name.input.value.trim();
    // The server names a bad value as variables.NAME: point that at the value's field.
    value.setAttribute('data-field', `variables.${key}`);
    await send('POST', `${org}/env`, { variables: { [key]: value.input.value } });
    notify(`${key} set.`);
    await drawVariables(section, org);
  });
  fill(section, h('h2', { id: 'variables-title' }, 'Environment variables'),
    h('p', { class: 'help' }, 'Layers, later wins: server default, plan, organization, instance, runtime override.'),
    table('Variables in force', ['Name', 'Value', 'From', 'Applies', 'What it does', ''], rows), form,
    servers.length ? h('details', { class: 'server-settings' },
      h('summary', {}, `The server's own settings (${servers.length}): set by the operator, not here`),
      table('Server settings', ['Name', 'Value', 'What it does'],
        servers.map((v) => [h('code', {}, v.name), v.value == null ? '—' : String(v.value), v.description || '']))) : null);
}
