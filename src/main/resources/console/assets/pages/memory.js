// Memory: search as the gateway would (ranked, with each score explained), the list with
// filters, one memory with its provenance and controls, the candidates queue, business events.
// An agent narrows every view to that agent's memory (/v1/memory/agents/{slug}).
import { get, send, freshKey } from '../api.js';
import { h, fill, table, when } from '../dom.js';
import { LEAVING, confirmAction, field, formError, notify, onAction, onSubmit } from '../forms.js';

const KINDS = ['fact', 'preference', 'event', 'instruction', 'procedure', 'observation'];
const STATES = ['durable', 'candidate', 'suppressed', 'tombstoned'];

function base(agent) {
  return agent ? `/v1/memory/agents/${encodeURIComponent(agent)}` : '/v1/memory';
}

function link(path, agent) {
  return `/console/memory${path}${agent ? `?agent=${encodeURIComponent(agent)}` : ''}`;
}

export async function render(main, context) {
  const agent = context.query.get('agent') || '';
  const [view, id] = context.rest;
  const tabs = h('nav', { 'aria-label': 'Memory views', class: 'tabs' }, h('ul', {},
    [['', 'Search and list'], ['/candidates', 'Candidates'], ['/events', 'Business events']].map(([path, label]) =>
      h('li', {}, h('a', {
        href: link(path, agent),
        'aria-current': (view || '') === path.slice(1) ? 'page' : false,
      }, label)))));
  const agentForm = h('form', { class: 'inline', method: 'get', 'aria-label': 'Agent' },
    field({ label: 'Agent (empty: organization-wide)', name: 'agent', value: agent, placeholder: 'sales' }),
    h('button', { type: 'submit', class: 'secondary' }, 'Show'));
  fill(main, h('h1', {}, 'Memory'), tabs, agentForm);
  if (view === 'm' && id) return detail(main, context, agent, id);
  if (view === 'candidates') return candidates(main, context, agent);
  if (view === 'events') return events(main, agent);
  document.title = 'Memory · Engram';
  main.append(searchSection(agent), await listSection(context, agent));
  if (context.manages) main.append(rememberSection(agent));
  return undefined;
}

function memoryLink(memory, agent) {
  return h('a', { href: link(`/m/${encodeURIComponent(memory.id)}`, agent) }, memory.text);
}

/** The score's parts, as the server explained them. */
function explanation(e) {
  if (!e) return null;
  const parts = [
    ['Score', e.score],
    ['Relevance', e.relevance],
    ['Lexical (BM25)', e.lexical ? `rank ${e.lexical.rank}, ${e.lexical.bm25}` : 'no match'],
    ['Vector', e.vector ? `rank ${e.vector.rank}, similarity ${e.vector.similarity}` : 'no match'],
    ['Activation', e.activation ? `${e.activation.normalized} (base level ${e.activation.baseLevel})` : '—'],
    ['Confidence', e.confidence],
    ['Subject match', e.subjectMatch ? 'yes' : 'no'],
    ['Time match', e.timeMatch ? 'yes' : 'no'],
    ['Answer kind match', e.answerMatch ? 'yes' : 'no'],
    ['Context of', e.contextOf || '—'],
  ];
  return h('details', {}, h('summary', {}, 'Why this score'),
    h('dl', { class: 'explain' }, parts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))])));
}

function searchSection(agent) {
  const query = field({ label: 'Question', name: 'query', required: true });
  const limit = field({ label: 'Results', name: 'limit', kind: 'number', value: 10, min: 1, max: 100 });
  const after = field({ label: 'Occurred after', name: 'after', kind: 'date' });
  const before = field({ label: 'Occurred before', name: 'before', kind: 'date' });
  const results = h('div', { 'aria-live': 'polite' });
  const form = h('form', { 'aria-labelledby': 'search-title', novalidate: true },
    h('h2', { id: 'search-title' }, 'Search as the gateway would'), formError(),
    h('div', { class: 'row' }, query, limit, after, before),
    h('button', { type: 'submit' }, 'Search'));
  onSubmit(form, async () => {
    const body = { query: query.input.value, limit: Number(limit.input.value || 10), recordUse: false };
    if (after.input.value) body.after = new Date(after.input.value).toISOString();
    if (before.input.value) body.before = new Date(before.input.value).toISOString();
    const answer = await send('POST', `${base(agent)}/search`, body);
    fill(results, answer.memories.length
      ? h('ol', { class: 'results' }, answer.memories.map((m) => h('li', {},
        memoryLink(m, agent),
        h('p', { class: 'meta' }, `score ${m.score} · ${m.memoryKind} · ${m.subject || 'no subject'} · ${when(m.occurredAt)}`),
        explanation(m.explanation))))
      : h('p', { class: 'empty' }, 'Nothing in memory matches that question.'));
  });
  return h('section', {}, form, results);
}

