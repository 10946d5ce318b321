// Usage: requests, errors, latency, tokens (prompt, injected memory, completion) and spend per day
// and per model over a date range; the budgets in money as they stand, this hour's token budget
// and each key's rate-limit headroom.
import { get } from '../api.js';
import { h, fill, table } from '../dom.js';
import { field, formError, onSubmit } from '../forms.js';
import { timeChart } from '../charts.js';

const DAY = 86400;

function dollars(amount) {
  return `$${amount.toFixed(amount < 1 ? 6 : 2)}`;
}

function isoDay(date) {
  return date.toISOString().slice(0, 10);
}

export async function render(main, context) {
  document.title = 'Usage · Engram';
  fill(main, h('h1', {}, 'Usage'));
  if (!context.manages) {
    main.append(h('p', { class: 'help' }, 'Usage is shown to the organization\'s owners and admins.'));
    return;
  }
  const today = new Date();
  const from = field({ label: 'From', name: 'start', kind: 'date', value: context.query.get('from') || isoDay(new Date(today - 13 * DAY * 1000)) });
  const to = field({ label: 'To', name: 'end', kind: 'date', value: context.query.get('to') || isoDay(today) });
  const out = h('div');
  const form = h('form', { class: 'inline', 'aria-label': 'Date range', novalidate: true }, formError(), from, to,
    h('button', { type: 'submit', class: 'secondary' }, 'Show'));
  onSubmit(form, async () => {
    history.replaceState(null, '', `?from=${from.input.value}&to=${to.input.value}`);
    await draw(out, context, from.input.value, to.input.value);
  });
  main.append(form, out);
  await draw(out, context, from.input.value, to.input.value);
}

async function draw(out, context, from, to) {
  const start = `${from}T00:00:00Z`;
  const end = `${to}T23:59:59Z`;
  const usage = await get(`/v1/organizations/${encodeURIComponent(context.orgId)}/usage?start=${start}&end=${end}`);
  const days = [];
  for (let t = Date.parse(start) / 1000; t <= Date.parse(end) / 1000; t += DAY) days.push(t);
  const dayOf = (hour) => Math.floor(hour / DAY) * DAY;
  const sum = (pick, filter = () => true) => days.map((d) => usage.data
    .filter((r) => dayOf(r.hour_start) === d && filter(r)).reduce((a, r) => a + pick(r), 0));
  const models = [...new Set(usage.data.map((r) => r.model))].sort();
  const totals = usage.totals;
  const hour = usage.current_hour;
  fill(out,
    h('dl', { class: 'facts' },
      h('dt', {}, 'Requests'), h('dd', {}, String(totals.requests)),
      h('dt', {}, 'Errors'), h('dd', {}, String(totals.errors)),
      h('dt', {}, 'Latency'), h('dd', {}, usage.latency.requests
        ? `p50 ${usage.latency.p50_ms} ms · p90 ${usage.latency.p90_ms} ms · p99 ${usage.latency.p99_ms} ms` : '—'),
      h('dt', {}, 'Prompt tokens'), h('dd', {}, String(totals.prompt_tokens)),
      h('dt', {}, 'Memory tokens injected'), h('dd', {}, String(totals.memory_tokens)),
      h('dt', {}, 'Completion tokens'), h('dd', {}, String(totals.completion_tokens)),
      h('dt', {}, 'This hour'), h('dd', {}, hour.tokens_per_hour == null
        ? `${hour.tokens_used} tokens (no hourly budget)`
        : `${hour.tokens_used} of ${hour.tokens_per_hour} tokens; ${hour.tokens_remaining} left, resets in ${Math.ceil(hour.resets_in_seconds / 60)} min`)),
    timeChart('Requests per day, by model', days, models.length
      ? models.map((m) => ({ label: m, values: sum((r) => r.requests, (r) => r.model === m) }))
      : [{ label: 'requests', values: sum((r) => r.requests) }], { bars: true }),
    timeChart('Errors per day, by model', days, models.length
      ? models.map((m) => ({ label: m, values: sum((r) => r.errors, (r) => r.model === m) }))
      : [{ label: 'errors', values: sum((r) => r.errors) }], { bars: true }),
    timeChart('Latency per day (ms)', days, ['p50', 'p90', 'p99'].map((p) => ({
      label: p,
      values: days.map((d) => usage.latency.by_day.find((b) => b.day_start === d)?.[`${p}_ms`] ?? null),
    }))),
    timeChart('Spend per day (US dollars), by model', days, models.length
      ? models.map((m) => ({ label: m, values: sum((r) => r.cost_usd, (r) => r.model === m) }))
      : [{ label: 'spend', values: sum((r) => r.cost_usd) }], { bars: true }),
    h('h2', {}, 'Spend by key'),
    table('Requests and spend of each key and token in the range', ['Key or token', 'Requests', 'Answered from the cache', 'Spend'],
      [...new Set(usage.data.map((r) => r.credential_id))].sort().map((k) => {
        const rows = usage.data.filter((r) => r.credential_id === k);
        const total = (pick) => rows.reduce((a, r) => a + pick(r), 0);
        return [k, String(total((r) => r.requests)), String(total((r) => r.cache_hits || 0)), dollars(total((r) => r.cost_usd))];
      }), 'No requests in this range.'),
    h('h2', {}, 'Budgets'),
    table('Budgets in US dollars, this period', ['Scope', 'Period', 'Limit', 'Spent', 'Remaining', 'Renews'],
      usage.budgets.map((b) => [b.scope_id ? `${b.scope} ${b.scope_id}` : b.scope, b.period, dollars(b.limit),
        dollars(b.spent), dollars(b.remaining), new Date(b.resets_at * 1000).toISOString().slice(0, 16).replace('T', ' ')]),
      'No budgets: set one with POST /v1/organizations/{org_id}/budgets (docs/budgets.md).'),
    timeChart('Tokens per day', days, [
      { label: 'prompt', values: sum((r) => r.prompt_tokens) },
      { label: 'memory injected', values: sum((r) => r.memory_tokens) },
      { label: 'completion', values: sum((r) => r.completion_tokens) },
    ]),
    h('h2', {}, 'By model'),
    table('Usage by model in the range', ['Model', 'Requests', 'Errors', 'p50 ms', 'p90 ms', 'p99 ms', 'Prompt', 'Memory', 'Completion'], models.map((m) => {
      const rows = usage.data.filter((r) => r.model === m);
      const total = (k) => String(rows.reduce((a, r) => a + r[k], 0));
      const latency = usage.latency.by_model.find((l) => l.model === m) || {};
      const ms = (v) => (v == null ? '—' : String(v));
      return [m, total('requests'), total('errors'), ms(latency.p50_ms), ms(latency.p90_ms), ms(latency.p99_ms),
        total('prompt_tokens'), total('memory_tokens'), total('completion_tokens')];
    }), 'No requests in this range.'),
    h('h2', {}, 'Rate-limit headroom, this minute'),
    table('Requests per minute of each key and token', ['Name', 'Kind', 'Limit per minute', 'Used', 'Remaining'],
      usage.rate_limits.map((w) => [w.name, w.kind === 'api_key' ? 'API key' : 'token', String(w.requests_per_minute),
        String(w.used_this_minute), String(w.remaining)]), 'No live keys or tokens.'));
}
