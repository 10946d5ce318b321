// A collection of things an organization has (keys, channels, domains, instances...): its list,
// a form that creates one (a secret in the answer shown once), and removal with confirmation.
import { get, send } from './api.js';
import { h, fill, table, when } from './dom.js';
import { confirmAction, formError, notify, onAction, onSubmit } from './forms.js';

/**
 * Draws the collection into section and redraws it after each change.
 * spec: {title, id, path, noun, help, columns: [[heading, item => cell]], empty,
 *   form: () => ({nodes, body()}) | null, secret: answer => [label, value] | null,
 *   remove: {label, done, when: item => bool, question: item => text} | null,
 *   actions: (item, redraw) => [nodes]}
 */
export async function collection(section, spec) {
  const list = await get(spec.path);
  const items = list.data || [];
  const rows = items.map((item) => {
    const cells = spec.columns.map(([, cell]) => cell(item));
    const actions = spec.actions ? spec.actions(item, () => collection(section, spec)) : [];
    if (spec.remove && (!spec.remove.when || spec.remove.when(item))) {
      const remove = h('button', { type: 'button', class: 'danger' }, spec.remove.label || 'Remove');
      onAction(remove, async () => {
        if (!await confirmAction(spec.remove.question(item), spec.remove.label || 'Remove')) return;
        await send('DELETE', `${spec.path}/${encodeURIComponent(item.id)}`);
        notify(`${spec.remove.done || 'Removed'} ${spec.name ? spec.name(item) : spec.noun}.`);
        await collection(section, spec);
      });
      actions.push(remove);
    }
    return actions.length ? [...cells, h('div', { class: 'toolbar' }, actions)] : [...cells, ''];
  });
  const headings = [...spec.columns.map(([heading]) => heading), ''];
  let form = null;
  if (spec.form) {
    const inputs = spec.form();
    form = h('form', { 'aria-labelledby': `${spec.id}-new`, novalidate: true },
      h('h3', { id: `${spec.id}-new` }, `New ${spec.noun}`), formError(), inputs.nodes,
      h('button', { type: 'submit' }, spec.createLabel || `Create ${spec.noun}`));
    onSubmit(form, async () => {
      const answer = await send('POST', spec.path, inputs.body());
      await collection(section, spec);
      if (spec.secret) section.querySelector('.once').replaceWith(secretOnce(...spec.secret(answer)));
      else notify(`Created ${spec.name ? spec.name(answer) : spec.noun}.`);
      if (spec.created) spec.created(answer, section);
    });
  }
  fill(section, h('h2', { id: spec.id }, spec.title), spec.help ? h('p', { class: 'help' }, spec.help) : null,
    h('div', { class: 'once', 'aria-live': 'polite' }),
    table(spec.title, headings, rows, spec.empty || `No ${spec.noun}s yet.`), form);
}

/** A new secret, once: it is not stored in clear and cannot be shown again. */
export function secretOnce(label, value) {
  const secret = h('input', { type: 'text', readonly: true, value, id: 'new-secret', 'aria-label': `${label}: the secret` });
  const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy');
  copy.addEventListener('click', async () => {
    secret.select();
    try {
      await navigator.clipboard.writeText(value);
      notify('Copied to the clipboard.');
    } catch {
      notify('Select the secret and copy it with your keyboard.', 'fail');
    }
  });
  return h('div', { class: 'secret once', role: 'status' },
    h('p', {}, h('strong', {}, `${label}. `), 'Copy it now: it will not be shown again.'),
    h('div', { class: 'row' }, secret, copy));
}

/** A time, or a dash. */
export const at = (value) => (value ? when(value) : '—');