async function listSection(context, agent) {
  const q = context.query;
  const state = field({ label: 'State', name: 'state', kind: 'select', value: q.get('state') || 'durable',
    options: STATES.map((s) => ({ value: s })) });
  const kind = field({ label: 'Kind', name: 'memoryKind', kind: 'select', value: q.get('memoryKind') || '',
    options: [{ value: '', label: 'any' }, ...KINDS.map((k) => ({ value: k }))] });
  const subject = field({ label: 'Subject', name: 'subject', value: q.get('subject') || '' });
  const from = field({ label: 'Occurred from', name: 'from', kind: 'date', value: q.get('from') || '' });
  const until = field({ label: 'Occurred until', name: 'until', kind: 'date', value: q.get('until') || '' });
  const filters = h('form', { class: 'inline', method: 'get', 'aria-label': 'Filter the list' },
    agent ? h('input', { type: 'hidden', name: 'agent', value: agent }) : null,
    state, kind, subject, from, until, h('button', { type: 'submit', class: 'secondary' }, 'Filter'));
  const params = new URLSearchParams({ limit: '50', state: state.input.value });
  if (kind.input.value) params.set('memoryKind', kind.input.value);
  if (subject.input.value) params.set('subject', subject.input.value);
  // Days as the reader's calendar has them: from the first day's start to the last day's end.
  if (from.input.value) params.set('occurredAfter', new Date(`${from.input.value}T00:00:00`).toISOString());
  if (until.input.value) {
    const end = new Date(`${until.input.value}T00:00:00`);
    end.setDate(end.getDate() + 1);
    params.set('occurredBefore', end.toISOString());
  }
  const rows = h('div');
  const more = h('button', { type: 'button', class: 'secondary' }, 'Show more');
  let cursor = null;
  const load = async () => {
    if (cursor) params.set('before', cursor);
    const page = await get(`${base(agent)}?${params}`);
    rows.append(table('Memories, newest first', ['Memory', 'Kind', 'Subject', 'Occurred', 'Uses'],
      page.data.map((m) => [memoryLink(m, agent), m.memoryKind, m.subject || '—', when(m.occurredAt),
        String(m.retrievalCount)]), cursor ? 'No more memories.' : 'No memories match these filters.'));
    cursor = page.nextBefore;
    more.hidden = !cursor;
  };
  onAction(more, load);
  await load();
  return h('section', { 'aria-labelledby': 'list-title' }, h('h2', { id: 'list-title' }, 'Memories'),
    filters, rows, more);
}

function rememberSection(agent) {
  const text = field({ label: 'What to remember', name: 'text', kind: 'textarea', required: true });
  const subject = field({ label: 'Subject (optional)', name: 'subject' });
  const kind = field({ label: 'Kind', name: 'memoryKind', kind: 'select', value: 'fact', options: KINDS.map((k) => ({ value: k })) });
  const form = h('form', { 'aria-labelledby': 'remember-title', novalidate: true },
    h('h2', { id: 'remember-title' }, 'Remember something'), formError(), text, h('div', { class: 'row' }, subject, kind),
    h('button', { type: 'submit' }, 'Remember'));
  // One key per text typed: a double submit or a retry after a lost answer stores it once.
  let key = freshKey();
  text.input.addEventListener('input', () => { key = freshKey(); });
  onSubmit(form, async () => {
    const body = { text: text.input.value, memoryKind: kind.input.value };
    if (subject.input.value.trim()) body.subject = subject.input.value.trim();
    const memory = await send('POST', base(agent), body, { idempotencyKey: key });
    location.assign(link(`/m/${encodeURIComponent(memory.id)}`, agent));
    return LEAVING;
  });
  return h('section', {}, form);
}

