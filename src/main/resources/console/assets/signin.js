// The sign-in page: signs in, then goes back to the page the person was on (or the console).
import { api } from './api.js';
import { fill, h } from './dom.js';

const form = document.getElementById('signin');
const error = document.getElementById('signin-error');
const params = new URLSearchParams(location.search);

/** Only a path of this console may be the next page: never another site. */
function nextPage() {
  const next = params.get('next');
  return next && /^\/console(\/|$)/.test(next) && !next.startsWith('//') ? next : '/console/assistants';
}

if (params.get('reason') === 'expired') {
  fill(document.getElementById('notice'), 'Your session ended. Sign in again to go back to where you were.');
} else if (params.get('reason') === 'signed-out') {
  fill(document.getElementById('notice'), 'You are signed out.');
}

// Already signed in (a session leaves its readable CSRF cookie): straight on.
if (document.cookie.split('; ').some((c) => c.startsWith('engram_csrf=') && c.length > 'engram_csrf='.length)) {
  api('GET', '/api/auth/session', undefined, { signInOn401: false })
    .then(() => location.replace(nextPage()))
    .catch(() => {});
}

let busy = false;
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (busy) return;
  busy = true;
  const button = form.querySelector('button');
  button.disabled = true;
  fill(error);
  const body = { email: form.email.value.trim(), password: form.password.value };
  const organization = form.organization.value;
  if (organization) body.organizationId = organization;
  try {
    await api('POST', '/api/auth/login', body, { signInOn401: false });
    location.assign(nextPage());
  } catch (e) {
    if (e.field === 'organizationId' && e.body?.organizations) {
      fill(form.organization, e.body.organizations.map((o) => h('option', { value: o.id }, o.name)));
      document.getElementById('organization-field').hidden = false;
      form.organization.focus();
      fill(error, 'Choose the organization, then sign in.');
    } else {
      fill(error, e.status === 401 ? 'That email and password do not match an account.' : e.message);
    }
  } finally {
    busy = false;
    button.disabled = false;
  }
});
