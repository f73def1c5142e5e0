// Shared helpers of the agentstream pages: the optional API token, JSON
// fetches, a server-sent-events reader, DOM construction and formatting.
//
// Rule for every script of this UI: text that came from a harness or an agent
// only ever reaches the page through textContent, Text nodes, data-* attributes
// or title. No HTML parsing of any string, no agent text in href or src.

const TOKEN_KEY = 'agentstream.token';
let memoryToken = '';

// A token given as #token=T in the URL is kept in localStorage and removed
// from the address bar so that it does not stay in the history or get copied
// along with a link. The rest of the fragment (an event #seq) is kept.
function takeTokenFromFragment() {
  const hash = location.hash.replace(/^#/, '');
  if (!/(^|&)token=/.test(hash)) return false;
  const rest = [];
  for (const part of hash.split('&')) {
    if (part.startsWith('token=')) {
      let value = part.slice('token='.length);
      try { value = decodeURIComponent(value); } catch { /* keep as is */ }
      setToken(value);
    } else if (part) {
      rest.push(part);
    }
  }
  const url = location.pathname + location.search + (rest.length ? '#' + rest.join('&') : '');
  history.replaceState(history.state, '', url);
  return true;
}
takeTokenFromFragment();
// A token pasted into the address bar of an open page: keep it and start over.
window.addEventListener('hashchange', (e) => {
  if (takeTokenFromFragment()) {
    e.stopImmediatePropagation();
    location.reload();
  }
});

/** getToken returns the API token, or '' when none is configured. */
export function getToken() {
  if (memoryToken) return memoryToken;
  try { return localStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
}

/** setToken stores (or with '' forgets) the API token. */
export function setToken(value) {
  memoryToken = value;
  try {
    if (value) localStorage.setItem(TOKEN_KEY, value);
    else localStorage.removeItem(TOKEN_KEY);
  } catch { /* ignore */ }
}

/** APIError is a failed API request: status is the HTTP status, 0 for a network error. */
export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'APIError';
    this.status = status;
  }
}

/** apiURL builds a same-origin URL from a path and query parameters; null, undefined and '' values are left out. */
export function apiURL(path, params) {
  const url = new URL(path, location.origin);
  if (params) {
    for (const [k, v] of Object.entries(params)) {
      if (v === null || v === undefined || v === '') continue;
      url.searchParams.set(k, String(v));
    }
  }
  return url.pathname + url.search;
}

function authHeaders(extra) {
  const headers = Object.assign({}, extra);
  const token = getToken();
  if (token) headers.Authorization = 'Bearer ' + token;
  return headers;
}

async function request(path, params, accept, signal) {
  let res;
  try {
    res = await fetch(apiURL(path, params), {
      headers: authHeaders({ Accept: accept }),
      cache: 'no-store',
      signal,
    });
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new APIError(0, 'cannot reach the server');
  }
  if (!res.ok) {
    let message = res.status + ' ' + res.statusText;
    try {
      const body = await res.json();
      if (body && typeof body.error === 'string') message = body.error;
    } catch { /* not JSON */ }
    throw new APIError(res.status, message);
  }
  return res;
}

/** api fetches JSON from the API. */
export async function api(path, params, signal) {
  const res = await request(path, params, 'application/json', signal);
  return res.json();
}

/**
 * apiSend sends a JSON body (or none) with method to the API and returns the
 * JSON answer ({} when it has none). A failure throws an APIError with the
 * server's error message and status (409, say, for a request answered
 * already).
 */
export async function apiSend(method, path, body) {
  let res;
  // The server takes a state-changing request only as JSON, body or not.
  const init = { method, headers: authHeaders({ Accept: 'application/json', 'Content-Type': 'application/json' }), cache: 'no-store' };
  if (body !== undefined) init.body = JSON.stringify(body);
  try {
    res = await fetch(apiURL(path), init);
  } catch {
    throw new APIError(0, 'cannot reach the server');
  }
  let data = null;
  try { data = await res.json(); } catch { /* no JSON */ }
  if (!res.ok) {
    const message = data && typeof data.error === 'string' ? data.error : res.status + ' ' + res.statusText;
    throw new APIError(res.status, message);
  }
  return data && typeof data === 'object' ? data : {};
}

/** apiText fetches a text/plain resource from the API. */
export async function apiText(path, params, signal) {
  const res = await request(path, params, 'text/plain', signal);
  return res.text();
}

