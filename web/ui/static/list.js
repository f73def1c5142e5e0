// The sessions list page (/).

import {
  api, apiSend, openStream, h, str, num, oneOf, fmtTokens, fmtInt, fmtCost, fmtDuration,
  parseTime, fmtWhen, fmtFull, fmtAgo, statusBadge, showError, debounce,
  sessionPath, sendOnEnter, STATUSES,
} from './common.js';

const PAGE = 50;
const KNOWN_HARNESSES = [
  'claude-code', 'codex', 'gemini-cli', 'qwen-code', 'opencode', 'cursor-agent',
  'amp', 'copilot-cli', 'droid', 'jsonl', 'shell',
];

const $ = (id) => document.getElementById(id);
const table = $('sessions');
const tbody = $('sessions-body');
const statusSel = $('filter-status');
const harnessSel = $('filter-harness');
const search = $('search');
const loadMore = $('load-more');
const emptyNote = $('empty');
const loadingNote = $('loading');
const liveIndicator = $('live-indicator');

const state = {
  filters: { status: '', harness: '', q: '' },
  next: null,
  gen: 0,
  loading: false,
  failed: false,
  rows: new Map(), // id -> {tr, session}
};

// ---- filters, kept in the page URL so a reload or a shared link keeps them ----

function readFiltersFromURL() {
  const p = new URLSearchParams(location.search);
  state.filters.status = p.get('status') || '';
  state.filters.harness = p.get('harness') || '';
  state.filters.q = p.get('q') || '';
}

function writeFiltersToURL() {
  // Parameters of others (the search box's ?search=) are kept.
  const p = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(state.filters)) {
    if (v) p.set(k, v);
    else p.delete(k);
  }
  const qs = p.toString();
  history.replaceState(history.state, '', location.pathname + (qs ? '?' + qs : '') + location.hash);
}

function ensureHarnessOption(name) {
  if (typeof name !== 'string' || !name) return;
  for (const o of harnessSel.options) if (o.value === name) return;
  // no value attribute: an option's value is its text
  const opt = h('option', { text: name });
  // keep the options sorted after "All"
  let before = null;
  for (const o of harnessSel.options) {
    if (o.value && o.value.localeCompare(name) > 0) { before = o; break; }
  }
  harnessSel.insertBefore(opt, before);
}

function syncControls() {
  if (state.filters.status && !STATUSES.includes(state.filters.status)) {
    statusSel.append(h('option', { text: state.filters.status }));
  }
  statusSel.value = state.filters.status;
  ensureHarnessOption(state.filters.harness);
  harnessSel.value = state.filters.harness;
  search.value = state.filters.q;
}

// ---- rows ----

function tokensCell(u) {
  const td = h('td', { class: 'col-tokens num', dataset: { label: 'Tokens' } });
  if (!u) { td.textContent = '—'; return td; }
  const cache = num(u.cacheReadTokens);
  td.append(
    h('span', { class: 'tok tok-in', title: 'input ' + fmtInt(u.inputTokens), text: fmtTokens(u.inputTokens) }),
    h('span', { class: 'tok-sep', text: ' / ' }),
    h('span', { class: 'tok tok-out', title: 'output ' + fmtInt(u.outputTokens), text: fmtTokens(u.outputTokens) }),
    h('span', { class: 'tok-sep', text: ' / ' }),
    h('span', {
      class: 'tok tok-cache',
      title: 'cache read ' + fmtInt(cache) + ', cache write ' + fmtInt(u.cacheCreationTokens),
      text: fmtTokens(cache),
    }),
  );
  if (u.tokensFrom === 'session') td.title = 'tokens as totalled by the harness';
  else if (u.tokensFrom === 'calls') td.title = 'tokens summed over model calls';
  return td;
}

function durationText(s) {
  const d = num(s.durationMs);
  if (d !== null) return fmtDuration(d);
  if (s.status === 'running') {
    const start = parseTime(s.startedAt);
    if (start) return fmtDuration(Date.now() - start.getTime());
  }
  const start = parseTime(s.startedAt);
  const end = parseTime(s.endedAt);
  if (start && end) return fmtDuration(end - start);
  return '—';
}

