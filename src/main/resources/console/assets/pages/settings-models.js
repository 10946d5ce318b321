// Models and providers: the organization's providers (the key sealed, never shown; a check asks
// the provider for its models), its models and the deployments each routes to (the server's
// models too, which it may hide), and which deployment answered its requests in the last day.
import { get, send } from '../api.js';
import { h, fill, table } from '../dom.js';
import { field, notify, onAction } from '../forms.js';
import { collection } from '../collection.js';

const KINDS = [
  { value: 'openai', label: 'OpenAI-compatible (OpenAI, vLLM, llama.cpp, Ollama...)' },
  { value: 'azure_openai', label: 'Azure OpenAI' },
  { value: 'anthropic', label: 'Anthropic' },
  { value: 'gemini', label: 'Google Gemini' },
];

export async function render(main, context) {
  const org = `/v1/organizations/${encodeURIComponent(context.orgId)}`;
  const providers = h('section', { 'aria-labelledby': 'providers-title' });
  const models = h('section', { 'aria-labelledby': 'models-title' });
  const answered = h('section', { 'aria-labelledby': 'answered-title' });
  main.append(providers, models, answered);
  await drawProviders(providers, org, () => drawModels(models, org));
  await Promise.all([drawModels(models, org), drawAnswered(answered, org)]);
}

function drawProviders(section, org, providersChanged) {
  return collection(section, {
    title: 'Providers', id: 'providers-title', path: `${org}/providers`, noun: 'provider',
    help: 'Model servers this organization routes its own models to. A key is stored sealed and never shown again.',
    columns: [['Name', (p) => p.name], ['Kind', (p) => p.kind], ['Base URL', (p) => h('code', {}, p.base_url)],
      ['Key', (p) => (p.api_key_set ? 'set' : 'none')]],
    form: () => {
      const name = field({ label: 'Name', name: 'name', placeholder: 'openai-eu' });
      const kind = field({ label: 'Kind', name: 'kind', kind: 'select', options: KINDS, value: 'openai' });
      const url = field({ label: 'Base URL', name: 'base_url', placeholder: 'https://api.openai.com/v1' });
      const key = field({ label: 'API key', name: 'api_key', kind: 'password', autocomplete: 'off' });
      const version = field({ label: 'API version (Azure OpenAI only)', name: 'api_version', placeholder: '2024-10-21' });
      return {
        nodes: [name, kind, url, key, version],
        body: () => {
          const body = { name: name.input.value.trim(), kind: kind.input.value, base_url: url.input.value.trim() };
          if (key.input.value) body.api_key = key.input.value;
          if (version.input.value.trim()) body.api_version = version.input.value.trim();
          return body;
        },
      };
    },
    createLabel: 'Add provider',
    created: () => providersChanged(),
    name: (p) => p.name,
    remove: { label: 'Remove', question: (p) => `Remove the provider ${p.name}? A model that routes to it must change first.` },
    actions: (p) => {
      const check = h('button', { type: 'button', class: 'secondary' }, 'Check');
      onAction(check, async () => {
        const answer = await send('POST', `${org}/providers/${encodeURIComponent(p.id)}/check`, {});
        notify(answer.ok
          ? `${p.name} answered with ${answer.models.length} models in ${answer.latency_ms} ms.`
          : `${p.name}: ${answer.error.message}`, answer.ok ? 'ok' : 'fail');
      });
      return [check];
    },
  });
}

async function drawModels(section, org) {
  const providers = (await get(`${org}/providers`)).data;
  const names = new Map(providers.map((p) => [p.id, p.name]));
  const choices = providers.map((p) => ({ value: p.id, label: `${p.name} (${p.kind})` }));
  return collection(section, {
    title: 'Models', id: 'models-title', path: `${org}/models`, noun: 'model',
    help: 'Each model routes to its deployments: the first priority group first, the next one when it fails (before any byte reached the client).',
    columns: [['Model', (m) => h('code', {}, m.id)], ['Owner', (m) => (m.owned_by === 'server' ? `server${m.hidden ? ' (hidden)' : ''}` : 'this organization')],
      ['Type', (m) => m.type],
      ['Deployments', (m) => h('ul', { class: 'plain' }, m.deployments.map((d) => h('li', {},
        `${names.get(d.provider_id) || d.provider_id} · ${d.model} · priority ${d.priority}, weight ${d.weight}`)))],
      ['Price per million tokens', (m) => (m.pricing.input_per_million == null && m.pricing.output_per_million == null
        ? '—' : `$${m.pricing.input_per_million ?? 0} in, $${m.pricing.output_per_million ?? 0} out`)]],
    form: choices.length ? () => {
      const id = field({ label: 'Model id (what clients send)', name: 'id', placeholder: 'team-chat' });
      const type = field({ label: 'Type', name: 'type', kind: 'select', value: 'chat',
        options: [{ value: 'chat' }, { value: 'embedding' }] });
      const first = field({ label: 'Provider', name: 'provider', kind: 'select', options: choices });
      const model = field({ label: "The provider's model name", name: 'model', placeholder: 'gpt-4o-mini' });
      const fallback = field({ label: 'Fallback provider (optional)', name: 'fallback', kind: 'select',
        options: [{ value: '', label: 'None' }, ...choices] });
      const fallbackModel = field({ label: "The fallback's model name", name: 'fallback_model' });
      return {
        nodes: [id, type, first, model, fallback, fallbackModel],
        body: () => {
          const deployments = [{ provider_id: first.input.value, model: model.input.value.trim(), priority: 0 }];
          if (fallback.input.value) {
            deployments.push({ provider_id: fallback.input.value, model: fallbackModel.input.value.trim(), priority: 1 });
          }
          return { id: id.input.value.trim(), type: type.input.value, deployments };
        },
      };
    } : null,
    name: (m) => m.id,
    remove: { label: 'Remove', when: (m) => m.owned_by === 'organization', question: (m) => `Remove the model ${m.id}?` },
    actions: (m, redraw) => {
      if (m.owned_by !== 'server') return [];
      const toggle = h('button', { type: 'button', class: 'secondary' }, m.hidden ? 'Show' : 'Hide');
      onAction(toggle, async () => {
        await send('PATCH', `${org}/models/${encodeURIComponent(m.id)}`, { hidden: !m.hidden });
        notify(`${m.id} ${m.hidden ? 'shown' : 'hidden'}.`);
        await redraw();
      });
      return [toggle];
    },
  });
}

/** The last day's requests of routed models by the deployment that answered, with their cost. */
async function drawAnswered(section, org) {
  const usage = await get(`${org}/usage`);
  const byDeployment = new Map();
  for (const row of usage.data.filter((r) => r.deployment)) {
    const key = `${row.model} ${row.deployment}`;
    const sum = byDeployment.get(key) || { model: row.model, deployment: row.deployment, requests: 0, errors: 0, tokens: 0, cost: 0 };
    sum.requests += row.requests;
    sum.errors += row.errors;
    sum.tokens += row.total_tokens;
    sum.cost += row.cost_usd;
    byDeployment.set(key, sum);
  }
  fill(section, h('h2', { id: 'answered-title' }, 'Which deployment answered'),
    table('Requests of the last day by model and deployment', ['Model', 'Deployment', 'Requests', 'Errors', 'Tokens', 'Cost'],
      [...byDeployment.values()].map((s) => [h('code', {}, s.model), h('code', {}, s.deployment), String(s.requests),
        String(s.errors), String(s.tokens), `$${s.cost.toFixed(6)}`]),
      'No routed requests in the last day.'));
}
