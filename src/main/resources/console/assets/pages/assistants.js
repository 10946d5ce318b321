// Assistants: the organization's list, and a form to create one.
import { send, get } from '../api.js';
import { h, fill, table, when } from '../dom.js';
import { LEAVING, field, formError, onSubmit, valueOf } from '../forms.js';

const TYPES = [
  { value: 'org_shared', label: 'Shared by the organization' },
  { value: 'employee_personal', label: 'Personal (one employee)' },
];

export async function render(main, context) {
  document.title = 'Assistants · Engram';
  const list = h('section', { 'aria-labelledby': 'list-title' });
  fill(main, h('h1', {}, 'Assistants'), createForm(context), list);
  await draw(list);
}

async function draw(list) {
  const rows = [];
  let after = null;
  do {
    const page = await get(`/api/assistants?limit=100${after ? `&after=${encodeURIComponent(after)}` : ''}`);
    rows.push(...page.assistants);
    after = page.nextAfter;
  } while (after);
  fill(list, h('h2', { id: 'list-title' }, `${rows.length} assistant${rows.length === 1 ? '' : 's'}`),
    table('Assistants of the organization', ['Name', 'Type', 'Capabilities', 'Updated'], rows.map((a) => [
      h('a', { href: `/console/assistants/${encodeURIComponent(a._id)}` }, a.name),
      TYPES.find((t) => t.value === a.type)?.label ?? a.type,
      String(a.capabilities.length),
      when(a.updatedAt),
    ]), 'No assistants yet: create the first one above.'));
}

function createForm(context) {
  const name = field({ label: 'Name', name: 'name', required: true });
  const type = field({
    label: 'Type', name: 'type', kind: 'select', options: context.manages ? TYPES : TYPES.slice(1),
    help: context.manages ? null : 'Members create personal assistants for themselves.',
  });
  const form = h('form', { class: 'inline', 'aria-labelledby': 'create-title', novalidate: true },
    h('h2', { id: 'create-title' }, 'New assistant'), formError(), name, type,
    h('button', { type: 'submit' }, 'Create assistant'));
  onSubmit(form, async () => {
    const created = await send('POST', '/api/assistants', {
      name: valueOf(name).trim(), type: valueOf(type),
    });
    location.assign(`/console/assistants/${encodeURIComponent(created.assistant._id)}`);
    return LEAVING;
  });
  return form;
}
