// The official Anthropic TypeScript SDK against a running Engram's POST /v1/messages, unchanged:
// only baseURL and the key differ. Run by AnthropicClientCompatibilityTest
// (src/test/java/io/engram/inference), which starts Engram in front of a fake OpenAI-compatible
// upstream and passes in:
//   ENGRAM_ROOT    http://127.0.0.1:<port> (the SDK adds /v1/messages)
//   ENGRAM_API_KEY an API key with the inference permission
//   ENGRAM_TOKEN   a context access token with inference:chat
//   ENGRAM_MODEL   the id the fake upstream serves
// The fake upstream answers "Hello from the upstream." and, offered tools, calls the first with
// {"city": "Lyon"}.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this suite through AnthropicClientCompatibilityTest`);
  return value;
};
const baseURL = env('ENGRAM_ROOT');
const model = env('ENGRAM_MODEL');
// maxRetries 0: an error must reach the test as the client reports it, not be retried away.
const withKey = new Anthropic({ baseURL, apiKey: env('ENGRAM_API_KEY'), maxRetries: 0 });
const withToken = new Anthropic({ baseURL, authToken: env('ENGRAM_TOKEN'), apiKey: null, maxRetries: 0 });
const weather = {
  name: 'weather',
  description: 'The weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

test('a whole message, key as x-api-key', async () => {
  const message = await withKey.messages.create({
    model, max_tokens: 64, system: 'Be brief.',
    messages: [{ role: 'user', content: 'Say hello' }],
  });
  assert.equal(message.type, 'message');
  assert.equal(message.role, 'assistant');
  assert.equal(message.content[0].type, 'text');
  assert.equal(message.content[0].text, 'Hello from the upstream.');
  assert.equal(message.stop_reason, 'end_turn');
  assert.ok(message.usage.input_tokens > 0);
  assert.ok(message.usage.output_tokens > 0);
});

test('a context token as a bearer token', async () => {
  const message = await withToken.messages.create({
    model, max_tokens: 32, messages: [{ role: 'user', content: 'Say hello' }],
  });
  assert.equal(message.content[0].text, 'Hello from the upstream.');
});

test('a streamed message through the SDK\'s stream helper', async () => {
  const stream = withKey.messages.stream({
    model, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello' }],
  });
  const pieces = [];
  stream.on('text', (text) => pieces.push(text));
  const final = await stream.finalMessage();
  assert.ok(pieces.length > 1, 'several text events');
  assert.equal(pieces.join(''), 'Hello from the upstream.');
  assert.equal(final.content[0].text, 'Hello from the upstream.');
  assert.equal(final.stop_reason, 'end_turn');
});

test('raw stream events in Anthropic\'s order', async () => {
  const stream = await withKey.messages.create({
    model, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Say hello' }],
  });
  const types = [];
  for await (const event of stream) types.push(event.type);
  assert.equal(types[0], 'message_start');
  assert.equal(types[1], 'content_block_start');
  assert.ok(types.includes('content_block_delta'));
  assert.deepEqual(types.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
});

test('tools: a tool_use block, then the tool_result answered', async () => {
  const first = await withKey.messages.create({
    model, max_tokens: 64, tools: [weather],
    messages: [{ role: 'user', content: 'Weather in Lyon?' }],
  });
  assert.equal(first.stop_reason, 'tool_use');
  const call = first.content.find((block) => block.type === 'tool_use');
  assert.equal(call.name, 'weather');
  assert.deepEqual(call.input, { city: 'Lyon' });
  const second = await withKey.messages.create({
    model, max_tokens: 64, tools: [weather],
    messages: [
      { role: 'user', content: 'Weather in Lyon?' },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny' }] },
    ],
  });
  assert.equal(second.stop_reason, 'end_turn');
  assert.equal(second.content[0].text, 'Hello from the upstream.');
});

test('tools streamed: the SDK assembles the tool input from JSON pieces', async () => {
  const stream = withKey.messages.stream({
    model, max_tokens: 64, tools: [weather],
    messages: [{ role: 'user', content: 'Weather in Lyon?' }],
  });
  const final = await stream.finalMessage();
  const call = final.content.find((block) => block.type === 'tool_use');
  assert.equal(call.name, 'weather');
  assert.deepEqual(call.input, { city: 'Lyon' });
  assert.equal(final.stop_reason, 'tool_use');
});

test('errors reach the client as Anthropic errors', async () => {
  const wrong = new Anthropic({ baseURL, apiKey: 'engk_not-a-key', maxRetries: 0 });
  await assert.rejects(
    wrong.messages.create({ model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
    (error) => error instanceof Anthropic.AuthenticationError && error.status === 401
      && error.error?.type === 'error' && error.error?.error?.type === 'authentication_error',
  );
  await assert.rejects(
    withKey.messages.create({ model, messages: [{ role: 'user', content: 'hi' }] }),
    (error) => error instanceof Anthropic.BadRequestError
      && error.error?.error?.type === 'invalid_request_error'
      && error.error?.error?.param === 'max_tokens',
  );
  await assert.rejects(
    withKey.messages.create({ model: 'no-such-model', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
    (error) => error instanceof Anthropic.NotFoundError,
  );
});

test('count_tokens through the SDK: the gateway counts for a model whose provider cannot', async () => {
  const { data: count, response } = await withKey.messages.countTokens({
    model, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hello' }],
  }).withResponse();
  assert.ok(count.input_tokens > 0);
  assert.equal(response.headers.get('x-engram-token-count'), 'gateway');
});
