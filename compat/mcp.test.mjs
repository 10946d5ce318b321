// The official MCP TypeScript SDK client against Engram's memory server at /mcp (Streamable HTTP).
// Run by McpClientTest, which passes in:
//   ENGRAM_MCP_URL        http://127.0.0.1:<port>/mcp
//   ENGRAM_TOKEN          a context access token with every memory scope
//   ENGRAM_READER_TOKEN   a context access token with memory:read only
//   ENGRAM_AGENT_TOKEN    a context access token bound to the agent "sales"
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this suite through McpClientTest`);
  return value;
};

async function connect(token) {
  const client = new Client({ name: 'engram-mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(env('ENGRAM_MCP_URL')), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

const text = (result) => result.content.map((part) => part.text).join('');

test('remember, recall, list and forget through MCP tools', async () => {
  const client = await connect(env('ENGRAM_TOKEN'));
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ['forget', 'list_memories', 'recall', 'remember']);
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  // The hints a client shows or acts on, and the values each argument may take.
  assert.equal(byName.recall.annotations.readOnlyHint, true);
  assert.equal(byName.list_memories.annotations.readOnlyHint, true);
  assert.equal(byName.forget.annotations.destructiveHint, true);
  assert.equal(byName.remember.annotations.readOnlyHint, false);
  assert.ok(byName.remember.inputSchema.properties.memoryKind.enum.includes('preference'));
  // Every tool declares its result: the client checks each structured result against it.
  for (const tool of tools) assert.equal(tool.outputSchema.type, 'object', tool.name);
  const remembered = await client.callTool({
    name: 'remember',
    arguments: { text: 'The Lyon warehouse closes at six on Fridays', subject: 'Lyon' },
  });
  assert.equal(remembered.isError, false);
  const id = remembered.structuredContent.id;
  assert.match(id, /^mem_/);
  // The same again is the same memory, reinforced.
  const again = await client.callTool({
    name: 'remember',
    arguments: { text: 'The Lyon warehouse closes at six on Fridays.', subject: 'Lyon' },
  });
  assert.equal(again.structuredContent.id, id);
  assert.equal(again.structuredContent.deduplicated, true);
  const recalled = await client.callTool({ name: 'recall', arguments: { query: 'When does the Lyon warehouse close?' } });
  assert.equal(recalled.structuredContent.memories[0].id, id);
  assert.match(text(recalled), /six on Fridays/);
  const listed = await client.callTool({ name: 'list_memories', arguments: { limit: 5 } });
  assert.ok(listed.structuredContent.memories.some((m) => m.id === id));
  const resources = await client.listResources();
  assert.equal(resources.resources[0].uri, 'memory://recent');
  const recent = await client.readResource({ uri: 'memory://recent' });
  assert.match(recent.contents[0].text, /Lyon warehouse/);
  const forgotten = await client.callTool({ name: 'forget', arguments: { id, reason: 'moved' } });
  assert.equal(forgotten.structuredContent.state, 'tombstoned');
  const after = await client.callTool({ name: 'recall', arguments: { query: 'Lyon warehouse' } });
  assert.ok(!after.structuredContent.memories.some((m) => m.id === id));
  await client.close();
});

test('a token sees only the tools its scopes allow, and a refused call is a tool error', async () => {
  const reader = await connect(env('ENGRAM_READER_TOKEN'));
  const { tools } = await reader.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ['list_memories', 'recall']);
  const refused = await reader.callTool({ name: 'remember', arguments: { text: 'x' } });
  assert.equal(refused.isError, true);
  assert.match(text(refused), /memory:write/);
  const bad = await reader.callTool({ name: 'recall', arguments: {} });
  assert.equal(bad.isError, true);
  assert.match(text(bad), /query/);
  await reader.close();
});

test('an agent-bound token works inside its agent only, named or implied', async () => {
  const agent = await connect(env('ENGRAM_AGENT_TOKEN'));
  const inside = await agent.callTool({ name: 'remember', arguments: { text: 'Sales prefers morning calls', agent: 'sales' } });
  assert.equal(inside.isError, false);
  assert.equal(inside.structuredContent.agent, 'sales');
  const outside = await agent.callTool({ name: 'remember', arguments: { text: 'x', agent: 'support' } });
  assert.equal(outside.isError, true);
  // Bound to one agent, the token need not name it in every call.
  const implied = await agent.callTool({ name: 'list_memories', arguments: {} });
  assert.equal(implied.isError, false);
  assert.ok(implied.structuredContent.memories.some((m) => m.text === 'Sales prefers morning calls'));
  await agent.close();
});

test("end users and sessions in the tools: a user's memory is theirs alone", async () => {
  const client = await connect(env('ENGRAM_TOKEN'));
  const { tools } = await client.listTools();
  for (const tool of tools) {
    assert.ok(tool.inputSchema.properties.userId, `${tool.name} takes userId`);
  }
  const ada = await client.callTool({
    name: 'remember',
    arguments: { text: 'My dentist is on Rua Augusta', userId: 'ada', sessionId: 'chat-7' },
  });
  assert.equal(ada.isError, false, text(ada));
  assert.equal(ada.structuredContent.userId, 'ada');
  assert.equal(ada.structuredContent.sessionId, 'chat-7');
  const asAda = await client.callTool({ name: 'recall', arguments: { query: 'dentist Rua Augusta', userId: 'ada' } });
  assert.ok(asAda.structuredContent.memories.some((m) => m.id === ada.structuredContent.id));
  const asBob = await client.callTool({ name: 'recall', arguments: { query: 'dentist Rua Augusta', userId: 'bob' } });
  assert.ok(!asBob.structuredContent.memories.some((m) => m.id === ada.structuredContent.id));
  const bobForgets = await client.callTool({ name: 'forget', arguments: { id: ada.structuredContent.id, userId: 'bob' } });
  assert.equal(bobForgets.isError, true);
  const session = await client.callTool({ name: 'list_memories', arguments: { userId: 'ada', sessionId: 'chat-7' } });
  assert.deepEqual(session.structuredContent.memories.map((m) => m.id), [ada.structuredContent.id]);
  await client.close();
});

test('a bad token is refused before any MCP exchange', async () => {
  await assert.rejects(connect('engc_not_a_real_token_000000000000000000'));
});