function renderRow(s) {
  const id = str(s.id);
  const status = oneOf(s.status, STATUSES, 'unknown');
  const tr = h('tr', { class: 'session', dataset: { id, status } });
  if (typeof s.reason === 'string' && s.reason) tr.dataset.reason = s.reason;

  const statusTd = h('td', { class: 'col-status', dataset: { label: 'Status' } });
  const badge = statusBadge(s.status, s.reason);
  statusTd.append(badge);
  if (s.error) {
    statusTd.title = str(s.error);
    statusTd.append(h('div', { class: 'row-error', text: str(s.error) }));
  }

  const titleTd = h('td', { class: 'col-title', dataset: { label: 'Session' } });
  const link = h('a', { class: 'session-link', href: sessionPath(id) });
  const title = str(s.title).trim();
  link.textContent = title || 'Untitled session';
  if (!title) link.classList.add('untitled');
  titleTd.append(link);
  const sub = h('div', { class: 'row-sub' });
  if (s.cwd) sub.append(h('span', { class: 'cwd', title: str(s.cwd), text: str(s.cwd) }));
  sub.append(h('span', { class: 'session-id', title: 'session ' + id, text: id }));
  titleTd.append(sub);

  const harnessTd = h('td', { class: 'col-harness', dataset: { label: 'Harness' } });
  harnessTd.append(h('span', { class: 'harness-name', text: str(s.harness) || '—' }));
  if (s.version) harnessTd.append(h('span', { class: 'harness-version', text: str(s.version) }));
  if (s.protocol) harnessTd.title = 'protocol ' + str(s.protocol);

  const modelTd = h('td', { class: 'col-model', dataset: { label: 'Model' }, text: str(s.model) || '—' });
  if (s.model) modelTd.title = str(s.model);

  const start = parseTime(s.startedAt);
  const startTd = h('td', { class: 'col-start', dataset: { label: 'Started' } });
  const time = h('time', { text: fmtWhen(start), title: fmtFull(start) + (start ? ' (' + fmtAgo(start) + ')' : '') });
  if (start) time.setAttribute('datetime', start.toISOString());
  startTd.append(time);

  const durTd = h('td', { class: 'col-duration num', dataset: { label: 'Duration' }, text: durationText(s) });

  const tokTd = tokensCell(s.usage);

  const cost = fmtCost(s.usage && s.usage.costUsd);
  const costTd = h('td', { class: 'col-cost num', dataset: { label: 'Cost' }, text: cost ?? '—' });
  if (cost === null) costTd.classList.add('unknown');
  else costTd.title = 'reported by the harness: $' + s.usage.costUsd;

  tr.append(statusTd, titleTd, harnessTd, modelTd, startTd, durTd, tokTd, costTd);
  return tr;
}

function matchesFilters(s) {
  const f = state.filters;
  if (f.status && s.status !== f.status) return false;
  if (f.harness && s.harness !== f.harness) return false;
  if (f.q && !str(s.title).toLowerCase().includes(f.q.toLowerCase())) return false;
  return true;
}

function startedMs(s) {
  const d = parseTime(s.startedAt);
  return d ? d.getTime() : 0;
}

// upsert updates the row of a session, or inserts it in start order when it
// matches the filters and belongs to the part of the list already loaded.
function upsert(s) {
  if (!s || typeof s.id !== 'string') return;
  ensureHarnessOption(s.harness);
  const row = state.rows.get(s.id);
  if (row) {
    if (!matchesFilters(s)) {
      // a status filter: a running session that finished leaves the list
      row.tr.remove();
      state.rows.delete(s.id);
      updateEmpty();
      return;
    }
    const tr = renderRow(s);
    row.tr.replaceWith(tr);
    row.tr = tr;
    row.session = s;
    flash(tr);
    return;
  }
  if (!matchesFilters(s)) return;
  const ms = startedMs(s);
  let before = null;
  for (const r of state.rows.values()) {
    if (startedMs(r.session) < ms) {
      if (!before || startedMs(r.session) > startedMs(before.session)) before = r;
    }
  }
  if (!before && state.next) return; // older than everything loaded: a later page has it
  const tr = renderRow(s);
  tbody.insertBefore(tr, before ? before.tr : null);
  state.rows.set(s.id, { tr, session: s });
  flash(tr);
  updateEmpty();
}

function flash(tr) {
  tr.classList.add('updated');
  setTimeout(() => tr.classList.remove('updated'), 1200);
}

function updateEmpty() {
  emptyNote.hidden = state.loading || state.failed || state.rows.size > 0;
}

// ---- loading ----

async function load(reset) {
  const gen = reset ? ++state.gen : state.gen;
  if (!reset && (!state.next || state.loading)) return;
  state.loading = true;
  table.setAttribute('aria-busy', 'true');
  loadingNote.hidden = false;
  loadMore.disabled = true;
  try {
    const params = { status: state.filters.status, harness: state.filters.harness, q: state.filters.q, limit: PAGE };
    if (!reset) params.cursor = state.next;
    const res = await api('/api/sessions', params);
    if (gen !== state.gen) return;
    state.failed = false;
    showError(null);
    if (reset) {
      tbody.replaceChildren();
      state.rows.clear();
    }
    const frag = document.createDocumentFragment();
    for (const s of Array.isArray(res.sessions) ? res.sessions : []) {
      if (!s || typeof s.id !== 'string' || state.rows.has(s.id)) continue;
      ensureHarnessOption(s.harness);
      const tr = renderRow(s);
      state.rows.set(s.id, { tr, session: s });
      frag.append(tr);
    }
    tbody.append(frag);
    state.next = typeof res.next === 'string' && res.next ? res.next : null;
  } catch (err) {
    if (gen !== state.gen) return;
    state.failed = true;
    showError(err, () => { showError(null); load(true); startLive(); });
  } finally {
    if (gen === state.gen) {
      state.loading = false;
      table.setAttribute('aria-busy', 'false');
      loadingNote.hidden = true;
      loadMore.hidden = !state.next;
      loadMore.disabled = false;
      updateEmpty();
    }
  }
}

