/**
 * Engram's TypeScript client: the organization's memory, assistants and administration over
 * Engram's REST API, with typed errors, retries on 429 and 503 (honouring retry_after), an
 * Idempotency-Key on every memory write, pages as async iterators and timeouts. Chat goes through
 * the official OpenAI client ({@link Engram.openai}), which Engram serves unchanged.
 */

export interface EngramOptions {
  /** The server, without /v1: http://localhost:8000 */
  baseURL: string;
  /** A context access token (memory, chat) or an API key (assistants, administration). */
  apiKey: string;
  /** Per request, in milliseconds (default 30 000). */
  timeoutMs?: number;
  /** Retries of a 429 or 503 answer or a failed connection (default 2). */
  maxRetries?: number;
  fetch?: typeof fetch;
}

/** An error answer of Engram, with the fields of its error body. */
export class EngramError extends Error {
  readonly status: number;
  readonly type: string | undefined;
  readonly code: string | undefined;
  readonly param: string | undefined;
  readonly retryAfter: number | undefined;
  readonly requestId: string | undefined;

  constructor(status: number, body: any, requestId: string | undefined) {
    const error = body && typeof body.error === 'object' ? body.error : undefined;
    const message = error?.message ?? body?.message ?? `HTTP ${status}`;
    super(message);
    this.name = 'EngramError';
    this.status = status;
    this.type = error?.type ?? (typeof body?.error === 'string' ? body.error : undefined);
    this.code = error?.code;
    this.param = error?.param ?? undefined;
    this.retryAfter = error?.retry_after ?? body?.retryAfter;
    this.requestId = requestId;
  }
}

export type MemoryKind =
  | 'fact' | 'preference' | 'event' | 'instruction' | 'procedure' | 'observation';

export interface Memory {
  id: string;
  text: string;
  subject: string | null;
  memoryKind: MemoryKind;
  confidence: number;
  state: 'candidate' | 'durable' | 'suppressed' | 'tombstoned';
  agent: string | null;
  /** The end user it belongs to; null when shared by every user. */
  userId: string | null;
  /** The session or thread it came from. */
  sessionId: string | null;
  metadata: Record<string, unknown> | null;
  [field: string]: unknown;
}

export interface RankedMemory extends Memory {
  score?: number;
  explanation?: Record<string, unknown>;
}

export interface Recall {
  memories: RankedMemory[];
  /** The ready prompt block (a system message's content). */
  context: string;
}

export interface RememberOptions {
  subject?: string;
  kind?: MemoryKind;
  confidence?: number;
  metadata?: Record<string, unknown>;
  occurredAt?: string;
  /** The agent boundary; left out: the organization level. */
  agent?: string;
  /** Supplied when left out, so a retried write never stores twice. */
  idempotencyKey?: string;
  /** The session or thread it comes from. */
  sessionId?: string;
  /** When it expires (RFC 3339). */
  expiresAt?: string;
  /** From when it holds (RFC 3339). */
  validFrom?: string;
  /** The memory it replaces (closed at this one's validFrom). */
  supersedes?: string;
}

type Query = Record<string, string | number | boolean | undefined>;

export class Engram {
  readonly memory: MemoryApi;
  readonly assistants: AssistantsApi;
  readonly admin: AdminApi;
  private readonly options: Required<Omit<EngramOptions, 'fetch'>> & { fetch: typeof fetch };

  constructor(options: EngramOptions) {
    if (!options.baseURL || !options.apiKey) {
      throw new Error('Engram needs a baseURL and an apiKey');
    }
    this.options = {
      baseURL: options.baseURL.replace(/\/+$/, ''),
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs ?? 30_000,
      maxRetries: options.maxRetries ?? 2,
      fetch: options.fetch ?? globalThis.fetch,
    };
    this.memory = new MemoryApi(this);
    this.assistants = new AssistantsApi(this);
    this.admin = new AdminApi(this);
  }

  /**
   * The official OpenAI client, set up for this Engram (baseURL /v1 and this key): chat,
   * streaming, tools and the Responses API, each run inside the organization's memory.
   */
  async openai(extra: Record<string, unknown> = {}): Promise<any> {
    const { default: OpenAI } = await import('openai');
    return new OpenAI({ baseURL: `${this.options.baseURL}/v1`, apiKey: this.options.apiKey, ...extra });
  }

