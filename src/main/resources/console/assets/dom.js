// Building the page from data. Text is only ever set as text (text nodes, setAttribute), never
// parsed as HTML, so a memory or a name that holds markup shows as the characters it is.

/** An element: attributes (on* are listeners; false or null leave one out) and children. */
export function h(tag, attributes, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === false || value == null) continue;
    if (name.startsWith('on')) {
      element.addEventListener(name.slice(2), value);
    } else if (name === 'href' && /^\s*javascript:/i.test(String(value))) {
      continue; // links are ours; a script URL is never one of them
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child == null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

let counter = 0;
/** An id unique in the page, for labels and descriptions. */
export function uid(prefix) {
  counter += 1;
  return `${prefix}-${counter}`;
}

/** A date and time in the reader's locale, from ISO text, epoch seconds or milliseconds. */
export function when(value) {
  if (value == null || value === '') return '—';
  let date;
  if (typeof value === 'number') date = new Date(value < 1e12 ? value * 1000 : value);
  else date = new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString();
}

/** A table with a caption, column headings and rows of cells (nodes or text). */
export function table(caption, headings, rows, empty = 'Nothing here yet.') {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h('table', {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, headings.map((heading) => h('th', { scope: 'col' }, heading)))),
    h('tbody', {}, rows.map((cells) => h('tr', {}, cells.map((cell) => h('td', {}, cell))))));
}
