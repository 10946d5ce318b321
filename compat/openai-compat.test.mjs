// The official openai npm client (and the Vercel AI SDK's OpenAI provider) against a running Engram,
// unchanged: only baseURL and apiKey differ.
// Run by OpenAiClientCompatibilityTest (src/test/java/io/engram/inference), which starts Engram with the
// local engine (the project's tiny untrained model) and a fake upstream, and passes in:
//   ENGRAM_BASE_URL      http://127.0.0.1:<port>/v1
//   ENGRAM_API_KEY       an API key with the inference permission
//   ENGRAM_TOKEN         a context access token with inference:chat
//   ENGRAM_LIMITED_KEY   an API key allowed 1 request per minute
//   ENGRAM_REMOTE_MODEL  the id served by the fake upstream (DEFAULT_MODEL)
//   ENGRAM_LOCAL_MODEL   the id served in-process by jlama
//   ENGRAM_ASSISTANT_BASE_URL  http://127.0.0.1:<port>/v1/assistants/<id>: an assistant that keeps tasks
// The fake upstream answers "Hello from the upstream." and obeys [upstream:endless|429|500] in a message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, generateObject, streamText, tool, stepCountIs } from 'ai';
import { z } from 'zod';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this suite through OpenAiClientCompatibilityTest`);
  return value;
};
const baseURL = env('ENGRAM_BASE_URL');
const REMOTE = env('ENGRAM_REMOTE_MODEL');
const LOCAL = env('ENGRAM_LOCAL_MODEL');
// maxRetries 0: an error must reach the test as the client reports it, not be retried away.
const client = (apiKey) => new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 30_000 });
const key = client(env('ENGRAM_API_KEY'));
const token = client(env('ENGRAM_TOKEN'));
const user = (content) => [{ role: 'user', content }];

for (const [engine, model] of [['remote', REMOTE], ['local', LOCAL]]) {
  test(`chat completion (${engine} engine)`, async () => {
    const reply = await key.chat.completions.create({
      model, messages: user('Say hello'), max_tokens: 8, memory: false,
    });
    assert.equal(reply.object, 'chat.completion');
    assert.equal(reply.model, model);
    assert.equal(reply.choices.length, 1);
    assert.equal(reply.choices[0].message.role, 'assistant');
    assert.equal(typeof reply.choices[0].message.content, 'string');
    assert.ok(['stop', 'length'].includes(reply.choices[0].finish_reason));
    if (engine === 'remote') assert.equal(reply.choices[0].message.content, 'Hello from the upstream.');
    assert.ok(reply.usage.prompt_tokens > 0);
    assert.ok(reply.usage.completion_tokens > 0);
    assert.equal(reply.usage.total_tokens, reply.usage.prompt_tokens + reply.usage.completion_tokens);
  });

  test(`streaming with include_usage (${engine} engine)`, async () => {
    const stream = await key.chat.completions.create({
      model, messages: user('Say hello'), max_tokens: 8, stream: true, stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.ok(chunks.length >= 3, `only ${chunks.length} chunks`);
    const ids = new Set(chunks.map((c) => c.id));
    assert.equal(ids.size, 1, 'one id for the whole stream');
    assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === model));
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    const usageChunk = chunks.at(-1);
    assert.deepEqual(usageChunk.choices, []);
    assert.ok(usageChunk.usage.completion_tokens > 0);
    const withChoices = chunks.slice(0, -1);
    const finishes = withChoices.map((c) => c.choices[0].finish_reason);
    assert.ok(finishes.slice(0, -1).every((f) => f === null), 'finish_reason null until the last');
    assert.ok(['stop', 'length'].includes(finishes.at(-1)));
    const text = withChoices.map((c) => c.choices[0].delta.content ?? '').join('');
    if (engine === 'remote') assert.equal(text, 'Hello from the upstream.');
    // The SDK's own accumulation agrees with the chunks.
    const whole = await key.chat.completions.stream({ model, messages: user('Say hello'), max_tokens: 8 })
      .finalChatCompletion();
    assert.equal(whole.choices.length, 1);
  });
}

test('a stream aborted by the client midway (remote engine)', async () => {
  const controller = new AbortController();
  const stream = await key.chat.completions.create({
    model: REMOTE, messages: user('[upstream:endless] go on'), stream: true,
  }, { signal: controller.signal });
  let received = 0;
  // The SDK ends the iteration quietly when its own request is aborted; a chunk it had already
  // parsed may still be handed out after the abort, so the loop leaves on its own as well.
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta?.content) received++;
    if (received === 5) {
      controller.abort();
      break;
    }
  }
  assert.equal(received, 5);
  assert.ok(controller.signal.aborted);
  // The gateway is fine afterwards.
  const next = await key.chat.completions.create({ model: REMOTE, messages: user('again'), memory: false });
  assert.equal(next.choices[0].message.content, 'Hello from the upstream.');
});

test('a stream aborted by the client midway (local engine)', async () => {
  const stream = await key.chat.completions.create({
    model: LOCAL, messages: user('Talk for a long time'), stream: true, max_tokens: 1500, seed: 7,
  });
  let received = 0;
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta?.content) received++;
    if (received === 3) {
      stream.controller.abort();
      break;
    }
  }
  assert.equal(received, 3);
  const next = await key.chat.completions.create({ model: LOCAL, messages: user('again'), max_tokens: 2 });
  assert.equal(next.choices.length, 1);
});

test('embeddings, one input and a batch (the SDK asks for base64 and decodes it)', async () => {
  const one = await key.embeddings.create({ model: 'all-minilm-l6-v2', input: 'the quarterly report' });
  assert.equal(one.object, 'list');
  assert.equal(one.data.length, 1);
  assert.equal(one.data[0].embedding.length, 384);
  const norm = Math.sqrt(one.data[0].embedding.reduce((sum, x) => sum + x * x, 0));
  assert.ok(Math.abs(norm - 1) < 1e-3, `unit length, got ${norm}`);
  assert.ok(one.usage.prompt_tokens > 0);

  const inputs = ['the quarterly report', 'a cat on the mat', 'the report for the quarter'];
  const batch = await key.embeddings.create({ model: 'all-minilm-l6-v2', input: inputs });
  assert.deepEqual(batch.data.map((d) => d.index), [0, 1, 2]);
  const dot = (a, b) => a.reduce((sum, x, i) => sum + x * b[i], 0);
  const [report, cat, quarter] = batch.data.map((d) => d.embedding);
  assert.ok(dot(report, quarter) > dot(report, cat), 'similar texts are closer');
  assert.ok(Math.abs(dot(report, one.data[0].embedding) - 1) < 1e-3, 'same text, same vector');

  const floats = await key.embeddings.create({ model: 'all-minilm-l6-v2', input: 'x', encoding_format: 'float' });
  assert.equal(floats.data[0].embedding.length, 384);
});

test('model listing: an API key sees every model, a context token what it may call', async () => {
  const ids = [];
  for await (const model of key.models.list()) ids.push(model.id);
  assert.ok(ids.includes(REMOTE) && ids.includes(LOCAL) && ids.includes('all-minilm-l6-v2'), ids.join());
  const local = await key.models.retrieve(LOCAL);
  assert.equal(local.id, LOCAL);
  assert.equal(local.object, 'model');
  assert.equal(local.context_length, 2048);

  // The advertised model, and the embedding model a token embeds with (not the in-process LOCAL,
  // an extended-surface model).
  const seen = [];
  for await (const model of token.models.list()) seen.push(model.id);
  assert.deepEqual(seen, [REMOTE, 'all-minilm-l6-v2']);
  const reply = await token.chat.completions.create({ model: REMOTE, messages: user('hi') });
  assert.equal(reply.choices[0].message.content, 'Hello from the upstream.');
});

test('errors: a bad key is 401', async () => {
  const bad = client('not-a-real-key');
  await assert.rejects(bad.chat.completions.create({ model: REMOTE, messages: user('hi') }), (error) => {
    assert.ok(error instanceof OpenAI.AuthenticationError, error.constructor.name);
    assert.equal(error.status, 401);
    assert.equal(error.type, 'authentication_error');
    return true;
  });
  await assert.rejects(bad.models.list(), OpenAI.AuthenticationError);
});

test('errors: a bad parameter is 400 with its param, an unknown model 404', async () => {
  await assert.rejects(key.chat.completions.create({ model: REMOTE, messages: user('hi'), temperature: 5 }),
    (error) => {
      assert.ok(error instanceof OpenAI.BadRequestError, error.constructor.name);
      assert.equal(error.status, 400);
      assert.equal(error.type, 'invalid_request_error');
      assert.equal(error.param, 'temperature');
      return true;
    });
  await assert.rejects(key.chat.completions.create({ model: REMOTE, messages: user('hi'), tools: [
    { type: 'function', function: { name: 'not a name', parameters: { type: 'object' } } }] }),
    (error) => error instanceof OpenAI.BadRequestError && error.param === 'tools[0].function.name');
  await assert.rejects(key.chat.completions.create({ model: 'no-such-model', messages: user('hi') }), (error) => {
    assert.ok(error instanceof OpenAI.NotFoundError, error.constructor.name);
    assert.equal(error.code, 'model_not_found');
    return true;
  });
});

test('errors: over the key\'s requests per minute is 429 with retry-after', async () => {
  const limited = client(env('ENGRAM_LIMITED_KEY'));
  await limited.chat.completions.create({ model: REMOTE, messages: user('one'), memory: false });
  await assert.rejects(limited.chat.completions.create({ model: REMOTE, messages: user('two') }), (error) => {
    assert.ok(error instanceof OpenAI.RateLimitError, error.constructor.name);
    assert.equal(error.status, 429);
    assert.equal(error.type, 'rate_limit_error');
    assert.ok(Number(error.headers.get('retry-after')) > 0);
    return true;
  });
});

test('errors: the upstream\'s 429 and 5xx reach the client as 429 and 502', async () => {
  await assert.rejects(key.chat.completions.create({ model: REMOTE, messages: user('[upstream:429]') }),
    (error) => error instanceof OpenAI.RateLimitError && error.headers.get('retry-after') === '7');
  await assert.rejects(key.chat.completions.create({ model: REMOTE, messages: user('[upstream:500]') }),
    (error) => error instanceof OpenAI.InternalServerError && error.status === 502);
});

test('text completions (local engine)', async () => {
  const reply = await key.completions.create({ model: LOCAL, prompt: 'Once upon a time', max_tokens: 4 });
  assert.equal(reply.object, 'text_completion');
  assert.equal(typeof reply.choices[0].text, 'string');
  assert.ok(reply.usage.completion_tokens >= 1 && reply.usage.completion_tokens <= 4);
});

// Tool calling as agent frameworks drive it: the client's own tool runner offers a function, the
// model (the fake upstream) calls it, the runner runs it and sends the answer back, the model replies.
for (const stream of [false, true]) {
  test(`tool calling with the client's tool runner (remote engine, stream: ${stream})`, async () => {
    const calls = [];
    const runner = key.chat.completions.runTools({
      model: REMOTE,
      stream,
      memory: false,
      messages: user('What is the weather in Lyon?'),
      tools: [{
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          parse: JSON.parse,
          function: (args) => { calls.push(args); return 'Sunny, 21 C'; },
        },
      }],
    });
    assert.equal(await runner.finalContent(), 'Hello from the upstream.');
    assert.deepEqual(calls, [{ city: 'Lyon' }]);
    const messages = runner.messages;
    assert.equal(messages.find((m) => m.role === 'assistant' && m.tool_calls)?.tool_calls[0].function.name, 'get_weather');
    assert.ok(messages.some((m) => m.role === 'tool' && m.content === 'Sunny, 21 C'));
  });
}