  /** One request, retried on 429, 503 and connection failures; the parsed JSON answer. */
  async request<T = any>(
    method: string,
    path: string,
    options: { body?: unknown; query?: Query; headers?: Record<string, string> } = {},
  ): Promise<T> {
    const url = new URL(this.options.baseURL + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.options.apiKey}`,
      Accept: 'application/json',
      ...options.headers,
    };
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.options.fetch(url, {
          method,
          headers,
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
      } catch (failure) {
        if (attempt < this.options.maxRetries) {
          await sleep(backoff(attempt));
          continue;
        }
        throw failure;
      }
      const text = await response.text();
      const body = text ? JSON.parse(text) : undefined;
      if (response.ok) return body as T;
      const error = new EngramError(
        response.status, body, response.headers.get('x-request-id') ?? undefined);
      if ((response.status === 429 || response.status === 503) && attempt < this.options.maxRetries) {
        const header = Number(response.headers.get('retry-after'));
        const wait = error.retryAfter ?? (Number.isFinite(header) && header > 0 ? header : undefined);
        await sleep(wait !== undefined ? wait * 1000 : backoff(attempt));
        continue;
      }
      throw error;
    }
  }

  /** Every item of a paged list, page after page, as Engram's cursors lead. */
  paginate<T>(path: string, query: Query, cursor: { param: string; next: string }): AsyncGenerator<T> {
    return pages<T>(this, path, query, cursor);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function backoff(attempt: number): number {
  return Math.min(8_000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
}

/** The items of a paged list, page after page, each page asked through `requester`. */
async function* pages<T>(
  requester: Pick<Requester, 'request'>,
  path: string,
  query: Query,
  cursor: { param: string; next: string },
): AsyncGenerator<T> {
  let position: string | undefined;
  do {
    const page: any = await requester.request('GET', path, { query: { ...query, [cursor.param]: position } });
    for (const item of page.data as T[]) yield item;
    position = page[cursor.next] ?? undefined;
  } while (position);
}

type RequestOptions = { body?: unknown; query?: Query; headers?: Record<string, string> };

/** What the memory APIs send through: the client, or the client for one end user. */
export interface Requester {
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<T>;
  paginate<T>(path: string, query: Query, cursor: { param: string; next: string }): AsyncGenerator<T>;
}

/** The client with every request sent for one end user (the X-Engram-User header). */
class ForUser implements Requester {
  constructor(private readonly client: Requester, private readonly userId: string) {}

  request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return this.client.request<T>(method, path, {
      ...options,
      headers: { ...options.headers, 'X-Engram-User': this.userId },
    });
  }

  paginate<T>(path: string, query: Query, cursor: { param: string; next: string }): AsyncGenerator<T> {
    return pages<T>(this, path, query, cursor);
  }
}

function memoryBase(agent?: string): string {
  return agent ? `/v1/memory/agents/${encodeURIComponent(agent)}` : '/v1/memory';
}

export class MemoryApi {
  readonly events: EventsApi;
  readonly candidates: CandidatesApi;

  constructor(private readonly client: Requester) {
    this.events = new EventsApi(client);
    this.candidates = new CandidatesApi(client);
  }

  /**
   * This memory as one end user of your app sees it: their memories and the shared ones; what
   * it remembers is theirs (docs/memory.md, "End users and sessions").
   */
  forUser(userId: string): MemoryApi {
    return new MemoryApi(new ForUser(this.client, userId));
  }

  /** Remembers one memory. */
  remember(text: string, options: RememberOptions = {}): Promise<Memory> {
    return this.client.request('POST', memoryBase(options.agent), {
      body: {
        text,
        subject: options.subject,
        memoryKind: options.kind,
        confidence: options.confidence,
        metadata: options.metadata,
        occurredAt: options.occurredAt,
        sessionId: options.sessionId,
        expiresAt: options.expiresAt,
        validFrom: options.validFrom,
        supersedes: options.supersedes,
      },
      headers: { 'Idempotency-Key': options.idempotencyKey ?? crypto.randomUUID() },
    });
  }

  /** The memories ranked for a question, and the ready prompt block. */
  async recall(
    query: string,
    options: { limit?: number; agent?: string; filters?: Record<string, unknown>; asOf?: string } = {},
  ): Promise<Recall> {
    const answer: any = await this.client.request('POST', `${memoryBase(options.agent)}/recall`, {
      body: { query, limit: options.limit, includeContext: true, filters: options.filters, asOf: options.asOf },
    });
    return { memories: answer.memories, context: answer.context?.systemBlock ?? '' };
  }

  /** Where a memory came from and every change it went through. */
  explain(id: string, options: { agent?: string } = {}): Promise<any> {
    return this.client.request('GET', `${memoryBase(options.agent)}/${id}/provenance`);
  }

  get(id: string, options: { agent?: string } = {}): Promise<Memory> {
    return this.client.request('GET', `${memoryBase(options.agent)}/${id}`);
  }

  /** Every memory of the boundary, newest first (state default durable), page by page. */
  list(options: { agent?: string; state?: string; kind?: MemoryKind; subject?: string; pageSize?: number } = {}):
    AsyncGenerator<Memory> {
    return this.client.paginate<Memory>(
      memoryBase(options.agent),
      { state: options.state, memoryKind: options.kind, subject: options.subject, limit: options.pageSize },
      { param: 'before', next: 'nextBefore' },
    );
  }

  /** Edits what a memory says (null clears subject or metadata). */
  update(
    id: string,
    patch: { text?: string; subject?: string | null; kind?: MemoryKind; confidence?: number;
      metadata?: Record<string, unknown> | null },
    options: { agent?: string } = {},
  ): Promise<Memory> {
    const { kind, ...rest } = patch;
    return this.client.request('PATCH', `${memoryBase(options.agent)}/${id}`, {
      body: kind === undefined ? rest : { ...rest, memoryKind: kind },
    });
  }

  reinforce(id: string, options: { reason?: string; actor?: string; agent?: string } = {}): Promise<Memory> {
    return this.control(id, 'reinforce', options);
  }

  suppress(id: string, options: { reason?: string; actor?: string; agent?: string } = {}): Promise<Memory> {
    return this.control(id, 'suppress', options);
  }

  restore(id: string, options: { reason?: string; actor?: string; agent?: string } = {}): Promise<Memory> {
    return this.control(id, 'restore', options);
  }

  /** Forgets a memory: it is never recalled again (kept for provenance). */
  forget(id: string, options: { agent?: string } = {}): Promise<Memory> {
    return this.client.request('DELETE', `${memoryBase(options.agent)}/${id}`);
  }

  /** Remembers what a conversation says that lasts (dryRun: only proposes). */
  extract(
    messages: { role: string; content: string }[],
    options: { agent?: string; dryRun?: boolean } = {},
  ): Promise<any> {
    return this.client.request('POST', `${memoryBase(options.agent)}/extract`, {
      body: { messages, dryRun: options.dryRun },
    });
  }

  /**
   * Erases memories for good (an end user who asks to be forgotten): their text, metadata and
   * embeddings everywhere Engram keeps them, and the end user's conversations. Starts the job and,
   * unless wait is false, resolves once it completed, with its receipt (docs/memory.md, "Erasure").
   */
  async erase(options: {
    userId?: string; sessionId?: string; subject?: string; kind?: MemoryKind;
    filters?: Record<string, unknown>; occurredAfter?: string; occurredBefore?: string;
    everything?: boolean; reason?: string; agent?: string; wait?: boolean; timeoutMs?: number;
  } = {}): Promise<any> {
    const base = memoryBase(options.agent);
    let erasure: any = await this.client.request('POST', `${base}/erase`, {
      body: {
        userId: options.userId, sessionId: options.sessionId, subject: options.subject,
        memoryKind: options.kind, filters: options.filters, occurredAfter: options.occurredAfter,
        occurredBefore: options.occurredBefore, everything: options.everything || undefined,
        reason: options.reason,
      },
    });
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    while (options.wait !== false && erasure.status !== 'completed') {
      if (Date.now() > deadline) {
        throw new Error(`erasure ${erasure.id} still running after ${options.timeoutMs ?? 120_000} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
      erasure = await this.client.request('GET', `${base}/erasures/${erasure.id}`);
    }
    return erasure;
  }

  private control(id: string, action: string, options: { reason?: string; actor?: string; agent?: string }) {
    return this.client.request<Memory>('POST', `${memoryBase(options.agent)}/${id}/${action}`, {
      body: { reason: options.reason, actor: options.actor },
    });
  }
}

