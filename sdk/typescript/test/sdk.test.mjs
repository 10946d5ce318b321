// The SDK against a running Engram (started by SdkTest), not a mock:
//   ENGRAM_URL      http://127.0.0.1:<port>
//   ENGRAM_ADMIN    an account key
//   ENGRAM_TOKEN    a context access token with every memory scope
//   ENGRAM_KEY      an API key with admin
//   ENGRAM_LIMITED  a context access token allowed 1 request per minute (RATE_LIMIT_REQUESTS of its organization)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Engram, EngramError } from '../dist/esm/index.js';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run through SdkTest`);
  return value;
};
const engram = (key, extra = {}) => new Engram({ baseURL: env('ENGRAM_URL'), apiKey: env(key), ...extra });

test("an end user's memory is theirs alone", async () => {
  const client = engram('ENGRAM_TOKEN');
  const ada = client.memory.forUser('ada@example.org');
  const remembered = await ada.remember('My favourite Lisbon bakery is Manteigaria', {
    sessionId: 'chat-9', metadata: { topic: 'food' } });
  assert.equal(remembered.userId, 'ada@example.org');
  assert.equal(remembered.sessionId, 'chat-9');
  const found = await ada.recall('favourite Lisbon bakery', { filters: { topic: 'food' } });
  assert.equal(found.memories[0].id, remembered.id);
  const bob = client.memory.forUser('bob@example.org');
  const asBob = await bob.recall('favourite Lisbon bakery');
  assert.ok(!asBob.memories.some((m) => m.id === remembered.id));
  await assert.rejects(bob.get(remembered.id), (e) => e instanceof EngramError && e.status === 404);
  const listed = [];
  for await (const m of ada.list()) listed.push(m.id);
  assert.ok(listed.includes(remembered.id));
});

test('an end user is erased, with a receipt', async () => {
  const carol = engram('ENGRAM_TOKEN').memory.forUser('carol@example.org');
  const kept = await carol.remember('Carol keeps her bike in rack 14');
  const erasure = await carol.erase({ reason: 'Carol asked to be forgotten' });
  assert.equal(erasure.status, 'completed');
  assert.equal(erasure.receipt.memories.count, 1);
  assert.match(erasure.receipt.digest, /^sha256:/);
  assert.equal((await carol.get(kept.id)).text, '');
  const after = await carol.recall('Where does Carol keep her bike?');
  assert.ok(!after.memories.some((m) => m.id === kept.id));
});

test('remember, recall, explain, update, reinforce, list and forget', async () => {
  const client = engram('ENGRAM_TOKEN');
  const memory = await client.memory.remember('Acme’s fiscal year starts in April', { subject: 'Acme', kind: 'fact' });
  assert.match(memory.id, /^mem_/);
  const recall = await client.memory.recall('When does Acme’s year begin?', { limit: 3 });
  assert.equal(recall.memories[0].id, memory.id);
  assert.match(recall.context, /April/);
  const edited = await client.memory.update(memory.id, { text: 'Acme’s fiscal year starts in May' });
  assert.equal(edited.text, 'Acme’s fiscal year starts in May');
  await client.memory.reinforce(memory.id, { reason: 'confirmed' });
  const story = await client.memory.explain(memory.id);
  assert.ok(story.transitions.some((t) => t.action === 'edit'));
  const ids = [];
  for await (const m of client.memory.list({ pageSize: 1 })) ids.push(m.id);
  assert.ok(ids.includes(memory.id));
  const gone = await client.memory.forget(memory.id);
  assert.equal(gone.state, 'tombstoned');
});

test('a retried write never stores twice: the Idempotency-Key', async () => {
  const client = engram('ENGRAM_TOKEN');
  const key = `sdk-${Date.now()}`;
  const first = await client.memory.remember('Berlin closes at five', { idempotencyKey: key });
  const again = await client.memory.remember('Berlin closes at five', { idempotencyKey: key });
  assert.equal(again.id, first.id);
});

test('typed errors carry type, code and param', async () => {
  const client = engram('ENGRAM_TOKEN');
  await assert.rejects(client.memory.remember(''), (error) => {
    assert.ok(error instanceof EngramError);
    assert.equal(error.status, 400);
    assert.equal(error.param, 'text');
    assert.match(error.requestId, /^req_/);
    return true;
  });
  await assert.rejects(client.memory.get('mem_missing'), (error) => error.status === 404);
});

test('a 429 is retried after retry_after, then surfaces with it', async () => {
  const client = engram('ENGRAM_LIMITED', { maxRetries: 0 });
  await client.memory.recall('anything');
  await assert.rejects(client.memory.recall('anything'), (error) => {
    assert.equal(error.status, 429);
    assert.ok(error.retryAfter > 0);
    return true;
  });
});

test('assistants and their capabilities, with optimistic concurrency', async () => {
  const client = engram('ENGRAM_KEY');
  const assistant = await client.assistants.create('Front desk');
  const current = await client.assistants.capabilities(assistant._id);
  const changed = await client.assistants.setCapabilities(
    assistant._id, { capabilities: ['search_org_knowledge'] }, current.version);
  assert.ok(changed.assistant.capabilities.includes('search_org_knowledge'));
  await assert.rejects(
    client.assistants.setCapabilities(assistant._id, { capabilities: [] }, current.version),
    (error) => error.status === 412);
});

test('administration with the account key, and pages as iterators', async () => {
  const admin = engram('ENGRAM_ADMIN');
  const org = await admin.admin.createOrganization('SDK Org', 'seed');
  const token = await admin.admin.createToken(org.id, { name: 'bot', scopes: ['memory:read'] });
  assert.match(token.token, /^engc_/);
  assert.ok((await admin.admin.tokens(org.id)).some((t) => t.id === token.id));
  const seen = [];
  for await (const o of admin.admin.organizations()) seen.push(o.id);
  assert.ok(seen.includes(org.id));
});

test('the OpenAI helper gives the official client, set up for this Engram', async () => {
  const client = engram('ENGRAM_TOKEN');
  const openai = await client.openai();
  assert.equal(openai.baseURL, `${env('ENGRAM_URL')}/v1`);
  const models = await openai.models.list();
  assert.ok(Array.isArray(models.data));
});

test('the CommonJS build loads too', () => {
  const require = createRequire(import.meta.url);
  const cjs = require('../dist/cjs/index.js');
  assert.equal(typeof cjs.Engram, 'function');
});