// Several choices and log probabilities, as the client types them, whole and streamed.
test('n, logprobs and top_logprobs (remote engine), whole and streamed', async () => {
  const asked = { model: REMOTE, messages: user('Hi'), n: 2, logprobs: true, top_logprobs: 2, memory: false };
  const whole = await key.chat.completions.create(asked);
  assert.deepEqual(whole.choices.map((c) => c.message.content), ['Hello from the upstream.', 'Answer 2.']);
  assert.equal(whole.choices[0].logprobs.content[0].token, 'Hello');
  assert.equal(whole.choices[0].logprobs.content[0].top_logprobs.length, 2);
  const stream = await key.chat.completions.create({ ...asked, stream: true });
  const texts = ['', ''];
  let tokens = 0;
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      texts[choice.index] += choice.delta.content ?? '';
      tokens += choice.logprobs?.content?.length ?? 0;
    }
  }
  assert.deepEqual(texts, ['Hello from the upstream.', 'Answer 2.']);
  assert.equal(tokens, 8);
  await assert.rejects(key.chat.completions.create({ model: LOCAL, messages: user('Hi'), n: 2 }),
    (error) => error instanceof OpenAI.BadRequestError && error.param === 'n');
});

// JSON mode on the local engine is constrained decoding: even the untrained model answers one object.
// A JSON schema is not constrained there: refused by name, not dropped.
test('JSON mode on the local engine gives a JSON object; a JSON schema is refused by name', async () => {
  const reply = await key.chat.completions.create({
    model: LOCAL, messages: user('Hi'), response_format: { type: 'json_object' }, max_tokens: 20, memory: false });
  assert.equal(typeof JSON.parse(reply.choices[0].message.content), 'object');
  await assert.rejects(
    key.chat.completions.create({ model: LOCAL, messages: user('Hi'),
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } } }),
    (error) => error instanceof OpenAI.BadRequestError && error.param === 'response_format');
});

