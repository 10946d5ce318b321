// Alerts: what is firing and what fired, and the webhook channels they are sent to (a channel's
// signing secret shown once; a test event on demand; its delivery log).
import { get, send } from '../api.js';
import { h, fill, table, when } from '../dom.js';
import { field, notify, onAction } from '../forms.js';
import { collection, at } from '../collection.js';

export async function render(main, context) {
  const org = `/v1/organizations/${encodeURIComponent(context.orgId)}`;
  const alerts = h('section', { 'aria-labelledby': 'alerts-title' });
  const channels = h('section', { 'aria-labelledby': 'channels-title' });
  const deliveries = h('section', { 'aria-live': 'polite' });
  main.append(alerts, channels, deliveries);
  const list = await get(`${org}/alerts`);
  fill(alerts, h('h2', { id: 'alerts-title' }, 'Alerts'),
    table('Alerts, newest first', ['State', 'Kind', 'Message', 'Value', 'Threshold', 'Started', 'Ended'],
      list.data.map((a) => [a.state, a.kind, a.message, String(a.value), String(a.threshold), when(a.started_at), at(a.ended_at)]),
      'Nothing has fired.'));
  await collection(channels, {
    title: 'Channels', id: 'channels-title', path: `${org}/alert-channels`, noun: 'channel',
    help: 'Each alert is POSTed to every channel, signed with the channel\'s secret (X-Engram-Signature).',
    columns: [['URL', (c) => c.url], ['Added', (c) => when(c.created_at)]],
    form: () => {
      const url = field({ label: 'Webhook URL', name: 'url', kind: 'url', placeholder: 'https://hooks.example.com/engram' });
      return { nodes: [url], body: () => ({ url: url.input.value.trim() }) };
    },
    createLabel: 'Add channel',
    secret: (c) => [`The signing secret of ${c.url}`, c.secret],
    name: (c) => c.url,
    remove: { label: 'Remove', question: (c) => `Stop sending alerts to ${c.url}?` },
    actions: (c) => {
      const test = h('button', { type: 'button', class: 'secondary' }, 'Send a test');
      onAction(test, async () => {
        const result = await send('POST', `${org}/alert-channels/${encodeURIComponent(c.id)}/test`, {});
        notify(`Test to ${c.url}: ${result.outcome}${result.response_status ? ` (${result.response_status})` : ''}${result.error ? `: ${result.error}` : ''}`,
          result.outcome === 'delivered' ? 'ok' : 'fail');
      });
      const log = h('button', { type: 'button', class: 'secondary' }, 'Deliveries');
      onAction(log, async () => {
        const page = await get(`${org}/alert-channels/${encodeURIComponent(c.id)}/deliveries`);
        fill(deliveries, h('h2', {}, `Deliveries to ${c.url}`),
          table('Delivery attempts, newest first', ['When', 'Event', 'Attempt', 'Outcome', 'Status', 'Error'],
            page.data.map((d) => [when(d.at), d.event, String(d.attempt), d.outcome, d.response_status == null ? '—' : String(d.response_status), d.error || '—']),
            'Nothing was sent yet.'));
      });
      return [test, log];
    },
  });
}
