// The official Anthropic and OpenAI TypeScript SDKs, with their default retry settings, against
// refusals whose wait is longer than a client should block: a spent budget (it renews tomorrow)
// and an hour's spent tokens. Each call must come back with the refusal within two seconds, not
// sleep until the renewal. Run by LongWaitsTest (src/test/java/io/engram/inference), which passes:
//   ENGRAM_ROOT        http://127.0.0.1:<port>
//   ENGRAM_BUDGET_KEY  an inference key of an organization whose daily budget is spent
//   ENGRAM_BUDGET_MODEL the priced model that budget covers
//   ENGRAM_HOUR_KEY    an inference key of an organization with too few of the hour's tokens left
//   ENGRAM_HOUR_MODEL  the model it calls
//   ENGRAM_HOUR_PROMPT_WORDS how many words make a prompt the hour cannot hold
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this suite through LongWaitsTest`);
  return value;
};
const root = env('ENGRAM_ROOT');
const hourPrompt = 'word '.repeat(Number(env('ENGRAM_HOUR_PROMPT_WORDS')));

// Default settings on purpose: maxRetries and timeout are the SDKs' own.
const anthropic = (key) => new Anthropic({ baseURL: root, apiKey: key });
const openai = (key) => new OpenAI({ baseURL: `${root}/v1`, apiKey: key });

async function refusedQuickly(call) {
  const started = Date.now();
  const error = await call().then(
    () => assert.fail('the call was answered, not refused'),
    (e) => e,
  );
  const took = Date.now() - started;
  assert.ok(took < 2000, `the SDK returned after ${took} ms`);
  assert.equal(error.status, 429);
  const wait = Number(error.headers.get('retry-after'));
  assert.ok(wait > 60, `Retry-After ${wait} is the true wait`);
  assert.equal(error.headers.get('x-should-retry'), 'false');
  return error;
}

test('Anthropic SDK: a spent budget is returned at once, with its request id', async () => {
  const error = await refusedQuickly(() => anthropic(env('ENGRAM_BUDGET_KEY')).messages.create({
    model: env('ENGRAM_BUDGET_MODEL'), max_tokens: 5, messages: [{ role: 'user', content: 'hello' }],
  }));
  assert.ok(error instanceof Anthropic.RateLimitError);
  assert.equal(error.error.error.code, 'budget_exceeded');
  assert.match(error.requestID ?? '', /^req_/);
});

test('OpenAI SDK: a spent budget is returned at once', async () => {
  const error = await refusedQuickly(() => openai(env('ENGRAM_BUDGET_KEY')).chat.completions.create({
    model: env('ENGRAM_BUDGET_MODEL'), max_tokens: 5, messages: [{ role: 'user', content: 'hello' }],
  }));
  assert.ok(error instanceof OpenAI.RateLimitError);
  assert.equal(error.code, 'budget_exceeded');
});

test('Anthropic SDK: the hour\'s spent tokens are returned at once', async () => {
  const error = await refusedQuickly(() => anthropic(env('ENGRAM_HOUR_KEY')).messages.create({
    model: env('ENGRAM_HOUR_MODEL'), max_tokens: 5, messages: [{ role: 'user', content: hourPrompt }],
  }));
  assert.equal(error.error.error.code, 'tokens_per_hour_exceeded');
});

test('OpenAI SDK: the hour\'s spent tokens are returned at once', async () => {
  const error = await refusedQuickly(() => openai(env('ENGRAM_HOUR_KEY')).chat.completions.create({
    model: env('ENGRAM_HOUR_MODEL'), max_tokens: 5, messages: [{ role: 'user', content: hourPrompt }],
  }));
  assert.equal(error.code, 'tokens_per_hour_exceeded');
});