// The Responses API, as the openai client calls it, whole and streamed, with conversation state.
test('responses.create: text, instructions, previous_response_id, and a stream (remote engine)', async () => {
  const first = await key.responses.create({ model: REMOTE, input: 'My name is Ada', instructions: 'Be brief.' });
  assert.equal(first.output_text, 'Hello from the upstream.');
  const second = await key.responses.create({ model: REMOTE, input: 'What is my name?', previous_response_id: first.id });
  assert.equal(second.previous_response_id, first.id);
  const stream = await key.responses.create({ model: REMOTE, input: 'Hello', stream: true });
  let text = '';
  let completed;
  for await (const event of stream) {
    if (event.type === 'response.output_text.delta') text += event.delta;
    if (event.type === 'response.completed') completed = event.response;
  }
  assert.equal(text, 'Hello from the upstream.');
  assert.equal(completed.output_text ?? completed.output[0].content[0].text, 'Hello from the upstream.');
  assert.ok(completed.usage.total_tokens > 0);
});

// The Vercel AI SDK's default provider calls the Responses API (newest release that runs on Node 20).
test('the Vercel AI SDK default provider: generateText and streamText (remote engine)', async () => {
  const provider = createOpenAI({ baseURL, apiKey: env('ENGRAM_API_KEY') });
  const { text, usage } = await generateText({ model: provider(REMOTE), prompt: 'Hello', maxRetries: 0 });
  assert.equal(text, 'Hello from the upstream.');
  assert.ok(usage.outputTokens > 0);
  const streamed = streamText({ model: provider(REMOTE), prompt: 'Hello', maxRetries: 0 });
  let joined = '';
  for await (const piece of streamed.textStream) joined += piece;
  assert.equal(joined, 'Hello from the upstream.');
});