export class EventsApi {
  constructor(private readonly client: Requester) {}

  /** Feeds a business event to the pipeline; it may stage memory candidates. */
  ingest(event: Record<string, unknown>, options: { agent?: string } = {}): Promise<any> {
    return this.client.request('POST', `${memoryBase(options.agent)}/events`, { body: event });
  }

  list(options: { agent?: string; type?: string; source?: string } = {}): AsyncGenerator<any> {
    return this.client.paginate(
      `${memoryBase(options.agent)}/events`,
      { type: options.type, source: options.source },
      { param: 'before', next: 'nextBefore' },
    );
  }
}

export class CandidatesApi {
  constructor(private readonly client: Requester) {}

  /** The candidates awaiting review, oldest first. */
  list(options: { agent?: string } = {}): AsyncGenerator<Memory> {
    return this.client.paginate<Memory>(
      `${memoryBase(options.agent)}/candidates`, {}, { param: 'after', next: 'nextAfter' });
  }

  approve(id: string, options: { reason?: string; agent?: string } = {}): Promise<Memory> {
    return this.client.request('POST', `${memoryBase(options.agent)}/${id}/approve`, {
      body: { reason: options.reason },
    });
  }

  reject(id: string, options: { reason?: string; agent?: string } = {}): Promise<Memory> {
    return this.client.request('POST', `${memoryBase(options.agent)}/${id}/reject`, {
      body: { reason: options.reason },
    });
  }
}

