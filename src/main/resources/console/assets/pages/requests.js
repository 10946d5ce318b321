// Requests: the organization's request log, newest first (narrowed by status and model, a page at
// a time), and one request's whole story: its route, model, deployment and attempts, how it ended,
// its latency, tokens and cost, whether the cache answered, and the memories that went into it,
// each linked to its page.
import { get } from '../api.js';
import { h, fill, table, when } from '../dom.js';
import { field, formError, onSubmit } from '../forms.js';

function ms(value) {
  return value == null ? '—' : `${value} ms`;
}

function outcome(r) {
  return r.error_code ? `${r.status} ${r.error_code}` : String(r.status);
}

export async function render(main, context) {
  document.title = 'Requests · Engram';
  if (!context.manages) {
    fill(main, h('h1', {}, 'Requests'),
      h('p', { class: 'help' }, 'The request log is shown to the organization\'s owners and admins.'));
    return;
  }
  const org = `/v1/organizations/${encodeURIComponent(context.orgId)}`;
  if (context.rest[0]) {
    await story(main, org, context.rest[0]);
    return;
  }
  fill(main, h('h1', {}, 'Requests'));
  const status = field({ label: 'Status', name: 'status', kind: 'text', value: context.query.get('status') || '' });
  const model = field({ label: 'Model', name: 'model', kind: 'text', value: context.query.get('model') || '' });
  const out = h('div');
  const form = h('form', { class: 'inline', 'aria-label': 'Narrow the requests', novalidate: true }, formError(), status, model,
    h('button', { type: 'submit', class: 'secondary' }, 'Show'));
  const show = async (after) => {
    const query = new URLSearchParams();
    if (status.input.value.trim()) query.set('status', status.input.value.trim());
    if (model.input.value.trim()) query.set('model', model.input.value.trim());
    if (after) query.set('after', after);
    const page = await get(`${org}/requests?${query}`);
    const more = h('button', { type: 'button', class: 'secondary' }, 'Older requests');
    more.addEventListener('click', () => show(page.next_cursor));
    fill(out,
      table('Requests, newest first', ['When', 'Request', 'Model', 'Outcome', 'Total', 'Tokens', 'Cost (US$)', 'Cache'],
        page.data.map((r) => [when(r.created_at), h('a', { href: `/console/requests/${encodeURIComponent(r.id)}` }, r.id),
          r.model, outcome(r), ms(r.latency_ms.total), String(r.prompt_tokens + r.completion_tokens),
          r.cost_usd.toFixed(6), r.cache || '—']),
        'No request in the log.'),
      page.has_more ? more : null);
  };
  onSubmit(form, async () => show(null));
  main.append(form, out);
  await show(null);
}

async function story(main, org, id) {
  const r = await get(`${org}/requests/${encodeURIComponent(id)}`);
  fill(main, h('h1', {}, `Request ${r.id}`),
    h('p', {}, h('a', { href: '/console/requests' }, 'All requests')),
    h('dl', { class: 'facts' },
      h('dt', {}, 'When'), h('dd', {}, when(r.created_at)),
      h('dt', {}, 'Route'), h('dd', {}, r.route),
      h('dt', {}, 'Credential'), h('dd', {}, r.credential_id || '—'),
      h('dt', {}, 'Assistant'), h('dd', {}, r.assistant_id || '—'),
      h('dt', {}, 'Agent'), h('dd', {}, r.agent || '—'),
      h('dt', {}, 'Model'), h('dd', {}, r.model),
      h('dt', {}, 'Deployment'), h('dd', {}, r.deployment ? `${r.deployment} (${r.attempts} attempt${r.attempts === 1 ? '' : 's'})` : '—'),
      h('dt', {}, 'Outcome'), h('dd', {}, outcome(r)),
      h('dt', {}, 'Latency'), h('dd', {}, `queue ${ms(r.latency_ms.queue)} · first token ${ms(r.latency_ms.first_token)} · total ${ms(r.latency_ms.total)}`),
      h('dt', {}, 'Tokens'), h('dd', {}, `${r.prompt_tokens} prompt (${r.memory_tokens} of memory) · ${r.completion_tokens} completion`),
      h('dt', {}, 'Cost'), h('dd', {}, `$${r.cost_usd.toFixed(6)}`),
      h('dt', {}, 'Cache'), h('dd', {}, r.cache || 'not consulted')),
    h('h2', {}, 'Memories in the prompt'),
    table('The memories that went into the prompt, with their scores', ['Memory', 'Score'],
      r.memories.map((m) => [h('a', { href: `/console/memory/m/${encodeURIComponent(m.id)}` }, m.id), m.score.toFixed(3)]),
      'No memory went into this request.'),
    h('h2', {}, 'Messages and answer'),
    r.messages == null
      ? h('p', { class: 'help' }, 'Not kept: turn on request_log.contents in the configuration to keep them (sealed at rest).')
      : h('div', {}, h('h3', {}, 'Messages'), h('pre', {}, typeof r.messages === 'string' ? r.messages : JSON.stringify(r.messages, null, 2)), h('h3', {}, 'Answer'), h('pre', {}, r.answer || '')));
}