// Function tools over the Responses API: the call comes back as a function_call item, the caller
// answers it with a function_call_output item on the stored response, the model replies.
test('responses.create with a function tool, answered by previous_response_id (remote engine)', async () => {
  const tools = [{
    type: 'function', name: 'get_weather', description: 'The weather in a city', strict: false,
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  }];
  const first = await key.responses.create({ model: REMOTE, input: 'Weather in Lyon?', tools, memory: false });
  const call = first.output.find((item) => item.type === 'function_call');
  assert.equal(call.name, 'get_weather');
  assert.deepEqual(JSON.parse(call.arguments), { city: 'Lyon' });
  const second = await key.responses.create({
    model: REMOTE, tools, memory: false, previous_response_id: first.id,
    input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 C' }],
  });
  assert.equal(second.output_text, 'Hello from the upstream.');
});

// The Vercel AI SDK's tool loop on its default provider (the Responses API), whole and streamed.
for (const stream of [false, true]) {
  test(`the Vercel AI SDK default provider runs a tool (remote engine, stream: ${stream})`, async () => {
    const provider = createOpenAI({ baseURL, apiKey: env('ENGRAM_API_KEY') });
    const calls = [];
    const options = {
      model: provider(REMOTE),
      prompt: 'What is the weather in Lyon?',
      maxRetries: 0,
      stopWhen: stepCountIs(3),
      tools: {
        get_weather: tool({
          description: 'The weather in a city',
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => { calls.push(city); return 'Sunny, 21 C'; },
        }),
      },
    };
    const result = stream ? streamText(options) : await generateText(options);
    assert.equal(await result.text, 'Hello from the upstream.');
    assert.deepEqual(calls, ['Lyon']);
    assert.equal((await result.steps).length, 2);
  });
}

