// Guardrails: the organization's policies on what flows through it (input, output, memory writes,
// memories injected into chats), each with its check and action; a switch to turn one off; and a
// box to paste a text into and see what each phase's guardrails would make of it.
import { send } from '../api.js';
import { h, fill, table } from '../dom.js';
import { field, formError, notify, onAction, onSubmit } from '../forms.js';
import { collection } from '../collection.js';

const PHASES = ['input', 'output', 'memory_write', 'memory_injection'];
const TYPES = ['pii', 'secrets', 'terms', 'regex', 'prompt_injection', 'json_schema', 'webhook'];

/** What a guardrail looks for, in a few words. */
function described(check) {
  switch (check.type) {
    case 'pii': return `PII: ${check.entities.length ? check.entities.join(', ') : 'every entity'}`;
    case 'terms': return `Terms: ${check.terms.length}`;
    case 'regex': return `Patterns: ${check.patterns.length}`;
    case 'webhook': return `Webhook: ${check.url}`;
    case 'json_schema': return 'JSON Schema';
    default: return check.type.replace('_', ' ');
  }
}

/** The lines of a list field, trimmed, the empty ones left out. */
function lines(wrapper) {
  return wrapper.input.value.split('\n').map((s) => s.trim()).filter(Boolean);
}

function form() {
  const name = field({ label: 'Name', name: 'name', required: true });
  const phases = PHASES.map((p) => field({ label: p.replace('_', ' '), name: `applies_to.${p}`, kind: 'checkbox', value: p === 'input' }));
  const appliesTo = h('fieldset', { class: 'field', 'data-field': 'applies_to' },
    h('legend', {}, 'Applies to'), phases, h('p', { class: 'error', id: 'applies-to-error' }));
  const type = field({ label: 'Check', name: 'check.type', kind: 'select', value: 'pii', options: TYPES.map((t) => ({ value: t })) });
  const entities = field({ label: 'Entities (one a line; none: all)', name: 'check.entities', kind: 'list',
    help: 'email, phone, payment_card, iban, us_ssn, ip_address' });
  const terms = field({ label: 'Terms (one a line)', name: 'check.terms', kind: 'list' });
  const patterns = field({ label: 'Patterns (RE2, one a line)', name: 'check.patterns', kind: 'list' });
  const schema = field({ label: 'JSON Schema', name: 'check.schema', kind: 'textarea', placeholder: '{"type":"object"}' });
  const url = field({ label: 'Webhook URL', name: 'check.url', kind: 'url', placeholder: 'https://checks.example.com/engram' });
  const action = field({ label: 'Action', name: 'action', kind: 'select', value: 'block',
    options: ['block', 'redact', 'flag'].map((a) => ({ value: a })) });
  const restore = field({ label: 'Give the client its originals back (input redaction)', name: 'restore', kind: 'checkbox' });
  const byType = { pii: [entities], terms: [terms], regex: [patterns], json_schema: [schema], webhook: [url] };
  const shown = () => {
    Object.values(byType).flat().forEach((f) => { f.hidden = true; });
    (byType[type.input.value] || []).forEach((f) => { f.hidden = false; });
  };
  type.input.addEventListener('change', shown);
  shown();
  return {
    nodes: [name, appliesTo, type, entities, terms, patterns, schema, url, action, restore],
    body: () => {
      const check = { type: type.input.value };
      if (check.type === 'pii') check.entities = lines(entities);
      if (check.type === 'terms') check.terms = lines(terms);
      if (check.type === 'regex') check.patterns = lines(patterns);
      if (check.type === 'webhook') check.url = url.input.value.trim();
      if (check.type === 'json_schema') {
        try {
          check.schema = JSON.parse(schema.input.value || 'null');
        } catch {
          check.schema = schema.input.value; // the server names the field
        }
      }
      return {
        name: name.input.value.trim(),
        applies_to: PHASES.filter((p, i) => phases[i].input.checked),
        check,
        action: action.input.value,
        restore: restore.input.checked,
      };
    },
  };
}

function tryText(section, org) {
  const text = field({ label: 'Text', name: 'text', kind: 'textarea', required: true,
    placeholder: 'Write to ana@example.com about card 4111 1111 1111 1111' });
  const phase = field({ label: 'Phase', name: 'phase', kind: 'select', value: '',
    options: [{ value: '', label: 'every phase' }, ...PHASES.map((p) => ({ value: p }))] });
  const result = h('div', { 'aria-live': 'polite' });
  const tryForm = h('form', { 'aria-labelledby': 'try-title', novalidate: true },
    h('h2', { id: 'try-title' }, 'Try a text'),
    h('p', { class: 'help' }, 'What the enabled guardrails would make of it, whoever sends it. Nothing is counted or alerted.'),
    formError(), text, phase, h('button', { type: 'submit' }, 'Try'), result);
  onSubmit(tryForm, async () => {
    const body = { text: text.input.value };
    if (phase.input.value) body.phase = phase.input.value;
    const preview = await send('POST', `${org}/guardrails/preview`, body);
    fill(result, table('What would fire, by phase', ['Phase', 'Fired', 'Blocked by', 'Text as it goes on'],
      preview.phases.map((p) => [
        p.phase,
        p.fired.map((f) => `${f.name} (${f.action}: ${f.kinds.join(', ')})`).join('; ') || 'nothing',
        p.blocked_by || '—',
        p.text == null ? 'blocked' : p.text,
      ]),
      'No enabled guardrail looks at this phase.'));
  });
  fill(section, tryForm);
}

export async function render(main, context) {
  document.title = 'Guardrails · Engram';
  const org = `/v1/organizations/${encodeURIComponent(context.orgId)}`;
  fill(main, h('h1', {}, 'Guardrails'));
  const list = h('section', { 'aria-labelledby': 'guardrails-title' });
  const trying = h('section');
  main.append(list, trying);
  await collection(list, {
    title: 'Guardrails', id: 'guardrails-title', path: `${org}/guardrails`, noun: 'guardrail',
    help: 'Checked where text flows: before a provider sees a request, before the client sees an answer, before a memory is stored, and before a memory enters a chat.',
    columns: [
      ['Name', (g) => g.name],
      ['Applies to', (g) => g.applies_to.join(', ')],
      ['Check', (g) => described(g.check)],
      ['Action', (g) => g.action + (g.restore ? ' (restored)' : '')],
      ['On', (g) => (g.enabled ? 'yes' : 'no')],
    ],
    form: context.manages ? form : null,
    createLabel: 'Add guardrail',
    name: (g) => g.name,
    remove: context.manages ? { label: 'Remove', question: (g) => `Remove the guardrail ${g.name}?` } : null,
    actions: (g, redraw) => {
      if (!context.manages) return [];
      const toggle = h('button', { type: 'button', class: 'secondary' }, g.enabled ? 'Turn off' : 'Turn on');
      onAction(toggle, async () => {
        await send('PATCH', `${org}/guardrails/${encodeURIComponent(g.id)}`, { enabled: !g.enabled });
        notify(`${g.name} is ${g.enabled ? 'off' : 'on'}.`);
        await redraw();
      });
      return [toggle];
    },
  });
  tryText(trying, org);
}