/**
 * openStream follows a server-sent-events endpoint. It is read with fetch
 * rather than EventSource because EventSource cannot send the Authorization
 * header and only delivers the event names it was told in advance, while the
 * event vocabulary is open-ended (every event type is an SSE event name).
 *
 * params() is called before each (re)connection, so a reconnect resumes from
 * the caller's latest position (?after=SEQ). handlers.onEvent({event, data,
 * id}) receives each dispatched event; handlers.onState('open'|'retrying'|
 * 'closed', error) reports the connection. It reconnects with backoff after a
 * network error or a clean end of the response; a 4xx answer other than 429
 * stops it. The returned object has close() and restart() (reconnect now).
 */
export function openStream(path, params, handlers) {
  let closed = false;
  let ctrl = null;
  let wake = null;
  const sleep = (ms) => new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    wake = () => { clearTimeout(t); resolve(); };
  });

  (async () => {
    let delay = 1000;
    while (!closed) {
      ctrl = new AbortController();
      try {
        const res = await fetch(apiURL(path, params ? params() : null), {
          headers: authHeaders({ Accept: 'text/event-stream' }),
          cache: 'no-store',
          signal: ctrl.signal,
        });
        if (!res.ok) {
          let message = res.status + ' ' + res.statusText;
          try { const b = await res.json(); if (b && typeof b.error === 'string') message = b.error; } catch { /* ignore */ }
          throw new APIError(res.status, message);
        }
        handlers.onState?.('open');
        delay = 1000;
        await readEvents(res.body, (ev) => { if (!closed) handlers.onEvent(ev); });
      } catch (err) {
        if (closed) break;
        if (err && err.status >= 400 && err.status < 500 && err.status !== 429) {
          closed = true;
          handlers.onState?.('closed', err);
          break;
        }
        if (!(err && err.name === 'AbortError')) {
          handlers.onState?.('retrying', err);
          await sleep(delay);
          delay = Math.min(delay * 2, 15000);
        }
        continue;
      }
      if (closed) break;
      // The server closed the response without an "end" event: reconnect.
      handlers.onState?.('retrying', null);
      await sleep(delay);
      delay = Math.min(delay * 2, 15000);
    }
  })();

  return {
    close() {
      if (closed) return;
      closed = true;
      ctrl?.abort();
      wake?.();
      handlers.onState?.('closed', null);
    },
    restart() {
      ctrl?.abort();
      wake?.();
    },
    get closed() { return closed; },
  };
}

// readEvents parses a text/event-stream body (the WHATWG framing: fields
// event, data, id; comments start with ':'; a blank line dispatches).
async function readEvents(body, dispatch) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let event = '';
  let data = [];
  let id = null;
  let hasData = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    const eol = /\r\n|\r|\n/g;
    let start = 0;
    for (;;) {
      eol.lastIndex = start;
      const m = eol.exec(buf);
      if (!m) break;
      // a CR at the very end may be the first half of a CRLF: wait for more
      if (m[0] === '\r' && m.index + 1 === buf.length) break;
      const line = buf.slice(start, m.index);
      start = m.index + m[0].length;
      if (line === '') {
        // EventSource drops an event without data; a named one (end, resync)
        // is dispatched here all the same, in case a server omits its data.
        if (hasData || event) dispatch({ event: event || 'message', data: data.join('\n'), id });
        event = ''; data = []; id = null; hasData = false;
        continue;
      }
      if (line[0] === ':') continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let val = colon < 0 ? '' : line.slice(colon + 1);
      if (val[0] === ' ') val = val.slice(1);
      if (field === 'event') event = val;
      else if (field === 'data') { data.push(val); hasData = true; }
      else if (field === 'id') id = val;
    }
    buf = buf.slice(start);
  }
}

/**
 * h creates an element. props: class, text (textContent), dataset, and plain
 * attributes. Attributes named on* and the style attribute are refused: the
 * Content-Security-Policy forbids them anyway, and refusing here makes a
 * mistake visible at once. Children are nodes or strings (strings become Text
 * nodes, never markup).
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = String(v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (/^on/i.test(k) || k === 'style') throw new Error('h: refusing attribute ' + k);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c);
  }
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * svg creates an SVG element: attributes are set as given (on* and style
 * refused, as in h); children are nodes or strings (Text nodes). A string
 * child of a <title> is its tooltip.
 */
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (/^on/i.test(k) || k === 'style') throw new Error('svg: refusing attribute ' + k);
      if (k === 'dataset') { for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = String(dv); continue; }
      el.setAttribute(k, String(v));
    }
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c);
  }
  return el;
}