// ---- live updates ----

const pending = new Set();
let flushTimer = null;
let live = null;

function scheduleRefresh(id) {
  pending.add(id);
  if (!flushTimer) flushTimer = setTimeout(flushRefresh, 1000);
}

async function flushRefresh() {
  flushTimer = null;
  const ids = [...pending].slice(0, 25);
  for (const id of ids) pending.delete(id);
  await Promise.all(ids.map(async (id) => {
    try {
      upsert(await api('/api/sessions/' + encodeURIComponent(id)));
    } catch { /* the next event retries */ }
  }));
  if (pending.size && !flushTimer) flushTimer = setTimeout(flushRefresh, 1000);
}

function refreshRunning() {
  for (const [id, r] of state.rows) if (r.session.status === 'running') scheduleRefresh(id);
}

function startLive() {
  if (live) live.close();
  let wasOpen = false;
  live = openStream('/api/events/stream', null, {
    onEvent(ev) {
      if (ev.event === 'end') return;
      if (ev.event === 'resync') { refreshRunning(); live.restart(); return; }
      let env;
      try { env = JSON.parse(ev.data); } catch { return; }
      if (env && typeof env.session === 'string') scheduleRefresh(env.session);
    },
    onState(st) {
      liveIndicator.hidden = st !== 'open';
      if (st === 'open') {
        // after a reconnection, what happened meanwhile is unknown
        if (wasOpen) refreshRunning();
        wasOpen = true;
      }
    },
  });
}

// ---- a new live session, from the server's profiles ----

const newBox = $('new-session');
const newForm = $('new-session-form');
const newProfile = $('new-profile');
const newPrompt = $('new-prompt');
const newSubmit = $('new-submit');
const newError = $('new-error');

// setupNewSession shows the form when the server starts sessions (it has
// profiles); a server without them answers an empty list.
async function setupNewSession() {
  let names = [];
  try {
    const res = await api('/api/profiles');
    names = Array.isArray(res.profiles) ? res.profiles.filter((n) => typeof n === 'string' && n) : [];
  } catch {
    return; // an older server, or no token yet: the list's own error says so
  }
  newProfile.replaceChildren(...names.map((n) => h('option', { value: n, text: n })));
  newBox.hidden = names.length === 0;
}

function showNewError(err) {
  newError.hidden = !err;
  newError.textContent = err ? 'Cannot start the session: ' + (err.message || String(err)) : '';
}

async function startSession() {
  if (newSubmit.disabled) return;
  const body = { profile: newProfile.value };
  const prompt = newPrompt.value.trim();
  if (prompt) body.prompt = prompt;
  newSubmit.disabled = true;
  newSubmit.textContent = 'Starting…';
  showNewError(null);
  try {
    const res = await apiSend('POST', '/api/sessions', body);
    if (typeof res.id !== 'string' || !res.id) throw new Error('the server gave no session id');
    location.assign(sessionPath(res.id));
  } catch (err) {
    showNewError(err);
    newSubmit.disabled = false;
    newSubmit.textContent = 'Start session';
  }
}

newForm.addEventListener('submit', (e) => { e.preventDefault(); startSession(); });
sendOnEnter(newPrompt, startSession);

// ---- wiring ----

function applyFilters() {
  writeFiltersToURL();
  load(true);
}

statusSel.addEventListener('change', () => { state.filters.status = statusSel.value; applyFilters(); });
harnessSel.addEventListener('change', () => { state.filters.harness = harnessSel.value; applyFilters(); });
const onSearch = debounce(() => {
  const q = search.value.trim();
  if (q === state.filters.q) return;
  state.filters.q = q;
  applyFilters();
}, 300);
search.addEventListener('input', onSearch);
document.getElementById('filters').addEventListener('submit', (e) => { e.preventDefault(); onSearch(); });
loadMore.addEventListener('click', () => load(false));

// A click anywhere on a row opens the session, unless the user was selecting text or clicked the link itself.
tbody.addEventListener('click', (e) => {
  const tr = e.target.closest('tr.session');
  if (!tr || e.target.closest('a, button, input, select')) return;
  const sel = window.getSelection();
  if (sel && !sel.isCollapsed && tr.contains(sel.anchorNode)) return;
  const href = sessionPath(tr.dataset.id);
  if (e.ctrlKey || e.metaKey || e.button === 1) window.open(href, '_blank', 'noopener');
  else location.assign(href);
});

// Running rows show their elapsed time.
setInterval(() => {
  for (const r of state.rows.values()) {
    if (r.session.status !== 'running' || num(r.session.durationMs) !== null) continue;
    const td = r.tr.querySelector('.col-duration');
    if (td) td.textContent = durationText(r.session);
  }
}, 1000);

for (const name of KNOWN_HARNESSES) ensureHarnessOption(name);
readFiltersFromURL();
syncControls();
load(true);
startLive();
setupNewSession();