export class AssistantsApi {
  constructor(private readonly client: Engram) {}

  async create(name: string, type: 'org_shared' | 'personal' = 'org_shared'): Promise<any> {
    return (await this.client.request('POST', '/api/assistants', { body: { name, type } })).assistant;
  }

  async list(): Promise<any[]> {
    return (await this.client.request('GET', '/api/assistants')).assistants;
  }

  async get(id: string): Promise<any> {
    return (await this.client.request('GET', `/api/assistants/${id}`)).assistant;
  }

  delete(id: string): Promise<any> {
    return this.client.request('DELETE', `/api/assistants/${id}`);
  }

  /** The assistant's capabilities and their version (the ETag a change must name). */
  capabilities(id: string): Promise<any> {
    return this.client.request('GET', `/api/assistants/${id}/capabilities`);
  }

  /** Replaces the capabilities; with version, only if nobody changed them since (else 412). */
  setCapabilities(
    id: string,
    change: { capabilities: string[]; capabilityConfigs?: Record<string, unknown> },
    version?: number,
  ): Promise<any> {
    return this.client.request('PATCH', `/api/assistants/${id}/capabilities`, {
      body: change,
      headers: version === undefined ? {} : { 'If-Match': `"${version}"` },
    });
  }
}

export class AdminApi {
  constructor(private readonly client: Engram) {}

  createOrganization(name: string, plan = 'free'): Promise<any> {
    return this.client.request('POST', '/v1/organizations', { body: { name, plan } });
  }

  /** Every organization (account key), page by page. */
  async *organizations(): AsyncGenerator<any> {
    let after: string | undefined;
    for (;;) {
      const page: any = await this.client.request('GET', '/v1/organizations', { query: { after } });
      for (const org of page.data) yield org;
      if (!page.has_more || page.data.length === 0) return;
      after = page.data[page.data.length - 1].id;
    }
  }

  organization(id: string): Promise<any> {
    return this.client.request('GET', `/v1/organizations/${id}`);
  }

  createUser(orgId: string, user: { email: string; role?: string; name?: string; password?: string }): Promise<any> {
    return this.client.request('POST', `/v1/organizations/${orgId}/users`, { body: user });
  }

  /** A context access token; its secret is in the answer's token, shown once. */
  createToken(orgId: string, token: { name: string; scopes: string[]; agents?: string[] }): Promise<any> {
    return this.client.request('POST', `/v1/organizations/${orgId}/tokens`, { body: token });
  }

  async tokens(orgId: string): Promise<any[]> {
    return (await this.client.request('GET', `/v1/organizations/${orgId}/tokens`)).data;
  }

  revokeToken(orgId: string, id: string): Promise<any> {
    return this.client.request('DELETE', `/v1/organizations/${orgId}/tokens/${id}`);
  }

  /** An API key (an account key only); its secret is in the answer's token, shown once. */
  createApiKey(orgId: string, key: { name: string; permissions: string[]; rate_limit?: number }): Promise<any> {
    return this.client.request('POST', `/v1/organizations/${orgId}/api-keys`, { body: key });
  }

  async apiKeys(orgId: string): Promise<any[]> {
    return (await this.client.request('GET', `/v1/organizations/${orgId}/api-keys`)).data;
  }

  revokeApiKey(orgId: string, id: string): Promise<any> {
    return this.client.request('DELETE', `/v1/organizations/${orgId}/api-keys/${id}`);
  }
}
