// Every call the console makes goes through here: the same routes SDKs call, with the session
// cookie, the CSRF token on state changes, and one error shape whatever the route family.

/** An answer that was not a success, or no answer at all (status 0). */
export class ApiError extends Error {
  constructor(status, message, { code = null, field = null, validation = [] } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
    this.validation = validation;
  }
}

function csrfToken() {
  const cookie = document.cookie.split('; ').find((c) => c.startsWith('engram_csrf='));
  return cookie ? decodeURIComponent(cookie.slice('engram_csrf='.length)) : '';
}

/** A random key for Idempotency-Key (crypto.randomUUID needs a secure context; this does not). */
export function freshKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Where to go to sign in again, and back here after. */
export function signInAgain(reason) {
  const next = location.pathname + location.search;
  location.assign(`/?next=${encodeURIComponent(next)}${reason ? `&reason=${reason}` : ''}`);
}

/**
 * Calls a route. Resolves {json, headers, status}; rejects with an ApiError. A 401 on a signed-in
 * page means the session ended: back to sign-in, then to this page.
 */
export async function api(method, path, body,
  { idempotencyKey = null, signInOn401 = true, headers: extra = {} } = {}) {
  const headers = { Accept: 'application/json', ...extra };
  const multipart = body instanceof FormData; // files: the browser writes the boundary
  if (body !== undefined && !multipart) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD') headers['X-CSRF-Token'] = csrfToken();
  if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined || multipart ? body : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'The server could not be reached. Check the connection and try again: '
      + 'what you entered is still here.');
  }
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (response.ok) return { json, headers: response.headers, status: response.status };
  if (response.status === 401 && signInOn401) {
    signInAgain('expired');
    throw new ApiError(401, 'Your session has ended; sign in again.');
  }
  throw errorOf(response.status, json);
}

/** Shorthands that resolve to the JSON body. */
export const get = async (path) => (await api('GET', path)).json;
export const send = async (method, path, body, options) =>
  (await api(method, path, body, options)).json;

function errorOf(status, json) {
  if (json && json.error && typeof json.error === 'object') {
    // The /v1 shape: {error: {message, type, code, param}}
    return new ApiError(status, json.error.message || 'The request failed', {
      code: json.error.code, field: json.error.param,
    });
  }
  if (json && json.success === false) {
    // The /api shape: {success, error, message, validationErrors}
    const validation = json.validationErrors || [];
    const message = json.message || (validation.length ? validation.map((v) => v.error).join('; ')
      : json.error);
    const error = new ApiError(status, message || 'The request failed', {
      code: json.error, field: json.field || null, validation,
    });
    error.body = json;
    return error;
  }
  if (status >= 500) {
    return new ApiError(status, `The server failed (${status}). Try again in a moment: `
      + 'what you entered is still here.');
  }
  return new ApiError(status, `The request failed (${status}).`);
}