// Structured output over the Responses API: the SDK's generateObject sends text.format json_schema.
test('the Vercel AI SDK default provider: generateObject with a schema (remote engine)', async () => {
  const provider = createOpenAI({ baseURL, apiKey: env('ENGRAM_API_KEY') });
  const { object } = await generateObject({
    model: provider(REMOTE), prompt: 'Answer in JSON', maxRetries: 0,
    schema: z.object({ answer: z.string() }),
  });
  assert.deepEqual(object, { answer: 'Hello from the upstream.' });
});

// A conversation as an assistant: the model calls a capability (the fake upstream obeys [call:...]),
// Engram carries it out and the model answers; the client sees an ordinary stream, tool calls unseen.
test('an assistant whose capability acts: the client sees an ordinary stream (remote engine)', async () => {
  const assistant = new OpenAI({ baseURL: env('ENGRAM_ASSISTANT_BASE_URL'), apiKey: env('ENGRAM_API_KEY'), maxRetries: 0 });
  const stream = await assistant.chat.completions.create({
    model: REMOTE, stream: true, memory: false,
    messages: user('[call:manage_tasks {"action":"create","title":"Ship it"}]'),
  });
  let text = '';
  const finishes = [];
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    assert.equal(choice.delta.tool_calls, undefined);
    text += choice.delta.content ?? '';
    if (choice.finish_reason) finishes.push(choice.finish_reason);
  }
  assert.equal(text, 'Hello from the upstream.');
  assert.deepEqual(finishes, ['stop']);
  const whole = await assistant.chat.completions.create({
    model: REMOTE, memory: false, messages: user('[call:manage_tasks {"action":"list"}]') });
  assert.equal(whole.choices[0].message.content, 'Hello from the upstream.');
});

// LangChain JS's ChatOpenAI (the newest @langchain/openai that runs on Node 20), invoke and stream.
test('LangChain JS ChatOpenAI: invoke and stream (remote engine)', async () => {
  const { ChatOpenAI } = await import('@langchain/openai');
  const model = new ChatOpenAI({
    model: REMOTE,
    apiKey: env('ENGRAM_API_KEY'),
    configuration: { baseURL },
    maxRetries: 0,
  });
  const reply = await model.invoke('Hello');
  assert.equal(reply.content, 'Hello from the upstream.');
  let streamed = '';
  for await (const chunk of await model.stream('Hello')) streamed += chunk.content;
  assert.equal(streamed, 'Hello from the upstream.');
});
