// The console's shell: who is signed in, the navigation, sign-out, and the page for this path.
import { api, signInAgain } from './api.js';
import { h, fill } from './dom.js';
import { notify } from './forms.js';

const PAGES = {
  assistants: () => import('./pages/assistants.js'),
  assistant: () => import('./pages/assistant.js'),
  memory: () => import('./pages/memory.js'),
  reflection: () => import('./pages/reflection.js'),
  usage: () => import('./pages/usage.js'),
  requests: () => import('./pages/requests.js'),
  guardrails: () => import('./pages/guardrails.js'),
  settings: () => import('./pages/settings.js'),
};

/** The page module and its parameters for a /console path. */
function route(path) {
  const parts = path.replace(/^\/console\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const section = parts[0] || 'assistants';
  if (section === 'assistants' && parts[1]) return { page: 'assistant', section, rest: parts.slice(1) };
  return { page: PAGES[section] ? section : null, section, rest: parts.slice(1) };
}

function header(session) {
  const nav = document.getElementById('nav');
  const { section } = route(location.pathname);
  nav.querySelectorAll('a').forEach((a) => {
    if (a.getAttribute('href') === `/console/${section}`) a.setAttribute('aria-current', 'page');
  });
  const signOut = h('button', { type: 'button', class: 'link' }, 'Sign out');
  signOut.addEventListener('click', async () => {
    signOut.disabled = true;
    try {
      await api('POST', '/api/auth/logout', undefined, { signInOn401: false });
    } catch (error) {
      if (error.status !== 401) {
        notify(error.message, 'fail');
        signOut.disabled = false;
        return;
      }
    }
    location.assign('/?reason=signed-out');
  });
  const user = session.user;
  fill(document.getElementById('who'),
    (session.organizations || []).length > 1 ? switcher(session) : h('span', { class: 'org' }, session.organization.name),
    h('span', { class: 'plan' }, session.organization.plan),
    user ? h('span', { class: 'user' }, user.name || user.email,
      h('span', { class: 'role', title: 'Your role in this organization' }, user.role)) : null,
    signOut);
}

/** The person's organizations (where their password opened at sign-in): switch in place. */
function switcher(session) {
  const select = h('select', { id: 'organization-switcher', 'aria-label': 'Organization' },
    session.organizations.map((o) => h('option', { value: o.id, selected: o.id === session.organization.id },
      `${o.name} (${o.role})`)));
  const go = h('button', { type: 'button', class: 'secondary' }, 'Switch');
  go.addEventListener('click', async () => {
    if (select.value === session.organization.id) return;
    go.disabled = true;
    try {
      await api('POST', '/api/auth/switch', { organizationId: select.value });
      // The same section in the other organization (what this page showed is not there).
      location.assign(`/console/${route(location.pathname).section}`);
    } catch (error) {
      if (error.status !== 401) notify(error.message, 'fail');
      go.disabled = false;
    }
  });
  return h('span', { class: 'switcher' }, select, go);
}

async function start() {
  const main = document.getElementById('main');
  const where = route(location.pathname);
  // The page's module loads while the session is asked for: two waits become one.
  const loading = where.page ? PAGES[where.page]() : null;
  loading?.catch(() => {}); // a failure is reported below, once the session is known
  let session;
  try {
    session = (await api('GET', '/api/auth/session')).json;
  } catch (error) {
    if (error.status !== 401) fill(main, h('p', { class: 'error' }, error.message));
    return;
  }
  if (!session.user) {
    // An API key in a browser is not a person: the console is for signed-in people.
    signInAgain('expired');
    return;
  }
  header(session);
  const context = {
    session,
    orgId: session.organization.id,
    role: session.user.role,
    manages: session.user.role === 'owner' || session.user.role === 'admin',
    rest: where.rest,
    query: new URLSearchParams(location.search),
  };
  if (!where.page) {
    fill(main, h('h1', {}, 'Page not found'),
      h('p', {}, 'No console page is at this address. ', h('a', { href: '/console/assistants' }, 'Go to assistants')));
    return;
  }
  try {
    const module = await loading;
    fill(main);
    await module.render(main, context);
    // When the page is drawn, for bench/console-load.mjs (time since navigation began).
    performance.mark('engram:page-drawn');
  } catch (error) {
    if (error.status === 401) return;
    fill(main, h('h1', {}, 'Something went wrong'), h('p', { class: 'error', role: 'alert' }, error.message));
  }
}

start();