async function detail(main, context, agent, id) {
  const path = `${base(agent)}/${encodeURIComponent(id)}`;
  const memory = await get(path);
  document.title = 'A memory · Memory · Engram';
  const facts = [
    ['State', memory.state], ['Kind', memory.memoryKind], ['Subject', memory.subject || '—'],
    ['Agent', memory.agent || 'organization-wide'], ['Confidence', memory.confidence],
    ['Source', memory.source], ['Occurred', when(memory.occurredAt)], ['Created', when(memory.createdAt)],
    ['Last used', when(memory.lastUsedAt)], ['Retrieved', memory.retrievalCount],
    ['Reinforced', memory.reinforcementCount],
  ];
  const actions = h('div', { class: 'toolbar' });
  const control = (label, action, kind = 'secondary', question = null) => {
    const button = h('button', { type: 'button', class: kind }, label);
    onAction(button, async () => {
      if (question && !await confirmAction(question, label)) return;
      if (action === 'delete') await send('DELETE', path);
      else await send('POST', `${path}/${action}`, {});
      notify(`Done: ${label.toLowerCase()}.`);
      location.reload();
    });
    actions.append(button);
  };
  if (context.manages) {
    if (memory.state === 'durable') {
      control('Reinforce', 'reinforce');
      control('Suppress', 'suppress', 'secondary', 'Suppress this memory? It will not be retrieved until restored.');
    }
    if (memory.state === 'suppressed') control('Restore', 'restore');
    if (memory.state === 'candidate') {
      control('Approve', 'approve');
      control('Reject', 'reject', 'danger', 'Reject this candidate? It will not become a memory.');
    }
    if (memory.state !== 'tombstoned') {
      control('Delete', 'delete', 'danger', 'Delete this memory? It is kept as a tombstone for audit and never retrieved again.');
    }
  }
  main.append(h('section', { 'aria-labelledby': 'memory-title' },
    h('h2', { id: 'memory-title' }, 'Memory'),
    h('blockquote', { class: 'memory-text' }, memory.text),
    h('dl', { class: 'facts' }, facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))])),
    actions));
  if (context.manages) main.append(await provenance(path));
}

async function provenance(path) {
  const p = await get(`${path}/provenance`);
  const origin = p.origin || {};
  return h('section', { 'aria-labelledby': 'provenance-title' },
    h('h2', { id: 'provenance-title' }, 'Provenance'),
    h('p', {}, `Came from ${origin.source || '—'} at ${when(origin.createdAt)}`,
      origin.userId ? ` by user ${origin.userId}` : '', origin.eventId ? ` (event ${origin.eventId})` : ''),
    p.uses ? h('p', {}, `Used ${p.uses.total} times (reinforced ${p.uses.reinforcements}, retrieved ${p.uses.retrievals});`
      + ` activation now ${p.uses.activation?.normalized ?? '—'}, last used ${when(p.uses.lastUsedAt)}.`) : null,
    table('Transitions', ['When', 'From', 'To', 'Action', 'By', 'Reason'], (p.transitions || []).map((t) => [
      when(t.at), t.from || '—', t.to, t.action, t.actor || t.userId || t.credentialId || '—', t.reason || '—'])));
}

async function candidates(main, context, agent) {
  document.title = 'Candidates · Memory · Engram';
  const page = await get(`${base(agent)}/candidates?limit=100`);
  const rows = page.data.map((m) => {
    const cell = h('div', { class: 'toolbar' });
    if (context.manages) {
      for (const [label, action] of [['Approve', 'approve'], ['Reject', 'reject']]) {
        const button = h('button', { type: 'button', class: action === 'reject' ? 'danger' : '' }, label);
        onAction(button, async () => {
          await send('POST', `${base(agent)}/${encodeURIComponent(m.id)}/${action}`, {});
          notify(`${label === 'Approve' ? 'Approved' : 'Rejected'}: “${m.text.slice(0, 80)}”`);
          button.closest('tr').remove();
        });
        cell.append(button);
      }
    }
    return [memoryLink(m, agent), m.memoryKind, m.subject || '—', when(m.createdAt), cell];
  });
  main.append(h('section', { 'aria-labelledby': 'candidates-title' },
    h('h2', { id: 'candidates-title' }, 'Candidates awaiting review'),
    table('Candidates, oldest first', ['Candidate', 'Kind', 'Subject', 'Proposed', context.manages ? 'Review' : ''],
      rows, 'No candidates are waiting.')));
}

async function events(main, agent) {
  document.title = 'Business events · Memory · Engram';
  const page = await get(`${base(agent)}/events?limit=100`);
  main.append(h('section', { 'aria-labelledby': 'events-title' },
    h('h2', { id: 'events-title' }, 'Business events'),
    table('Business events, newest first', ['Received', 'Type', 'Source', 'Subject', 'Text', 'Candidates'], page.data.map((e) => [
      when(e.receivedAt), e.type, e.source || '—', e.subject || '—', e.text,
      String(e.staging?.candidateIds?.length ?? 0)]),
    'No business events yet.')));
}
