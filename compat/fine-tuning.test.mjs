// The official openai npm client's files and fine-tuning calls against a running Engram, unchanged.
// Run by FineTuningClientTest (src/test/java/io/engram/finetuning), which starts Engram with the
// project's tiny model and passes in:
//   ENGRAM_BASE_URL      http://127.0.0.1:<port>/v1
//   ENGRAM_API_KEY       an API key with the training, inference and models permissions
//   ENGRAM_LOCAL_MODEL   the id of the tiny model (served and trained in-process)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this suite through FineTuningClientTest`);
  return value;
};
const client = new OpenAI({ baseURL: env('ENGRAM_BASE_URL'), apiKey: env('ENGRAM_API_KEY'), maxRetries: 0 });
const MODEL = env('ENGRAM_LOCAL_MODEL');
const lines = Array.from({ length: 16 }, (_, i) => JSON.stringify({
  messages: [
    { role: 'user', content: `Question ${i % 4}: what is the vault code?` },
    { role: 'assistant', content: 'The vault code is 7431.' },
  ],
})).join('\n') + '\n';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(id, statuses) {
  for (let i = 0; i < 600; i++) {
    const job = await client.fineTuning.jobs.retrieve(id);
    if (statuses.includes(job.status)) return job;
    await sleep(100);
  }
  throw new Error(`job ${id} never reached ${statuses}`);
}

test('files.create, retrieve, list and content', async () => {
  const file = await client.files.create({ file: await toFile(Buffer.from(lines), 'vault.jsonl'), purpose: 'fine-tune' });
  assert.equal(file.object, 'file');
  assert.equal(file.purpose, 'fine-tune');
  assert.equal(file.status, 'processed');
  assert.equal(file.bytes, Buffer.byteLength(lines));
  assert.equal(file.filename, 'vault.jsonl');
  assert.equal((await client.files.retrieve(file.id)).id, file.id);
  const ids = [];
  for await (const listed of client.files.list({ purpose: 'fine-tune' })) ids.push(listed.id);
  assert.ok(ids.includes(file.id));
  const content = await client.files.content(file.id);
  assert.equal(await content.text(), lines);
});

test('fineTuning.jobs.create, list, retrieve, listEvents, checkpoints; the model is served', async () => {
  const file = await client.files.create({ file: await toFile(Buffer.from(lines), 'vault.jsonl'), purpose: 'fine-tune' });
  const created = await client.fineTuning.jobs.create({
    model: MODEL, training_file: file.id, suffix: 'compat', seed: 7,
    hyperparameters: { n_epochs: 2, batch_size: 4, learning_rate_multiplier: 'auto' },
  });
  assert.equal(created.object, 'fine_tuning.job');
  assert.ok(['validating_files', 'queued', 'running'].includes(created.status));
  const listed = [];
  for await (const job of client.fineTuning.jobs.list({ limit: 10 })) listed.push(job.id);
  assert.ok(listed.includes(created.id));
  const job = await until(created.id, ['succeeded', 'failed', 'cancelled']);
  assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
  assert.match(job.fine_tuned_model, /^ft:.*:compat:/);
  assert.ok(job.trained_tokens > 0);
  const events = [];
  for await (const event of client.fineTuning.jobs.listEvents(created.id, { limit: 100 })) events.push(event);
  assert.ok(events.some((event) => event.type === 'metrics' && typeof event.data.train_loss === 'number'));
  assert.ok(events.every((event) => event.object === 'fine_tuning.job.event'));
  const checkpoints = [];
  for await (const checkpoint of client.fineTuning.jobs.checkpoints.list(created.id)) checkpoints.push(checkpoint);
  assert.ok(checkpoints.length >= 1);
  assert.equal(checkpoints[0].fine_tuning_job_id, created.id);

  const models = [];
  for await (const model of client.models.list()) models.push(model.id);
  assert.ok(models.includes(job.fine_tuned_model));
  const reply = await client.chat.completions.create({
    model: job.fine_tuned_model, messages: [{ role: 'user', content: 'What is the vault code?' }],
    max_tokens: 8, temperature: 0, memory: false,
  });
  assert.equal(reply.model, job.fine_tuned_model);
  const deleted = await client.models.delete(job.fine_tuned_model);
  assert.equal(deleted.deleted, true);
});

test('fineTuning.jobs.cancel', async () => {
  const file = await client.files.create({ file: await toFile(Buffer.from(lines), 'long.jsonl'), purpose: 'fine-tune' });
  const created = await client.fineTuning.jobs.create({
    model: MODEL, training_file: file.id, hyperparameters: { n_epochs: 50, batch_size: 1 },
  });
  await until(created.id, ['running']);
  const cancelling = await client.fineTuning.jobs.cancel(created.id);
  assert.equal(cancelling.id, created.id);
  const job = await until(created.id, ['cancelled']);
  assert.equal(job.fine_tuned_model, null);
  const gone = await client.files.delete(file.id);
  assert.equal(gone.deleted, true);
});

test('errors reach the client as OpenAI errors', async () => {
  await assert.rejects(
    client.fineTuning.jobs.create({ model: 'no-such-model', training_file: 'file-nope' }),
    (error) => error instanceof OpenAI.NotFoundError && error.param === 'model');
  await assert.rejects(client.fineTuning.jobs.retrieve('ftjob-nope'), OpenAI.NotFoundError);
});