/** icon builds a 16×16 stroked SVG icon from path data written in this UI (never from agent text). */
export function icon(pathData, cls) {
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '16');
  svg.setAttribute('height', '16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'icon' + (cls ? ' ' + cls : ''));
  const path = document.createElementNS(SVG_NS, 'path');
  path.setAttribute('d', pathData);
  svg.append(path);
  return svg;
}

// ---- coercion of untrusted JSON values ----

/** str returns v as display text: strings as they are, null/undefined as '', anything else as JSON. */
export function str(v) {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  try { return JSON.stringify(v); } catch { return String(v); }
}

/** num returns v when it is a finite number, else null. */
export function num(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** oneOf returns v when it is one of the allowed strings, else fallback. Used before a value becomes a class name. */
export function oneOf(v, allowed, fallback) {
  return typeof v === 'string' && allowed.includes(v) ? v : fallback;
}

// ---- formatting ----

const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });
const full = new Intl.NumberFormat('en');

/** fmtTokens formats a token count compactly (41.2K), '—' when unknown. */
export function fmtTokens(n) {
  n = num(n);
  if (n === null) return '—';
  return n < 1000 ? full.format(n) : compact.format(n);
}

/** fmtInt formats a count in full (41,207), '—' when unknown. */
export function fmtInt(n) {
  n = num(n);
  return n === null ? '—' : full.format(n);
}

/** fmtCost formats a reported cost in US dollars; null when the cost is unknown (never "$0.00" for unknown). */
export function fmtCost(usd) {
  usd = num(usd);
  if (usd === null) return null;
  if (usd === 0) return '$0';
  if (usd < 0.01) return '$' + usd.toFixed(4);
  if (usd < 100) return '$' + usd.toFixed(2);
  return '$' + full.format(Math.round(usd));
}

/** fmtDuration formats milliseconds as 850ms, 8.8s, 3m 12s, 2h 05m; '—' when unknown. */
export function fmtDuration(ms) {
  ms = num(ms);
  if (ms === null || ms < 0) return '—';
  if (ms < 1000) return Math.round(ms) + 'ms';
  const s = ms / 1000;
  if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + 's';
  const m = Math.floor(s / 60);
  if (m < 60) return m + 'm ' + String(Math.floor(s % 60)).padStart(2, '0') + 's';
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return hrs + 'h ' + String(m % 60).padStart(2, '0') + 'm';
  return Math.floor(hrs / 24) + 'd ' + (hrs % 24) + 'h';
}

/** parseTime returns a Date for an RFC 3339 string, or null. */
export function parseTime(s) {
  if (typeof s !== 'string' || !s) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
}

const timeFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
const dayTimeFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hour12: false });
const yearFmt = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hour12: false });
const fullFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' });

/** fmtClock formats a time of day (16:20:55). */
export function fmtClock(d) { return d ? timeFmt.format(d) : ''; }

/** fmtWhen formats a start time: the time today, else the day and time. */
export function fmtWhen(d) {
  if (!d) return '—';
  const now = new Date();
  if (d.toDateString() === now.toDateString()) return timeFmt.format(d).slice(0, 5);
  if (d.getFullYear() === now.getFullYear()) return dayTimeFmt.format(d);
  return yearFmt.format(d);
}

/** fmtFull formats a time in full, for title attributes. */
export function fmtFull(d) { return d ? fullFmt.format(d) : ''; }

/** fmtAgo formats how long ago d was (5m ago). */
export function fmtAgo(d) {
  if (!d) return '';
  const ms = Date.now() - d.getTime();
  if (ms < 45000) return 'just now';
  return fmtDuration(ms).split(' ')[0] + ' ago';
}

export const STATUSES = ['running', 'succeeded', 'failed', 'cancelled', 'interrupted'];

const REASONS = {
  completion: 'completed',
  exit: 'process exited',
  'idle-timeout': 'idle timeout',
  deadline: 'deadline passed',
  aborted: 'aborted',
  'oversized-event': 'oversized event',
  budget: 'budget exceeded',
};

/** reasonLabel turns a session end reason into words. */
export function reasonLabel(reason) {
  if (typeof reason !== 'string' || !reason) return '';
  return Object.hasOwn(REASONS, reason) ? REASONS[reason] : reason;
}

