// Search across every stored session (GET /api/search), on the sessions
// list page: a box with its filters above the list, and the matching events
// as links to their place in their session's timeline.
//
// As everywhere in this UI, text from the store reaches the page through
// textContent only: a snippet is cut into Text nodes and <mark> elements by
// the highlight offsets (code points) the API gives.

import { api, h, str, num, fmtWhen, parseTime, debounce, sessionPath, STATUSES } from './common.js';

const typeNames = {
  'message': 'message', 'thinking': 'thinking', 'tool.call': 'tool call',
  'tool.result': 'tool output', 'session.title': 'title',
};

const input = h('input', { id: 'search-all', name: 'q', type: 'search', autocomplete: 'off', spellcheck: 'false',
  placeholder: 'Search messages, thinking, tool inputs and outputs, titles…', 'aria-describedby': 'search-help' });
const field = (label, el) => h('label', { class: 'filter' }, h('span', { class: 'filter-label', text: label }), el);
const status = h('select', { id: 'search-status', name: 'status' }, h('option', { value: '', text: 'All' }),
  ...STATUSES.map((s) => h('option', { value: s, text: s })));
const harness = h('input', { id: 'search-harness', name: 'harness', type: 'text', placeholder: 'any', size: '12' });
const model = h('input', { id: 'search-model', name: 'model', type: 'text', placeholder: 'any', size: '14' });
const project = h('input', { id: 'search-project', name: 'project', type: 'text', placeholder: '/path/to/project', size: '18' });
const since = h('input', { id: 'search-since', name: 'since', type: 'date', title: 'From the start of this day' });
const until = h('input', { id: 'search-until', name: 'until', type: 'date', title: 'To the end of this day' });
const note = h('p', { id: 'search-note', class: 'search-note', role: 'status' });
const results = h('ol', { id: 'search-results', class: 'search-results' });
const form = h('form', { id: 'search-form', class: 'search-form', role: 'search' },
  h('label', { class: 'filter filter-search search-box' },
    h('span', { class: 'filter-label', text: 'Search everything' }), input),
  h('div', { class: 'filters search-filters' },
    field('Harness', harness), field('Model', model), field('Project', project),
    field('Status', status), field('Since', since), field('Until', until)),
  h('p', { id: 'search-help', class: 'search-help',
    text: 'Every word must match; "quoted words" in order; pars* for a prefix.' }),
  note, results);

const main = document.querySelector('main');
main.insertBefore(form, document.getElementById('filters'));

/** marked returns the snippet as nodes, its highlights in <mark>. */
function marked(snippet, highlights) {
  const chars = Array.from(snippet);
  const out = [];
  let at = 0;
  for (const r of Array.isArray(highlights) ? highlights : []) {
    const [s, e] = [num(r[0]), num(r[1])];
    if (!(s >= at && e > s && e <= chars.length)) continue;
    if (s > at) out.push(document.createTextNode(chars.slice(at, s).join('')));
    out.push(h('mark', { text: chars.slice(s, e).join('') }));
    at = e;
  }
  if (at < chars.length) out.push(document.createTextNode(chars.slice(at).join('')));
  return out;
}

function hitItem(hit) {
  const id = str(hit.session);
  const seq = num(hit.seq);
  const type = str(hit.type);
  const when = parseTime(hit.ts);
  const link = h('a', { class: 'search-hit', href: sessionPath(id) + '#' + seq },
    h('span', { class: 'search-hit-head' },
      h('span', { class: 'search-hit-title', text: str(hit.title) || id }),
      h('span', { class: 'search-hit-meta', text: [typeNames[type] || type, '#' + seq, str(hit.harness), when ? fmtWhen(when) : ''].filter(Boolean).join(' · ') })),
    h('span', { class: 'search-hit-snippet' }, ...marked(str(hit.snippet), hit.highlights)));
  return h('li', {}, link);
}

/** localDay is the start of a date input's day (plus days) in this browser's time zone, as RFC 3339. */
function localDay(value, days) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return '';
  const d = new Date(value + 'T00:00:00');
  d.setDate(d.getDate() + days);
  return isNaN(d) ? '' : d.toISOString();
}

// The query is kept in the page URL (?search=), beside the list's own
// filters, so that a reload, a shared link or the way back from a hit
// shows the same matches.
function writeQueryToURL(q) {
  const p = new URLSearchParams(location.search);
  if (q.trim()) p.set('search', q);
  else p.delete('search');
  const qs = p.toString();
  history.replaceState(history.state, '', location.pathname + (qs ? '?' + qs : '') + location.hash);
}

let gen = 0;
async function run() {
  const q = input.value;
  const my = ++gen;
  writeQueryToURL(q);
  if (!q.trim()) {
    results.replaceChildren();
    note.textContent = '';
    form.classList.remove('searching');
    return;
  }
  form.classList.add('searching');
  const params = { q, status: status.value, harness: harness.value.trim(), model: model.value.trim(),
    project: project.value.trim(), since: localDay(since.value, 0), until: localDay(until.value, 1), limit: 50 };
  try {
    const hits = await api('/api/search', params);
    if (my !== gen) return;
    const list = Array.isArray(hits) ? hits : [];
    results.replaceChildren(...list.map(hitItem));
    note.textContent = list.length === 0 ? 'No matches.' : list.length + (list.length === 50 ? '+ matches (the first 50).' : list.length === 1 ? ' match.' : ' matches.');
    note.classList.remove('search-error');
  } catch (err) {
    if (my !== gen) return;
    results.replaceChildren();
    note.textContent = err && err.message ? err.message : String(err);
    note.classList.add('search-error');
  }
}
const later = debounce(run, 250);
form.addEventListener('submit', (e) => { e.preventDefault(); run(); });
form.addEventListener('input', later);
form.addEventListener('change', later);
const initial = new URLSearchParams(location.search).get('search');
if (initial) {
  input.value = initial;
  run();
}
