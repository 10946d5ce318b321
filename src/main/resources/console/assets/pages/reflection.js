// Reflection: its settings, runs and their outcome (undo a run), the changes it made (undo one),
// and charts of its metrics over time.
import { get, send } from '../api.js';
import { h, fill, table, when } from '../dom.js';
import { confirmAction, field, formError, notify, onAction, onSubmit } from '../forms.js';
import { timeChart } from '../charts.js';

const R = '/api/memory/reflection';

export async function render(main, context) {
  document.title = 'Reflection · Engram';
  const settings = h('section', { 'aria-labelledby': 'reflection-settings-title' });
  const charts = h('section', { 'aria-labelledby': 'reflection-charts-title' });
  const runs = h('section', { 'aria-labelledby': 'runs-title' });
  const events = h('section', { 'aria-labelledby': 'changes-title' });
  fill(main, h('h1', {}, 'Reflection'),
    h('p', { class: 'help' }, 'Reflection looks over memory on a schedule: merges near-duplicates, flags what fades, evaluates candidates and finds conflicts.'),
    settings, charts, runs, events);
  const refresh = async () => Promise.all([drawRuns(runs, context, refresh), drawEvents(events, context, refresh)]);
  await Promise.all([drawSettings(settings, context, refresh), drawCharts(charts), refresh()]);
}

/** The settings as a form: one control per setting, nested groups as fieldsets. */
function settingFields(values, path = []) {
  const nodes = [];
  const readers = [];
  for (const [key, value] of Object.entries(values)) {
    const name = [...path, key].join('.');
    if (value && typeof value === 'object') {
      const inner = settingFields(value, [...path, key]);
      nodes.push(h('fieldset', {}, h('legend', {}, key), inner.nodes));
      readers.push(...inner.readers);
    } else if (typeof value === 'boolean') {
      const f = field({ label: key, name, kind: 'checkbox', value });
      nodes.push(f);
      readers.push([name, () => f.input.checked]);
    } else if (typeof value === 'number') {
      const f = field({ label: key, name, kind: 'number', value });
      f.input.step = 'any';
      nodes.push(f);
      readers.push([name, () => (f.input.value === '' ? null : Number(f.input.value))]);
    } else {
      const f = field({ label: key, name, value: value ?? '' });
      nodes.push(f);
      readers.push([name, () => f.input.value]);
    }
  }
  return { nodes, readers };
}

async function drawSettings(section, context, refresh) {
  const answer = await get(`${R}/settings`);
  const { nodes, readers } = settingFields(answer.settings);
  const form = h('form', { 'aria-labelledby': 'reflection-settings-title', novalidate: true },
    formError(), nodes, context.manages ? h('button', { type: 'submit' }, 'Save settings') : null);
  if (!context.manages) form.querySelectorAll('input, select').forEach((i) => { i.disabled = true; });
  onSubmit(form, async () => {
    const patch = {};
    for (const [name, read] of readers) {
      const keys = name.split('.');
      let at = patch;
      keys.slice(0, -1).forEach((k) => { at[k] = at[k] || {}; at = at[k]; });
      at[keys.at(-1)] = read();
    }
    await send('PATCH', `${R}/settings`, patch);
    notify('Reflection settings saved.');
  });
  const run = h('button', { type: 'button', class: 'secondary' }, 'Run now');
  onAction(run, async () => {
    await send('POST', `${R}/run`, {});
    notify('A reflection run started.');
    setTimeout(refresh, 1500);
  });
  const dry = h('button', { type: 'button', class: 'secondary' }, 'Dry run (change nothing)');
  onAction(dry, async () => {
    await send('POST', `${R}/run`, { dryRun: true });
    notify('A dry run started: it records what it would change.');
    setTimeout(refresh, 1500);
  });
  fill(section, h('h2', { id: 'reflection-settings-title' }, 'Settings'),
    h('p', { class: 'meta' }, `Next scheduled run: ${when(answer.nextRunAt)}`),
    context.manages ? h('div', { class: 'toolbar' }, run, dry) : null, form);
}

async function drawCharts(section) {
  const { trend } = await get(`${R}/metrics/trend`);
  const times = trend.series.map((b) => Date.parse(b.start) / 1000);
  const pick = (k) => trend.series.map((b) => b[k]);
  fill(section, h('h2', { id: 'reflection-charts-title' }, 'Over the last days'),
    timeChart('Reflection runs and changes per day', times, [
      { label: 'runs', values: pick('runs') },
      { label: 'applied', values: pick('applied') },
      { label: 'proposed', values: pick('proposed') },
      { label: 'undone', values: pick('undone') },
    ]));
}

function counts(byOutcome) {
  return Object.entries(byOutcome || {}).map(([change, n]) => `${change} ${n}`).join(', ') || 'none';
}

async function drawRuns(section, context, refresh) {
  const { audits } = await get(`${R}/audits?limit=20`);
  const rows = audits.map((a) => {
    let action = '';
    if (context.manages && !a.dryRun && !a.undone && Object.keys(a.counts.applied || {}).length) {
      action = h('button', { type: 'button', class: 'danger' }, 'Undo run');
      onAction(action, async () => {
        if (!await confirmAction('Undo every change of this run? A change whose memory moved on since is skipped, not forced.', 'Undo run')) return;
        const result = await send('POST', `${R}/undo`, { runId: a.id });
        notify(result.message || `Undone: ${result.undone.length}, skipped: ${result.skipped.length}.`);
        await refresh();
      });
    }
    return [when(a.startedAt), a.trigger.type + (a.dryRun ? ' (dry run)' : ''), a.status,
      String(a.examined), counts(a.counts.applied), counts(a.counts.proposed),
      a.undone ? `undone ${when(a.undone.at)}` : action];
  });
  fill(section, h('h2', { id: 'runs-title' }, 'Runs'),
    table('Reflection runs, newest first', ['Started', 'Trigger', 'Status', 'Examined', 'Applied', 'Proposed', ''], rows,
      'No runs yet.'));
}

async function drawEvents(section, context, refresh) {
  const { events } = await get(`${R}/events?limit=50`);
  const rows = events.map((e) => {
    let action = e.undone ? `undone ${when(e.undone.at)}` : '';
    if (context.manages && !e.undone && e.outcome === 'applied') {
      action = h('button', { type: 'button', class: 'secondary' }, 'Undo');
      onAction(action, async () => {
        const result = await send('POST', `${R}/undo`, { eventId: e.id });
        notify(result.skipped.length ? `Not undone: ${result.skipped[0].reason}` : 'Undone.');
        await refresh();
      });
    }
    return [when(e.at), e.kind, e.change, e.outcome,
      h('a', { href: `/console/memory/m/${encodeURIComponent(e.memoryId)}` }, e.memoryId), e.reason, action];
  });
  fill(section, h('h2', { id: 'changes-title' }, 'Changes'),
    table('Changes reflection made or proposed, newest first', ['When', 'Process', 'Change', 'Outcome', 'Memory', 'Why', ''], rows,
      'Reflection has not changed anything yet.'));
}
