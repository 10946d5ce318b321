// Forms: labelled fields, the server's errors next to the field they name, a submit that cannot
// run twice at once, and confirmation before what cannot be undone.
import { h, fill, uid } from './dom.js';

/**
 * A labelled input. kind: text | email | password | number | checkbox | select | textarea |
 * list (one value per line). Returns the wrapper; its `.input` is the control.
 */
export function field({ label, name, kind = 'text', value = '', help = null, required = false,
  options = [], min = null, max = null, placeholder = null, autocomplete = null }) {
  const id = uid(name.replace(/[^A-Za-z0-9_-]/g, '-'));
  const helpId = help ? `${id}-help` : null;
  const errorId = `${id}-error`;
  const described = [helpId, errorId].filter(Boolean).join(' ');
  const common = { id, name, 'aria-describedby': described, required };
  let input;
  if (kind === 'select') {
    input = h('select', common, options.map((o) => h('option',
      { value: o.value, selected: String(o.value) === String(value) }, o.label ?? o.value)));
  } else if (kind === 'textarea' || kind === 'list') {
    const text = Array.isArray(value) ? value.join('\n') : value;
    input = h('textarea', { ...common, rows: kind === 'list' ? 4 : 3, placeholder }, text ?? '');
  } else if (kind === 'checkbox') {
    input = h('input', { ...common, type: 'checkbox', checked: Boolean(value) });
  } else {
    input = h('input', {
      ...common, type: kind, value: value ?? '', min, max, placeholder, autocomplete,
    });
  }
  const wrapper = h('div', { class: `field field-${kind}`, 'data-field': name },
    kind === 'checkbox' ? [input, h('label', { for: id }, label)] : [h('label', { for: id }, label), input],
    help ? h('p', { class: 'help', id: helpId }, help) : null,
    h('p', { class: 'error', id: errorId }));
  wrapper.input = input;
  return wrapper;
}

/** A field's value as the API wants it. */
export function valueOf(wrapper, kind) {
  const input = wrapper.input;
  if (kind === 'checkbox') return input.checked;
  if (kind === 'number' || kind === 'integer') return input.value === '' ? null : Number(input.value);
  if (kind === 'list') return input.value.split('\n').map((s) => s.trim()).filter(Boolean);
  return input.value;
}

/** Clears a form's errors. */
export function clearErrors(form) {
  form.querySelectorAll('.error').forEach((e) => fill(e));
  form.querySelectorAll('[aria-invalid]').forEach((e) => e.removeAttribute('aria-invalid'));
}

/**
 * Shows an ApiError: next to the field it names (data-field), else at the form's top. The
 * validation entries of the capability routes name a capability and a field.
 */
export function showError(form, error) {
  const placed = [];
  const place = (name, message) => {
    const wrapper = name ? form.querySelector(`[data-field="${CSS.escape(name)}"]`) : null;
    if (!wrapper) return false;
    fill(wrapper.querySelector('.error'), message);
    wrapper.querySelector('input, select, textarea')?.setAttribute('aria-invalid', 'true');
    placed.push(wrapper);
    return true;
  };
  const loose = [];
  for (const v of error.validation || []) {
    if (!place(v.field, v.error) && !place(v.capabilityId, v.error)) loose.push(v.error);
  }
  if (!(error.validation || []).length && !place(error.field, error.message)) loose.push(error.message);
  const top = form.querySelector(':scope > .form-error');
  if (top) fill(top, loose.join(' '));
  const first = placed[0]?.querySelector('input, select, textarea');
  if (first) first.focus();
  else top?.focus();
}

/** The message area at the top of a form (focusable, so errors are announced and reachable). */
export function formError() {
  return h('p', { class: 'error form-error', role: 'alert', tabindex: '-1' });
}

/** What a submit handler returns when it leaves the page: the form stays busy until it is gone. */
export const LEAVING = Symbol('leaving');

/**
 * Runs a submit once at a time: the buttons are disabled and the form marked busy until the
 * server answers (or, when the handler returns LEAVING, for good: a double click's second click
 * landing after a fast answer would otherwise submit again before the next page loads). The form
 * keeps what was typed on error.
 */
export function onSubmit(form, handler) {
  let busy = false;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (busy) return;
    busy = true;
    const buttons = form.querySelectorAll('button');
    buttons.forEach((b) => { b.disabled = true; });
    form.setAttribute('aria-busy', 'true');
    clearErrors(form);
    try {
      if ((await handler(event)) === LEAVING) return;
    } catch (error) {
      if (error.status === 401) return; // signing in again: the page is going
      showError(form, error);
    }
    busy = false;
    buttons.forEach((b) => { b.disabled = false; });
    form.removeAttribute('aria-busy');
  });
}

/** Asks before something that cannot be undone; resolves true when confirmed. */
export function confirmAction(message, confirmLabel) {
  return new Promise((resolve) => {
    const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
    const confirm = h('button', { type: 'button', class: 'danger' }, confirmLabel);
    const dialog = h('dialog', { 'aria-labelledby': 'confirm-title' },
      h('h2', { id: 'confirm-title' }, 'Are you sure?'),
      h('p', {}, message),
      h('div', { class: 'actions' }, cancel, confirm));
    const close = (answer) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    cancel.addEventListener('click', () => close(false));
    confirm.addEventListener('click', () => close(true));
    dialog.addEventListener('cancel', (e) => { e.preventDefault(); close(false); });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}

/** A passing message in the banner (announced politely). */
export function notify(message, kind = 'ok') {
  const banner = document.getElementById('banner');
  if (!banner) return;
  banner.setAttribute('role', kind === 'ok' ? 'status' : 'alert');
  banner.className = kind;
  fill(banner, message);
}

/** Runs an action from a button (not a form), with the same once-at-a-time rule. */
export function onAction(button, handler) {
  button.addEventListener('click', async () => {
    if (button.disabled) return;
    button.disabled = true;
    try {
      await handler();
    } catch (error) {
      if (error.status !== 401) notify(error.message, 'fail');
    } finally {
      button.disabled = false;
    }
  });
}