/** statusBadge builds the status element of a session: span.status.status-<status> with data-status. */
export function statusBadge(status, reason, el) {
  const st = oneOf(status, STATUSES, 'unknown');
  el = el || h('span');
  el.className = 'status status-' + st;
  el.dataset.status = st;
  if (typeof reason === 'string' && reason) el.dataset.reason = reason;
  else delete el.dataset.reason;
  el.replaceChildren(h('span', { class: 'status-dot', 'aria-hidden': 'true' }), h('span', { class: 'status-text', text: typeof status === 'string' && status ? status : 'unknown' }));
  const r = reasonLabel(reason);
  if (r && st !== 'running' && !(st === 'succeeded' && reason === 'completion')) {
    el.append(h('span', { class: 'status-reason', text: r }));
  }
  return el;
}

/** showError fills the #error banner; with a 401 it offers a token field. */
export function showError(err, onToken) {
  const box = document.getElementById('error');
  if (!box) return;
  if (!err) { box.hidden = true; box.replaceChildren(); return; }
  box.hidden = false;
  const message = err instanceof APIError || err instanceof Error ? err.message : String(err);
  box.replaceChildren(h('span', { class: 'banner-text', text: message }));
  if (err.status === 401 || err.status === 403) {
    const input = h('input', { type: 'password', id: 'token-input', placeholder: 'API token', autocomplete: 'off' });
    const form = h('form', { id: 'token-form', class: 'token-form' },
      h('label', { for: 'token-input', text: 'This server needs a token:' }), input,
      h('button', { type: 'submit', text: 'Use token' }));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      setToken(input.value.trim());
      if (onToken) onToken(); else location.reload();
    });
    box.append(form);
  }
}

/** throttle calls fn at most once per ms, trailing call included. */
export function throttle(fn, ms) {
  let timer = null;
  let pending = false;
  return function throttled() {
    if (timer) { pending = true; return; }
    fn();
    timer = setTimeout(function tick() {
      timer = null;
      if (pending) { pending = false; throttled(); }
    }, ms);
  };
}

/** debounce calls fn once ms after the last call. */
export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/**
 * sendOnEnter has Enter in a textarea call send, and Shift+Enter start a
 * new line. The key press is prevented as well as the keydown: a key press
 * dispatched apart from its keydown (as automation does) would still
 * insert the line break, which would then stay in the emptied field.
 */
export function sendOnEnter(textarea, send) {
  const sends = (e) => e.key === 'Enter' && !e.shiftKey && !e.isComposing;
  textarea.addEventListener('keydown', (e) => { if (sends(e)) { e.preventDefault(); send(); } });
  textarea.addEventListener('keypress', (e) => { if (sends(e)) e.preventDefault(); });
}

/** sessionPath is the page of a session. Ids are the platform's, still encoded. */
export function sessionPath(id) {
  return '/sessions/' + encodeURIComponent(id);
}

// ---- copying ----

/**
 * copyText puts text on the clipboard: navigator.clipboard where the page
 * may use it, else a hidden textarea and the copy command. It resolves to
 * whether the text was copied.
 */
export async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch { /* fall back */ }
  const ta = document.createElement('textarea');
  ta.value = text;
  ta.setAttribute('readonly', '');
  ta.className = 'copy-buffer';
  document.body.append(ta);
  ta.select();
  let ok = false;
  try { ok = document.execCommand('copy'); } catch { ok = false; }
  ta.remove();
  return ok;
}

/**
 * copyButton is a button that copies what text() returns when clicked and
 * says "copied" (or "not copied") for a moment. what names the text for
 * assistive technology ("Copy the output").
 */
export function copyButton(text, what) {
  const b = h('button', { type: 'button', class: 'copy-btn', title: 'Copy ' + what, 'aria-label': 'Copy ' + what, text: 'copy' });
  let timer = null;
  b.addEventListener('click', async (e) => {
    e.stopPropagation();
    const ok = await copyText(String(text() ?? ''));
    b.textContent = ok ? 'copied' : 'not copied';
    b.classList.toggle('copied', ok);
    b.dataset.copied = ok ? 'true' : 'false';
    clearTimeout(timer);
    timer = setTimeout(() => { b.textContent = 'copy'; b.classList.remove('copied'); }, 1500);
  });
  return b;
}
