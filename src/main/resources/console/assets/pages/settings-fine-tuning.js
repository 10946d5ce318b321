// Fine-tuning: the organization's jobs, and one job's training and validation loss by step (from
// its metrics events), its checkpoints and messages; cancel a job still running.
import { get, send } from '../api.js';
import { h, fill, table, when } from '../dom.js';
import { confirmAction, notify, onAction } from '../forms.js';
import { timeChart } from '../charts.js';

const JOBS = '/v1/fine_tuning/jobs';
const LIVE = ['validating_files', 'queued', 'running'];

export async function render(main, context) {
  const jobs = h('section', { 'aria-labelledby': 'jobs-title' });
  const detail = h('section', { 'aria-live': 'polite' });
  main.append(jobs, detail);
  await drawJobs(jobs, detail);
  const chosen = context.query.get('job');
  if (chosen) await drawJob(detail, chosen, () => drawJobs(jobs, detail));
}

async function drawJobs(section, detail) {
  const list = await get(`${JOBS}?limit=50`);
  const rows = list.data.map((job) => {
    const open = h('button', { type: 'button', class: 'secondary' }, 'Loss and events');
    onAction(open, async () => {
      history.replaceState(null, '', `?job=${encodeURIComponent(job.id)}`);
      await drawJob(detail, job.id, () => drawJobs(section, detail));
    });
    return [h('code', {}, job.id), job.model, job.status, job.fine_tuned_model || '—',
      job.trained_tokens == null ? '—' : String(job.trained_tokens), when(job.created_at), open];
  });
  fill(section, h('h2', { id: 'jobs-title' }, 'Fine-tuning jobs'),
    h('p', { class: 'help' }, 'Jobs are created through the API (POST /v1/fine_tuning/jobs with a training file): docs/fine-tuning.md.'),
    table('Fine-tuning jobs, newest first', ['Job', 'Base model', 'Status', 'Fine-tuned model', 'Trained tokens', 'Created', ''],
      rows, 'No fine-tuning jobs yet.'));
}

/** Every event of the job, oldest first (pages of 1,000, at most 20 of them). */
async function events(id) {
  const all = [];
  let after = null;
  for (let page = 0; page < 20; page++) {
    const answer = await get(`${JOBS}/${encodeURIComponent(id)}/events?limit=1000${after ? `&after=${encodeURIComponent(after)}` : ''}`);
    all.push(...answer.data);
    if (!answer.has_more || !answer.data.length) break;
    after = answer.data.at(-1).id;
  }
  return all.sort((a, b) => a.created_at - b.created_at);
}

async function drawJob(section, id, redraw) {
  const [job, log, checkpoints] = await Promise.all([
    get(`${JOBS}/${encodeURIComponent(id)}`), events(id), get(`${JOBS}/${encodeURIComponent(id)}/checkpoints?limit=100`),
  ]);
  const metrics = log.filter((e) => e.type === 'metrics' && e.data).map((e) => e.data)
    .sort((a, b) => a.step - b.step);
  let cancel = null;
  if (LIVE.includes(job.status)) {
    cancel = h('button', { type: 'button', class: 'danger' }, 'Cancel job');
    onAction(cancel, async () => {
      if (!await confirmAction(`Cancel ${job.id}? Training stops; its checkpoints stay.`, 'Cancel job')) return;
      await send('POST', `${JOBS}/${encodeURIComponent(job.id)}/cancel`, {});
      notify(`${job.id} cancelled.`);
      await redraw();
      await drawJob(section, id, redraw);
    });
  }
  fill(section, h('h2', {}, `Job ${job.id}`),
    h('p', { class: 'meta' }, `${job.status} · ${job.model}${job.fine_tuned_model ? ` → ${job.fine_tuned_model}` : ''}`),
    cancel,
    timeChart('Loss by step', metrics.map((m) => m.step), [
      { label: 'training loss', values: metrics.map((m) => m.train_loss) },
      { label: 'validation loss', values: metrics.map((m) => m.valid_loss ?? null) },
    ], { xLabel: 'step' }),
    h('h3', {}, 'Checkpoints'),
    table('Checkpoints', ['Step', 'Saved', 'Training loss'], checkpoints.data.map((c) => [
      String(c.step_number), when(c.created_at), String(c.metrics?.train_loss ?? '—')]), 'No checkpoints yet.'),
    h('h3', {}, 'Messages'),
    table('Job events, oldest first', ['When', 'Level', 'Message'],
      log.filter((e) => e.type !== 'metrics').map((e) => [when(e.created_at), e.level, e.message]), 'No messages yet.'));
}
