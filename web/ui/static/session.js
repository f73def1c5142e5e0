// The page of one session (/sessions/{id}, an event as /sessions/{id}#seq).
//
// The timeline holds one contiguous window of events [lo, hi], loaded page by
// page: it opens at the tail (or around a deep-linked event), grows backwards
// when the user scrolls near the top and forwards near the bottom, and, once
// it reaches the latest event of a running session, follows the live stream.
// The window is bounded: past MAX_ROWS events, the events at the edge away
// from the one that grew, and out of view, are dropped (the window shrinks
// there), to be loaded again when the user scrolls back to them.

import {
  api, apiSend, apiText, openStream, h, svg, icon, str, num, oneOf, fmtTokens, fmtInt, fmtCost,
  fmtDuration, parseTime, fmtClock, fmtWhen, fmtFull, statusBadge, reasonLabel,
  showError, throttle, copyButton, sendOnEnter, STATUSES,
} from './common.js';
import { renderMarkdown } from './markdown.js';
import { langOfPath, paint } from './highlight.js';

const PAGE = 200;
const PREFIX = 200; // characters of a clipped text looked for in its native line
const NEAR = 600; // px from an edge of the timeline that loads the next page
const MAX_ROWS = 1000; // stored events kept on the page (five pages)

const $ = (id) => document.getElementById(id);
const timeline = $('timeline');
const showRaw = $('show-raw');
const expandAll = $('expand-all');
const jumpBottom = $('jump-bottom');
const pageStatus = $('page-status');
const liveIndicator = $('live-indicator');

const sessionId = (() => {
  const rest = location.pathname.replace(/^\/sessions\//, '').replace(/\/+$/, '');
  try { return decodeURIComponent(rest); } catch { return rest; }
})();
const base = '/api/sessions/' + encodeURIComponent(sessionId);

const S = {
  session: null,
  gen: 0,            // bumped when the window is reset; stale responses are dropped
  lo: null,          // first loaded seq
  hi: 0,             // last loaded seq
  atEnd: false,      // hi is the latest stored event
  loadingBefore: false,
  loadingAfter: false,
  stick: true,       // the user is at the bottom: follow new events
  calls: new Map(),  // callId -> ToolView
  orphans: new Map(), // callId -> {result: {ev, el} | null, children: [el]}
  stream: null,
  queue: [],
  flushTimer: null,
  newBelow: 0,
  context: { seq: 0, tokens: null, window: null, windowSeq: 0 },
  contextPoints: [], // {seq, t, tokens}: the context over the session's time
  contextLoaded: false,
  plan: { seq: 0, el: null, done: 0, total: 0 },
  liveEls: new Map(), // key -> streaming element
  applyingLive: false, // rendering events that arrived on the stream
  highlighted: null,
  usage: [],         // the session's usage events, for the turn footers
  usageLoaded: false,
  turnUsage: new Map(), // turn -> its usage summary (summarizeTurns)
  turnStart: new Map(), // turn -> time of its turn.started
  turnHeads: new Map(), // turn -> its header element
};

// Timeline skeleton: [start edge] events… [end edge] [live area].
const startEdge = h('div', { class: 'timeline-edge timeline-start', id: 'timeline-start' });
const endEdge = h('div', { class: 'timeline-edge timeline-end', id: 'timeline-end' });
const liveArea = h('div', { class: 'live-area', id: 'live-area' });

// ---- categories and icons (path data written here, not from events) ----

const CATEGORIES = ['read', 'edit', 'delete', 'move', 'search', 'execute', 'fetch', 'think', 'delegate', 'plan', 'ask', 'mcp', 'other'];
const ICONS = {
  read: 'M4 1.5h5.5L13 5v9.5H4z M9 1.5V5h4 M6 8h5 M6 11h5',
  edit: 'M2.5 13.5l.8-3.2 7.9-7.9a1.4 1.4 0 0 1 2 0l.4.4a1.4 1.4 0 0 1 0 2l-7.9 7.9z M9.7 3.9l2.4 2.4',
  delete: 'M2.5 4h11 M6 4V2.5h4V4 M4 4l.8 10h6.4L12 4 M6.7 6.5v5 M9.3 6.5v5',
  move: 'M1.5 8h11 M9 4.5L12.5 8 9 11.5',
  search: 'M11 7a4 4 0 1 1-8 0 4 4 0 0 1 8 0z M10 10l4 4',
  execute: 'M1.5 2.5h13v11h-13z M4 6l2.2 2L4 10 M8 10.5h4',
  fetch: 'M14.5 8a6.5 6.5 0 1 1-13 0 6.5 6.5 0 0 1 13 0z M1.5 8h13 M8 1.5c2.2 2 2.2 11 0 13 M8 1.5c-2.2 2-2.2 11 0 13',
  think: 'M6 12.5h4 M6.5 14.5h3 M8 1.5a4.2 4.2 0 0 0-2.6 7.5c.4.3.6.8.6 1.3v.7h4v-.7c0-.5.2-1 .6-1.3A4.2 4.2 0 0 0 8 1.5z',
  delegate: 'M8 7a2.5 2.5 0 1 0 0-5 2.5 2.5 0 0 0 0 5z M3 14.5c0-3 2.2-5 5-5s5 2 5 5',
  plan: 'M2 4l1.5 1.5L6 3 M8.5 4.2h6 M2 10.5L3.5 12 6 9.5 M8.5 10.8h6',
  ask: 'M14.5 8a6.5 6.5 0 1 1-13 0 6.5 6.5 0 0 1 13 0z M6 6.2a2 2 0 1 1 2.8 1.8c-.5.3-.8.7-.8 1.3v.4 M8 11.6v.4',
  mcp: 'M5.5 1.5v4 M10.5 1.5v4 M3.5 5.5h9v2a4.5 4.5 0 0 1-9 0z M8 12v2.5',
  other: 'M10 8a2 2 0 1 1-4 0 2 2 0 0 1 4 0z M8 1.5v2.5 M8 12v2.5 M1.5 8H4 M12 8h2.5',
};
const CHEVRON = 'M6 3.5L10.5 8 6 12.5';

// ---- small builders ----

function envTime(ev) {
  return parseTime(ev.ts);
}

// shell is the element of one stored event: div.event[data-seq][data-type]#e<seq>.
function shell(ev, cls) {
  const el = h('div', { class: 'event' + (cls ? ' ' + cls : ''), tabindex: '-1' });
  if (num(ev.seq) !== null) {
    el.id = 'e' + ev.seq;
    el.dataset.seq = String(ev.seq);
  }
  el.dataset.type = str(ev.type);
  el.dataset.turn = String(num(ev.turn) ?? 0);
  if (ev.origin === 'replay') el.classList.add('replay');
  if (ev.parentCallId) el.dataset.parent = str(ev.parentCallId);
  return el;
}

// meta is the right-hand side of an event line: badges, time, #seq, source.
function meta(ev, ...badges) {
  const m = h('span', { class: 'event-meta' });
  for (const b of badges) if (b) m.append(b);
  if (ev.origin === 'replay') m.append(badge('replay', 'badge-dim', 'history re-sent by the harness'));
  const t = envTime(ev);
  if (t) m.append(h('time', { class: 'ts', datetime: t.toISOString(), title: fmtFull(t), text: fmtClock(t) }));
  if (num(ev.seq) !== null) {
    m.append(h('a', { class: 'seq-link', href: '#' + ev.seq, title: 'Link to this event' + (t ? ' · ' + fmtFull(t) : ''), text: '#' + ev.seq }));
  }
  const src = ev.source;
  if (src && num(src.line) !== null && src.line >= 1) {
    const stream = oneOf(src.stream, ['stdout', 'stderr'], 'stdout');
    m.append(h('button', {
      type: 'button', class: 'source-btn', title: 'Show native line ' + src.line + ' (' + stream + ')',
      dataset: { line: String(src.line), stream }, text: 'source',
    }));
  }
  return m;
}

function badge(text, cls, title) {
  return h('span', { class: 'badge' + (cls ? ' ' + cls : ''), text, title });
}

// truncNote is the note under a clipped text (null when nothing was cut).
// Given ev and show, and when the event's native line is stored, it has a
// button that fetches the line and calls show with the text in full.
function truncNote(p, what, ev, show, clippedText) {
  if (p.truncated !== true) return null;
  const n = num(p.characters);
  const note = h('p', { class: 'truncated-note' }, h('span', {
    class: 'truncated-text',
    text: n !== null ? 'clipped: ' + fmtInt(n) + ' characters in all' : (what || 'the text') + ' was clipped to 8,000 characters',
  }));
  const src = ev && ev.source;
  if (!show || !src || num(src.line) === null || src.line < 1) return note;
  const stream = oneOf(src.stream, ['stdout', 'stderr'], 'stdout');
  const label = n !== null ? 'show all ' + fmtInt(n) + ' characters' : 'show all';
  const b = h('button', { type: 'button', class: 'full-btn', title: 'Fetch native line ' + src.line + ' and show ' + (what || 'the text') + ' in full', text: label });
  b.addEventListener('click', async () => {
    b.disabled = true;
    b.textContent = 'loading…';
    try {
      const line = await apiText(base + '/lines/' + encodeURIComponent(String(src.line)), { stream });
      const full = fullText(line, ev, str(clippedText));
      show(full.text);
      const chars = [...full.text].length;
      note.dataset.chars = String(chars);
      note.dataset.from = full.from;
      note.classList.add('full');
      note.replaceChildren(h('span', {
        class: 'truncated-text',
        text: full.from === 'json' ? 'in full: ' + fmtInt(chars) + ' characters, from native line ' + src.line
          : 'native line ' + src.line + ' as stored (the text could not be picked out of it)',
      }));
    } catch (err) {
      b.disabled = false;
      b.textContent = label;
      b.title = 'cannot load the line: ' + err.message;
      note.dataset.error = err.message;
    }
  });
  note.append(' ', b);
  return note;
}

const ID_KEYS = ['tool_use_id', 'call_id', 'callId', 'toolCallId', 'tool_call_id', 'id'];
const SKIP_KEYS = new Set(['type', ...ID_KEYS]);

// fullText picks the text an event clipped out of its native line: for a
// tool call the arguments of the object with its id; else the longest text
// that starts as the clipped one does, an object with the event's call id
// counting as its strings joined by newlines (a result made of several text
// blocks). When nothing fits, the whole line is the answer.
function fullText(line, ev, clippedText) {
  let root;
  try { root = JSON.parse(line); } catch { return { text: line, from: 'line' }; }
  const p = ev.payload || {};
  const callId = str(p.callId);
  const prefix = clippedText.slice(0, PREFIX);
  let best = null;
  const consider = (s) => {
    if (typeof s === 'string' && s.startsWith(prefix) && (best === null || s.length > best.length)) best = s;
  };
  const leaves = (v, out, depth) => {
    if (depth > 64) return out;
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (const x of v) leaves(x, out, depth + 1);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (!SKIP_KEYS.has(k)) leaves(x, out, depth + 1);
    return out;
  };
  let args = null;
  const walk = (v, depth) => {
    if (depth > 64) return;
    if (typeof v === 'string') { consider(v); return; }
    if (Array.isArray(v)) { for (const x of v) walk(x, depth + 1); return; }
    if (!v || typeof v !== 'object') return;
    if (callId && ID_KEYS.some((k) => v[k] === callId)) {
      if (ev.type === 'tool.call') {
        for (const k of ['input', 'arguments', 'args']) if (v[k] !== undefined && args === null) args = v[k];
      } else {
        consider(leaves(v, [], depth).join('\n'));
      }
    }
    for (const x of Object.values(v)) walk(x, depth + 1);
  };
  walk(root, 0);
  if (args !== null) return { text: typeof args === 'string' ? prettyJSON(args) : JSON.stringify(args, null, 2), from: 'json' };
  if (best !== null && best.length >= clippedText.length) return { text: best, from: 'json' };
  return { text: line, from: 'line' };
}

function prettyJSON(s) {
  if (typeof s !== 'string') return str(s === undefined ? null : JSON.stringify(s, null, 2));
  try { return JSON.stringify(JSON.parse(s), null, 2); } catch { return s; }
}

function line(ev, cls, label, text, ...extra) {
  const el = shell(ev, 'line ' + cls);
  const body = h('span', { class: 'line-body' });
  if (label) body.append(h('span', { class: 'line-label', text: label }));
  if (text) body.append(h('span', { class: 'line-text', text }));
  for (const x of extra) if (x) body.append(x);
  el.append(h('div', { class: 'event-head' }, body, meta(ev)));
  return el;
}

function detailsBlock(summary, content, open) {
  const d = h('details', { class: 'more' });
  if (open) d.open = true;
  d.append(h('summary', { text: summary }), content);
  return d;
}

// ---- tool calls ----

class ToolView {
  constructor(ev) {
    const p = ev.payload || {};
    this.ev = ev;
    this.callId = str(p.callId);
    this.category = oneOf(p.category, CATEGORIES, 'other');
    this.expanded = false;
    this.inputDone = false;
    this.result = null;
    this.children = null;
    this.childCount = 0;
    this.liveOut = null;

    const el = shell(ev, 'tool running');
    el.dataset.category = this.category;
    if (this.callId) el.dataset.callId = this.callId;
    this.el = el;

    this.state = h('span', { class: 'tool-state', text: pendingText() });
    const toggle = h('button', { type: 'button', class: 'tool-toggle', 'aria-expanded': 'false', title: 'Show input and output' },
      icon(CHEVRON, 'chevron'),
      h('span', { class: 'tool-icon', title: this.category, dataset: { category: this.category } }, icon(ICONS[this.category])),
      h('span', { class: 'tool-name', text: str(p.displayName) || str(p.name) || 'tool', title: str(p.name) }),
      h('span', { class: 'tool-summary', text: str(p.summary) }),
    );
    if (p.summary) toggle.querySelector('.tool-summary').title = str(p.summary);
    this.head = h('div', { class: 'event-head tool-head' }, toggle, h('span', { class: 'tool-side' }, this.state, meta(ev)));
    this.body = h('div', { class: 'tool-body', hidden: true });
    this.inputBox = h('div', { class: 'tool-section tool-input-section' });
    this.body.append(this.inputBox);
    el.append(this.head, this.body);
    el._tool = this;
    if (expandAll.checked) this.setExpanded(true);
  }

  setExpanded(on) {
    this.expanded = on;
    this.el.classList.toggle('expanded', on);
    this.body.hidden = !on;
    this.head.querySelector('.tool-toggle').setAttribute('aria-expanded', String(on));
    if (on && !this.inputDone) {
      this.inputDone = true;
      const p = this.ev.payload || {};
      const pre = h('pre', { class: 'tool-input', text: prettyJSON(p.input) });
      const holder = { cmd: commandOf(p.input) };
      const cmd = holder.cmd.isCommand;
      const label = h('div', { class: 'section-label' }, h('span', { text: 'input' }),
        copyButton(() => holder.cmd.text, cmd ? 'the command' : 'the input'));
      const native = str(p.name);
      const facts = [native && native !== str(p.displayName) ? 'native name ' + native : native ? 'name ' + native : '',
        'category ' + this.category, this.callId ? 'call ' + this.callId : ''].filter(Boolean).join(' · ');
      this.inputBox.append(h('div', { class: 'tool-facts', text: facts }), label, pre);
      const note = truncNote({ truncated: p.truncated }, 'the input', this.ev, (full) => {
        pre.textContent = full;
        holder.cmd = commandOf(full);
      }, str(p.input));
      if (note) this.inputBox.append(note);
    }
  }

  setResult(ev, el) {
    const p = ev.payload || {};
    this.result = ev;
    el.classList.remove('standalone');
    this.el.classList.remove('running');
    this.el.classList.toggle('error', p.isError === true);
    this.el.classList.add('done');
    this.liveOut?.remove();
    this.liveOut = null;
    this.body.append(el);
    const parts = [];
    const code = num(p.exitCode);
    if (p.isError === true) parts.push('error');
    if (code !== null) parts.push('exit ' + code);
    const t0 = envTime(this.ev);
    const t1 = envTime(ev);
    if (t0 && t1 && t1 >= t0) parts.push(fmtDuration(t1 - t0));
    if (!parts.length) parts.push('done');
    this.state.textContent = parts.join(' · ');
    this.state.classList.toggle('state-error', p.isError === true || (code !== null && code !== 0));
  }

  markDenied(reason) {
    this.el.classList.remove('running');
    this.el.classList.add('denied', 'error');
    this.state.textContent = 'denied';
    if (reason) this.state.title = reason;
  }

  addLiveOutput(p) {
    if (this.result) return;
    if (!this.liveOut) {
      this.liveText = h('pre', { class: 'tool-live-output' });
      this.liveOut = h('div', { class: 'tool-section tool-live' }, h('div', { class: 'section-label', text: 'output so far' }), this.liveText);
      this.body.append(this.liveOut);
    }
    const span = h('span', { class: p.channel === 'stderr' ? 'out-stderr' : 'out-stdout', text: str(p.text) });
    this.liveText.append(span);
    this.state.textContent = 'running…';
  }

  addChild(el) {
    if (!this.children) {
      this.childSummary = h('summary', { class: 'children-summary' });
      this.childList = h('div', { class: 'children-list' });
      // open by default; the summary line keeps the latest event in view when closed
      this.children = h('details', { class: 'children', open: true }, this.childSummary, this.childList);
      this.el.append(this.children);
    }
    el.classList.add('nested');
    el.classList.remove('orphan');
    this.childList.append(el);
    this.childCount++;
    this.childSummary.replaceChildren(
      h('span', { class: 'children-count', text: this.childCount + (this.childCount === 1 ? ' event' : ' events') + ' from the subagent' }),
      h('span', { class: 'children-latest', text: describe(el) }),
    );
  }
}

// commandOf is what a call's copy button copies: the command of a shell
// call (its input's "command", a string or a list of words), else the input.
function commandOf(input) {
  let v = null;
  try { v = JSON.parse(str(input)); } catch { /* not JSON */ }
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const c = v.command ?? v.cmd;
    if (typeof c === 'string') return { text: c, isCommand: true };
    if (Array.isArray(c) && c.every((x) => typeof x === 'string')) return { text: c.join(' '), isCommand: true };
  }
  return { text: prettyJSON(input), isCommand: false };
}

// pendingText is the state of a call without a result: running while the
// session runs, else it never got one.
function pendingText() {
  return !S.session || S.session.status === 'running' ? 'running' : 'no result';
}

// describe is a one-line label of a rendered event, for summaries.
function describe(el) {
  const type = el.dataset.type;
  if (type === 'tool.call') {
    const n = el.querySelector('.tool-name')?.textContent || '';
    const s = el.querySelector('.tool-summary')?.textContent || '';
    return n + (s ? ': ' + s : '');
  }
  const t = el.querySelector('.md, .line-text, .thinking-preview');
  const text = (t ? t.textContent : type).replace(/\s+/g, ' ').trim();
  return text.length > 120 ? text.slice(0, 119) + '…' : text;
}

function resultElement(ev) {
  const p = ev.payload || {};
  const el = shell(ev, 'tool-result standalone');
  if (p.isError === true) el.classList.add('error');
  const code = num(p.exitCode);
  // The head is shown only while the call is not loaded (the element is standalone).
  el.append(h('div', { class: 'event-head result-head' },
    h('span', { class: 'line-body' },
      h('span', { class: 'line-label', text: 'result' }),
      h('span', { class: 'line-text', text: (str(p.name) || 'tool') + ' (call not loaded)' })),
    meta(ev)));
  const holder = { text: str(p.output) };
  const label = h('div', { class: 'section-label' }, h('span', { text: p.isError === true ? 'output (error)' : 'output' }));
  if (code !== null) label.append(badge('exit ' + code, code === 0 ? 'badge-ok' : 'badge-bad'));
  if (holder.text) label.append(copyButton(() => holder.text, 'the output'));
  label.append(meta(ev));
  el.append(label);
  const out = holder.text;
  const pre = h('pre', { class: 'tool-output' + (out ? '' : ' empty'), text: out || '(no output)' });
  el.append(pre);
  const note = truncNote(p, 'the output', ev, (full) => {
    holder.text = full;
    pre.textContent = full;
    pre.classList.add('full');
  }, out);
  if (note) el.append(note);
  return el;
}

// ---- renderers by type ----

const ROLES = ['assistant', 'user', 'system'];

function renderMessage(ev) {
  const p = ev.payload || {};
  const role = oneOf(p.role, ROLES, 'other');
  const el = shell(ev, 'message');
  el.dataset.role = role;
  const badges = [];
  if (p.partial === true) badges.push(badge('partial', 'badge-warn', 'the stream ended before the complete message'));
  if (typeof p.mode === 'string' && p.mode) badges.push(badge(p.mode, 'badge-dim', 'sent while a turn was running'));
  const holder = { text: str(p.text) };
  const turn = num(ev.turn) ?? 0;
  const head = S.turnHeads.get(turn);
  if (role === 'user' && !ev.parentCallId && head && !head.dataset.prompt && !p.mode) {
    // The turn's prompt heads it.
    const first = holder.text.split('\n').map((l) => l.trim()).find(Boolean) || '';
    head.dataset.prompt = String(ev.seq ?? '');
    head.querySelector('.turn-prompt').textContent = first.length > 160 ? first.slice(0, 159) + '…' : first;
    el.classList.add('prompt');
  }
  el.append(h('div', { class: 'event-head' }, h('span', { class: 'role', text: str(p.role) || 'message' }),
    meta(ev, ...badges, holder.text ? copyButton(() => holder.text, 'the message') : null)));
  let md = renderMarkdown(holder.text);
  el.append(md);
  const note = truncNote(p, 'the message', ev, (full) => {
    holder.text = full;
    const next = renderMarkdown(full);
    md.replaceWith(next);
    md = next;
  }, holder.text);
  if (note) el.append(note);
  return el;
}

function renderThinking(ev) {
  const p = ev.payload || {};
  const el = shell(ev, 'thinking');
  const text = str(p.text);
  const d = h('details', { class: 'thinking-details' });
  const sum = h('summary', { class: 'event-head' });
  const label = h('span', { class: 'line-body' }, h('span', { class: 'line-label', text: p.redacted === true ? 'thinking (redacted)' : 'thinking' }));
  if (p.redacted === true) {
    el.classList.add('redacted');
    label.append(h('span', { class: 'thinking-preview', text: 'the harness hid this reasoning' }));
  } else {
    const firstLine = text.replace(/\s+/g, ' ').trim();
    label.append(h('span', { class: 'thinking-preview', text: firstLine.length > 140 ? firstLine.slice(0, 139) + '…' : firstLine }));
  }
  sum.append(label, meta(ev, p.partial === true ? badge('partial', 'badge-warn') : null));
  d.append(sum);
  if (p.redacted !== true || text) {
    const box = h('div', { class: 'thinking-text', text });
    d.append(box);
    const note = truncNote(p, 'the reasoning', ev, (full) => { box.textContent = full; }, text);
    if (note) d.append(note);
  }
  el.append(d);
  return el;
}

const PLAN_MARKS = { completed: '✓', in_progress: '◐', pending: '○', cancelled: '✕' };

function renderPlan(ev) {
  const p = ev.payload || {};
  const steps = Array.isArray(p.steps) ? p.steps : [];
  const done = steps.filter((s) => s && s.status === 'completed').length;
  const el = shell(ev, 'plan');
  const d = h('details', { class: 'plan-details', open: true });
  const sum = h('summary', { class: 'event-head' },
    h('span', { class: 'line-body' },
      h('span', { class: 'line-label', text: 'plan' }),
      h('span', { class: 'line-text', text: done + ' of ' + steps.length + ' done' }),
      h('span', { class: 'plan-superseded-note', text: 'updated later' })),
    meta(ev));
  const ul = h('ul', { class: 'plan-steps' });
  for (const s of steps) {
    const status = oneOf(s && s.status, Object.keys(PLAN_MARKS), 'pending');
    ul.append(h('li', { class: 'step', dataset: { status } },
      h('span', { class: 'step-mark', 'aria-hidden': 'true', text: PLAN_MARKS[status] }),
      h('span', { class: 'step-text', text: str(s && s.text) }),
      h('span', { class: 'visually-hidden', text: ' (' + status.replace('_', ' ') + ')' })));
  }
  d.append(sum, ul);
  el.append(d);
  const seq = num(ev.seq) ?? 0;
  if (seq >= S.plan.seq) {
    if (S.plan.el) supersede(S.plan.el);
    S.plan = { seq, el, done, total: steps.length };
    updatePlanChip();
  } else {
    supersede(el);
  }
  return el;
}

function supersede(el) {
  el.classList.add('superseded');
  const d = el.querySelector('details');
  if (d) d.open = false;
}

function updatePlanChip() {
  const chip = $('plan-chip');
  if (!S.plan.el) { chip.hidden = true; return; }
  chip.hidden = false;
  chip.textContent = 'plan ' + S.plan.done + '/' + S.plan.total;
}

const DIFF_MAX = 4000; // lines of one diff drawn

// diffClass is the class of one line of a unified diff.
function diffClass(l) {
  if (l.startsWith('+++') || l.startsWith('---') || l.startsWith('diff ') || l.startsWith('index ')) return 'd-meta';
  if (l.startsWith('@@')) return 'd-hunk';
  if (l.startsWith('+')) return 'd-add';
  if (l.startsWith('-')) return 'd-del';
  if (l.startsWith('\\')) return 'd-meta';
  return 'd-ctx';
}

function diffLines(diff) {
  return diff.replace(/\n$/, '').split('\n');
}

const PAINT_MAX = 2000; // lines of one diff coloured by language

// Painter colours the old and the new side of a diff by the file's
// language, each side carrying its own state (a comment or string left
// open) from line to line; a hunk header starts both afresh.
class Painter {
  constructor(key, lines) {
    this.key = key && lines.length <= PAINT_MAX ? key : null;
    this.old = null;
    this.new = null;
  }

  reset() { this.old = null; this.new = null; }

  // line appends the text of one diff line (its +/-/space mark taken off)
  // to parent, for the side cls says (d-del, d-add, or d-ctx for both).
  line(parent, t, cls) {
    if (!this.key) { parent.append(t); return; }
    if (cls === 'd-del') { this.old = paint(parent, t, this.key, this.old); return; }
    if (cls === 'd-add') { this.new = paint(parent, t, this.key, this.new); return; }
    const before = this.old;
    const same = before === this.new;
    this.new = paint(parent, t, this.key, this.new);
    this.old = same ? this.new : paint(document.createDocumentFragment(), t, this.key, before);
  }
}

// diffView draws a unified diff, one line a row, added and removed lines
// coloured, their text coloured by the language key says (or not).
function diffView(diff, key) {
  const pre = h('pre', { class: 'diff diff-unified' });
  const lines = diffLines(diff);
  const painter = new Painter(key, lines);
  for (const l of lines.slice(0, DIFF_MAX)) {
    const cls = diffClass(l);
    if (cls === 'd-meta' || cls === 'd-hunk') {
      if (cls === 'd-hunk') painter.reset();
      pre.append(h('span', { class: 'd-line ' + cls, text: l + '\n' }));
      continue;
    }
    const row = h('span', { class: 'd-line ' + cls, text: l.slice(0, 1) });
    painter.line(row, l.slice(1), cls);
    row.append('\n');
    pre.append(row);
  }
  if (lines.length > DIFF_MAX) pre.append(h('span', { class: 'd-line d-meta', text: '… ' + (lines.length - DIFF_MAX) + ' more lines' }));
  return pre;
}

// splitView draws a unified diff side by side: the old text on the left,
// the new on the right, a run of removed lines beside the run of added
// lines that replaced it, each side numbered from its hunk's header.
function splitView(diff, key) {
  const body = h('tbody');
  const table = h('table', { class: 'diff diff-split' },
    h('colgroup', null, h('col', { class: 'c-num' }), h('col'), h('col', { class: 'c-num' }), h('col')), body);
  let oldN = 0;
  let newN = 0;
  let dels = [];
  let adds = [];
  const lines = diffLines(diff);
  const painter = new Painter(key, lines);
  const code = (t, cls) => {
    const td = h('td', { class: 'd-code ' + cls });
    painter.line(td, t, cls);
    return td;
  };
  const cells = (side) => side
    ? [h('td', { class: 'd-num', text: String(side.n) }), side.td]
    : [h('td', { class: 'd-num' }), h('td', { class: 'd-code d-empty' })];
  const flush = () => {
    for (let i = 0; i < Math.max(dels.length, adds.length); i++) body.append(h('tr', null, ...cells(dels[i]), ...cells(adds[i])));
    dels = [];
    adds = [];
  };
  for (const l of lines.slice(0, DIFF_MAX)) {
    const cls = diffClass(l);
    if (cls === 'd-meta') continue;
    if (cls === 'd-hunk') {
      flush();
      painter.reset();
      const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(l);
      if (m) { oldN = +m[1]; newN = +m[2]; }
      body.append(h('tr', { class: 'd-hunk-row' }, h('td', { class: 'd-code d-hunk', colspan: '4', text: l })));
    } else if (cls === 'd-del') {
      dels.push({ n: oldN++, td: code(l.slice(1), 'd-del') });
    } else if (cls === 'd-add') {
      adds.push({ n: newN++, td: code(l.slice(1), 'd-add') });
    } else {
      flush();
      const t = l.slice(1);
      const left = h('td', { class: 'd-code d-ctx' });
      painter.line(left, t, 'd-ctx');
      // the right side shows the same text: a copy of the left's nodes
      const right = h('td', { class: 'd-code d-ctx' });
      for (const n of left.childNodes) right.append(n.cloneNode(true));
      body.append(h('tr', null, ...cells({ n: oldN++, td: left }), ...cells({ n: newN++, td: right })));
    }
  }
  flush();
  if (lines.length > DIFF_MAX) body.append(h('tr', null, h('td', { class: 'd-code d-meta', colspan: '4', text: '… ' + (lines.length - DIFF_MAX) + ' more lines' })));
  return table;
}

const SPLIT_KEY = 'agentstream.diffSplit';
function splitPreferred() {
  try { return localStorage.getItem(SPLIT_KEY) === '1'; } catch { return false; }
}

function renderFileChange(ev) {
  const p = ev.payload || {};
  const changes = Array.isArray(p.changes) ? p.changes : [];
  const el = shell(ev, 'file-change');
  el.append(h('div', { class: 'event-head' },
    h('span', { class: 'line-body' },
      h('span', { class: 'line-label', text: 'files' }),
      h('span', { class: 'line-text', text: changes.length === 1 ? str(changes[0] && changes[0].path) : changes.length + ' files changed' })),
    meta(ev)));
  for (const c of changes) {
    if (!c) continue;
    const kind = oneOf(c.kind, ['add', 'modify', 'delete', 'rename'], 'modify');
    const head = h('div', { class: 'change-head' },
      h('span', { class: 'change-kind', dataset: { kind }, text: str(c.kind) || 'change' }),
      h('span', { class: 'change-path', text: str(c.path) }));
    if (c.movePath) head.append(h('span', { class: 'change-move', text: ' → ' + str(c.movePath) }));
    const box = h('div', { class: 'change' }, head);
    if (typeof c.diff === 'string' && c.diff) {
      const diff = c.diff;
      let add = 0;
      let del = 0;
      for (const l of diff.split('\n')) {
        if (l.startsWith('+') && !l.startsWith('+++')) add++;
        else if (l.startsWith('-') && !l.startsWith('---')) del++;
      }
      head.append(h('span', { class: 'change-stat' }, h('span', { class: 'stat-add', text: '+' + add }), ' ', h('span', { class: 'stat-del', text: '−' + del })));
      let split = splitPreferred();
      const key = langOfPath(c.movePath || c.path);
      if (key) box.dataset.lang = key;
      let view = split ? splitView(diff, key) : diffView(diff, key);
      const toggle = h('button', { type: 'button', class: 'split-btn', 'aria-pressed': String(split), title: 'Show the old and new text side by side', text: 'side by side' });
      toggle.addEventListener('click', () => {
        split = !split;
        const next = split ? splitView(diff, key) : diffView(diff, key);
        view.replaceWith(next);
        view = next;
        toggle.setAttribute('aria-pressed', String(split));
        try { localStorage.setItem(SPLIT_KEY, split ? '1' : ''); } catch { /* ignore */ }
      });
      head.append(h('span', { class: 'change-tools' }, toggle, copyButton(() => diff, 'the diff')));
      box.append(view);
    } else if (p.truncated === true) {
      box.append(h('p', { class: 'truncated-note', text: 'no diff: the texts were too large to keep' }));
    }
    el.append(box);
  }
  if (p.truncated === true && changes.some((c) => c && c.diff)) el.append(h('p', { class: 'truncated-note', text: 'the diff was clipped' }));
  return el;
}

// spentTokens reports whether a usage payload counts any token.
function spentTokens(p) {
  return ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheCreationTokens'].some((k) => (num(p[k]) ?? 0) > 0);
}

// usageCost is a usage payload's cost as reported, or null: a cost of 0 for
// tokens spent is a harness's way of saying it has no price for the model.
function usageCost(p) {
  const c = num(p.costUsd);
  if (c === null || (c === 0 && spentTokens(p))) return null;
  return c;
}

function usageText(p) {
  const parts = [];
  if (p.scope === 'call') parts.push('call' + (p.model ? ' · ' + str(p.model) : '') + (p.estimate === true ? ' · estimate' : ''));
  else if (p.scope === 'session') parts.push('session total' + ((num(p.run) ?? 0) > 1 ? ' · run ' + p.run : ''));
  const est = p.estimate === true ? '≥' : '';
  parts.push('in ' + fmtTokens(p.inputTokens), 'out ' + (num(p.outputTokens) !== null ? est : '') + fmtTokens(p.outputTokens));
  if (num(p.cacheReadTokens) !== null) parts.push('cache read ' + fmtTokens(p.cacheReadTokens));
  if (num(p.cacheCreationTokens) !== null) parts.push('cache write ' + fmtTokens(p.cacheCreationTokens));
  if (num(p.reasoningTokens) !== null) parts.push('reasoning ' + fmtTokens(p.reasoningTokens));
  if (num(p.contextTokens) !== null) parts.push('context ' + fmtTokens(p.contextTokens));
  const cost = fmtCost(usageCost(p));
  if (cost) parts.push(cost);
  // A session total's "turns" is the harness's count of model calls.
  if (num(p.turns) !== null) parts.push(p.turns + (p.turns === 1 ? ' model call' : ' model calls'));
  if (num(p.durationMs) !== null) parts.push(fmtDuration(p.durationMs));
  return parts.join(' · ');
}

// usageData are a usage row's figures as data attributes, as the payload
// gives them ('' for what it does not report).
function usageData(p) {
  const v = (x) => (num(x) === null ? '' : String(x));
  return {
    scope: oneOf(p.scope, ['call', 'session'], 'other'), run: String(Math.max(1, num(p.run) ?? 1)),
    input: v(p.inputTokens), output: v(p.outputTokens), cacheRead: v(p.cacheReadTokens),
    cacheWrite: v(p.cacheCreationTokens), cost: v(usageCost(p)), estimate: p.estimate === true ? 'true' : '',
  };
}

function renderUsage(ev) {
  const p = ev.payload || {};
  noteContext(ev);
  const el = line(ev, 'usage small', 'usage', usageText(p));
  Object.assign(el.dataset, usageData(p));
  if (p.estimate === true) el.title = 'The harness never printed this call\'s final count: the output is the count when the call started, a lower bound.';
  return el;
}

function renderSessionStarted(ev) {
  const p = ev.payload || {};
  noteContext(ev);
  const parts = [];
  if (p.harness) parts.push(str(p.harness) + (p.version ? ' ' + str(p.version) : ''));
  if (p.model) parts.push(str(p.model));
  if (p.cwd) parts.push(str(p.cwd));
  if (p.permissionMode) parts.push('permissions: ' + str(p.permissionMode));
  if (num(p.contextWindow) !== null) parts.push('context window ' + fmtTokens(p.contextWindow));
  const el = line(ev, 'sys session-started', 'session started', parts.join(' · '));
  if (Array.isArray(p.tools) && p.tools.length) {
    el.append(detailsBlock(p.tools.length + ' tools', h('div', { class: 'tool-list', text: p.tools.map(str).join(', ') })));
  }
  return el;
}

function renderSessionUpdated(ev) {
  const p = ev.payload || {};
  const parts = [];
  for (const k of ['model', 'permissionMode', 'mode', 'cwd']) if (p[k] !== null && p[k] !== undefined) parts.push(k + ' → ' + str(p[k]));
  for (const k of ['tools', 'commands']) if (Array.isArray(p[k])) parts.push(p[k].length + ' ' + k);
  return line(ev, 'sys small', 'session updated', parts.join(' · ') || 'no change');
}

function renderEnded(ev) {
  const p = ev.payload || {};
  const status = oneOf(p.status, ['succeeded', 'failed', 'cancelled'], 'unknown');
  const el = shell(ev, 'ended');
  el.dataset.status = status;
  const words = ['session ' + (str(p.status) || 'ended')];
  const r = reasonLabel(p.reason);
  if (r) words.push(r);
  if (p.stopReason) words.push('stop reason: ' + str(p.stopReason));
  el.append(h('div', { class: 'event-head' },
    h('span', { class: 'line-body' },
      h('span', { class: 'ended-mark', 'aria-hidden': 'true', text: status === 'succeeded' ? '✓' : status === 'failed' ? '✕' : '■' }),
      h('span', { class: 'line-text', text: words.join(' · ') })),
    meta(ev)));
  if (p.error) el.append(h('pre', { class: 'ended-error', text: str(p.error) }));
  if (p.summary) el.append(detailsBlock('final summary', renderMarkdown(str(p.summary))));
  return el;
}

function renderBackground(ev) {
  const p = ev.payload || {};
  const st = str(p.status);
  const cls = st === 'failed' ? 'bad' : st === 'completed' ? 'ok' : 'dim';
  const el = line(ev, 'background ' + cls, 'background ' + (str(p.kind) || 'task'),
    [st, str(p.description)].filter(Boolean).join(': '));
  if (p.summary) el.append(detailsBlock('summary', renderMarkdown(str(p.summary))));
  return el;
}

function renderDenied(ev) {
  const p = ev.payload || {};
  const view = S.calls.get(str(p.callId));
  if (view) view.markDenied(str(p.reason));
  return line(ev, 'warn', 'denied', (str(p.name) || 'tool') + (p.reason ? ': ' + str(p.reason) : ''));
}

function renderPermission(ev) {
  const p = ev.payload || {};
  const el = line(ev, 'ask', 'permission', 'requested for ' + (str(p.name) || 'a tool'));
  if (Array.isArray(p.options) && p.options.length) {
    el.append(h('div', { class: 'options' }, ...p.options.map((o) => h('span', { class: 'option', title: str(o && o.kind), text: str(o && (o.label || o.id)) }))));
  }
  if (p.input) el.append(detailsBlock('input', h('pre', { class: 'code-box', text: prettyJSON(p.input) })));
  trackRequest(ev, el, 'permission');
  return el;
}

function renderQuestion(ev) {
  const p = ev.payload || {};
  const qs = Array.isArray(p.questions) ? p.questions : [];
  const el = line(ev, 'ask', 'question', qs.length === 1 ? '' : qs.length + ' questions');
  for (const q of qs) {
    if (!q) continue;
    const box = h('div', { class: 'question' });
    if (q.header) box.append(h('div', { class: 'question-header', text: str(q.header) }));
    box.append(h('div', { class: 'question-text', text: str(q.question) }));
    if (Array.isArray(q.options) && q.options.length) {
      const ul = h('ul', { class: 'question-options' + (q.multiSelect ? ' multi' : '') });
      for (const o of q.options) {
        if (!o) continue;
        ul.append(h('li', {}, h('span', { class: 'option-label', text: str(o.label) }), o.description ? h('span', { class: 'option-desc', text: ' — ' + str(o.description) }) : null));
      }
      box.append(ul);
    }
    el.append(box);
  }
  trackRequest(ev, el, 'question');
  return el;
}

// BY says who resolved a request, in words.
const BY = { policy: 'by the policy', person: 'by a person', harness: 'by the harness', session: 'by the session' };

function renderResolved(ev) {
  const p = ev.payload || {};
  const outcome = str(p.outcome) || 'resolved';
  const cls = outcome === 'denied' || outcome === 'cancelled' ? 'warn' : 'dim';
  const answer = p.answer === null || p.answer === undefined ? '' : str(p.answer);
  const by = Object.hasOwn(BY, p.by) ? BY[p.by] : p.auto === true ? BY.policy : '';
  const el = line(ev, 'resolved ' + cls, 'request ' + outcome, by + (answer ? (by ? ': ' : '') + answer : ''));
  noteResolved(p);
  return el;
}

function renderState(ev) {
  const p = ev.payload || {};
  const st = str(p.state) || '?';
  const cls = st === 'failed' ? 'bad' : st === 'interrupting' ? 'warn' : 'dim';
  const el = line(ev, 'state small ' + cls, 'state', (p.previous ? str(p.previous) + ' → ' : '') + st + (p.reason && p.reason !== p.state ? ' · ' + str(p.reason) : ''));
  el.dataset.state = oneOf(p.state, LIVE_STATES, 'unknown');
  noteState(ev);
  return el;
}

function renderSent(ev) {
  const p = ev.payload || {};
  const what = ev.type === 'message.accepted' ? 'accepted' : ev.type === 'message.started' ? 'started' : 'completed';
  const parts = [str(p.mode), str(p.status)].filter(Boolean);
  if (p.emulated === true) parts.push('emulated' + (p.reason ? ': ' + str(p.reason) : ''));
  else if (p.reason) parts.push(str(p.reason));
  if (p.error) parts.push(str(p.error));
  const bad = p.status === 'failed' || p.status === 'cancelled';
  const el = line(ev, 'sent small ' + (bad ? 'warn' : 'dim'), 'message ' + str(p.messageId) + ' ' + what, parts.join(' · '));
  el.dataset.messageId = str(p.messageId);
  el.dataset.status = str(p.status);
  return el;
}

function renderError(ev) {
  const p = ev.payload || {};
  const label = 'error' + (p.errorType ? ' (' + str(p.errorType) + ')' : '');
  return line(ev, 'bad', label, str(p.message), p.recoverable === true ? badge('recoverable', 'badge-dim') : null);
}

function renderRetry(ev) {
  const p = ev.payload || {};
  const a = num(p.attempt);
  const max = num(p.maxRetries);
  const parts = [];
  if (a !== null) parts.push('attempt ' + a + (max !== null ? ' of ' + max : ''));
  if (num(p.delayMs) !== null) parts.push('in ' + fmtDuration(p.delayMs));
  if (p.status !== null && p.status !== undefined) parts.push('HTTP ' + str(p.status));
  if (p.error) parts.push(str(p.error));
  return line(ev, 'warn', 'retry', parts.join(' · '));
}

function renderQuota(ev) {
  const p = ev.payload || {};
  const parts = [];
  if (p.message) parts.push(str(p.message));
  if (p.status) parts.push(str(p.status));
  if (p.limitType) parts.push(str(p.limitType));
  const u = num(p.utilization);
  if (u !== null) parts.push(Math.round(u <= 1 ? u * 100 : u) + '% used');
  const reset = parseTime(p.resetAt);
  if (reset) parts.push('resets ' + fmtWhen(reset));
  return line(ev, 'warn', 'quota', parts.join(' · '));
}

function renderCompaction(ev) {
  const p = ev.payload || {};
  const pre = num(p.preTokens);
  const post = num(p.postTokens);
  const what = pre !== null || post !== null ? fmtTokens(pre) + ' → ' + fmtTokens(post) + ' tokens' : '';
  return line(ev, 'sys', 'context compacted' + (p.trigger ? ' (' + str(p.trigger) + ')' : ''), what);
}

function renderHook(ev) {
  const p = ev.payload || {};
  const el = line(ev, 'dim small', 'hook', [str(p.event), str(p.name), str(p.status), str(p.outcome)].filter(Boolean).join(' · '));
  if (p.output) {
    const pre = h('pre', { class: 'code-box', text: str(p.output) });
    el.append(detailsBlock('output', pre));
    const note = truncNote(p, 'the output', ev, (full) => { pre.textContent = full; }, str(p.output));
    if (note) el.append(note);
  }
  return el;
}

function renderFallback(ev) {
  const p = ev.payload || {};
  const side = (x) => (x ? [str(x.harness), str(x.model)].filter(Boolean).join(' ') : '?');
  return line(ev, 'warn', 'fallback', side(p.from) + ' → ' + side(p.to) + (p.failure ? ' (' + str(p.failure) + ')' : '') + (p.message ? ': ' + str(p.message) : ''));
}

function renderStderr(ev) {
  const p = ev.payload || {};
  const el = shell(ev, 'stderr');
  el.append(h('div', { class: 'event-head' }, h('pre', { class: 'stderr-text', text: str(p.text) }), meta(ev)));
  return el;
}

function renderRaw(ev) {
  const p = ev.payload || {};
  const el = shell(ev, 'raw');
  const parts = [str(p.reason) || 'unmapped'];
  if (num(p.bytes) !== null) parts.push(fmtInt(p.bytes) + ' bytes');
  el.append(h('div', { class: 'event-head' },
    h('span', { class: 'line-body' }, h('span', { class: 'line-label', text: 'raw' }), h('span', { class: 'line-text', text: parts.join(' · ') })),
    meta(ev)));
  const content = p.json !== null && p.json !== undefined ? JSON.stringify(p.json, null, 2) : str(p.text);
  el.append(h('pre', { class: 'raw-body', text: content }));
  const note = truncNote(p, 'the line');
  if (note) el.append(note);
  return el;
}

function renderSubagent(ev) {
  const p = ev.payload || {};
  const st = str(p.status);
  return line(ev, 'subagent small ' + (st === 'failed' ? 'bad' : 'dim'), 'subagent ' + (st || ''), [str(p.name), str(p.description)].filter(Boolean).join(': '));
}

// renderTurnStarted is a turn's header: its number and, once the turn's
// user message is rendered, that prompt's first line.
function renderTurnStarted(ev) {
  const el = shell(ev, 'turn-start');
  const p = ev.payload || {};
  const n = num(ev.turn) ?? num(p.turn) ?? 0;
  el.append(h('div', { class: 'event-head' },
    h('span', { class: 'turn-label' }, h('span', { class: 'turn-number', text: 'turn ' + n }), h('span', { class: 'turn-prompt' })),
    meta(ev)));
  S.turnHeads.set(n, el);
  const t = envTime(ev);
  if (t) S.turnStart.set(n, t);
  return el;
}

// renderTurnEnded is a turn's footer: how it ended and what it spent, from
// the turn's usage events (filled in by fillFooter once they are loaded).
function renderTurnEnded(ev) {
  const p = ev.payload || {};
  const reason = str(p.reason) || 'ok';
  const cls = reason === 'error' ? 'bad' : reason === 'interrupt' ? 'warn' : 'dim';
  const n = num(ev.turn) ?? num(p.turn) ?? 0;
  const el = shell(ev, 'turn-end turn-foot small ' + cls);
  el.dataset.footTurn = String(n);
  const t0 = S.turnStart.get(n);
  const t1 = envTime(ev);
  if (t0 && t1 && t1 >= t0) el.dataset.wallMs = String(t1 - t0);
  el.append(h('div', { class: 'event-head' },
    h('span', { class: 'line-body' },
      h('span', { class: 'line-label', text: 'turn ' + n + (reason === 'ok' ? '' : ' · ' + reason) }),
      h('span', { class: 'line-text turn-figures', text: S.usageLoaded ? '' : 'usage…' })),
    meta(ev)));
  if (S.usageLoaded) {
    fillFooter(el);
    // usage that arrived with this batch is summed once the throttle runs
    if (S.applyingLive) refreshFootersSoon();
  }
  return el;
}

const TOKEN_FIELDS = [
  ['inputTokens', 'in', 'input'], ['outputTokens', 'out', 'output'],
  ['cacheReadTokens', 'cache read', 'cacheRead'], ['cacheCreationTokens', 'cache write', 'cacheWrite'],
];

// summarizeTurns gives each turn's usage from a session's usage events (in
// seq order), by the recap's rules within the turn: where the turn has the
// harness's running totals, what they grew by over the turn (run by run,
// runs added up), plus the model calls after the turn's latest total; else,
// and for a figure no total gives, the sum of its model calls. Duration and the count of model calls come
// from the totals where they give them. A figure nobody reported is null.
function summarizeTurns(list) {
  const turns = new Map();
  const prevByRun = new Map();
  const part = () => ({ n: 0, sums: {}, cost: null, costMissing: false, estimate: false });
  const addCall = (a, p) => {
    a.n++;
    for (const [k] of TOKEN_FIELDS) { const v = num(p[k]); if (v !== null) a.sums[k] = (a.sums[k] ?? 0) + v; }
    const c = usageCost(p);
    if (c !== null) a.cost = (a.cost ?? 0) + c; else a.costMissing = true;
    if (p.estimate === true) a.estimate = true;
  };
  for (const ev of list) {
    const p = ev.payload || {};
    const t = num(ev.turn) ?? 0;
    let s = turns.get(t);
    if (!s) { s = { calls: 0, all: part(), after: part(), runs: new Map() }; turns.set(t, s); }
    if (p.scope === 'call') {
      s.calls++;
      addCall(s.all, p);
      addCall(s.after, p);
    } else if (p.scope === 'session') {
      const run = Math.max(1, num(p.run) ?? 1);
      if (!s.runs.has(run)) s.runs.set(run, { before: prevByRun.get(run) || null, last: null });
      s.runs.get(run).last = p;
      prevByRun.set(run, p);
      s.after = part(); // the calls so far are in this total
    }
  }
  const out = new Map();
  for (const [t, s] of turns) {
    const grew = (get) => {
      let total = null;
      for (const { before, last } of s.runs.values()) {
        const a = get(last);
        if (a === null) continue;
        const b = before ? get(before) ?? 0 : 0;
        total = (total ?? 0) + Math.max(0, a - b);
      }
      return total;
    };
    const plus = (a, b) => (a === null && b === null ? null : (a ?? 0) + (b ?? 0));
    const totals = s.runs.size > 0;
    const calls = totals ? s.after : s.all;
    const f = { calls: s.calls, estimate: calls.estimate };
    for (const [k] of TOKEN_FIELDS) {
      // A figure no total gives (a total of the cost alone, as a Claude
      // transcript's cost-state) is the sum of the turn's calls.
      const g = totals ? grew((p) => num(p[k])) : null;
      f[k] = g !== null ? plus(g, s.after.sums[k] ?? null) : s.all.sums[k] ?? null;
      if (k === 'outputTokens') f.estimate = (g !== null ? s.after : s.all).estimate;
    }
    const base = totals ? grew(usageCost) : null;
    f.costUsd = plus(base, calls.cost);
    // unpriced: the harness had no price for part of its total.
    const unpriced = [...s.runs.values()].some(({ last }) => last.unpriced === true);
    f.costPartial = f.costUsd !== null && (calls.costMissing || unpriced);
    f.durationMs = grew((p) => num(p.durationMs));
    const counted = totals ? grew((p) => num(p.turns)) : null;
    f.modelCalls = counted !== null ? counted + s.after.n : s.calls || null;
    out.set(t, f);
  }
  return out;
}

// fillFooter writes a turn footer's figures from S.turnUsage.
function fillFooter(el) {
  const turn = Number(el.dataset.footTurn) || 0;
  const f = S.turnUsage.get(turn) || null;
  const parts = [];
  const v = (x) => (x === null || x === undefined ? '' : String(x));
  if (!f) {
    parts.push('usage not reported');
  } else {
    if (num(f.modelCalls) !== null) parts.push(fmtInt(f.modelCalls) + (f.modelCalls === 1 ? ' model call' : ' model calls'));
    const est = f.estimate ? '≥' : '';
    for (const [k, label] of TOKEN_FIELDS) {
      if (num(f[k]) !== null) parts.push(label + ' ' + (k === 'outputTokens' ? est : '') + fmtTokens(f[k]));
      else if (k === 'inputTokens' || k === 'outputTokens') parts.push(label + ' not reported');
    }
    const cost = fmtCost(f.costUsd);
    parts.push(cost ? (f.costPartial ? '≥' : '') + cost : 'cost not reported');
  }
  const wall = num(Number(el.dataset.wallMs));
  const d = f && num(f.durationMs) !== null ? f.durationMs : el.dataset.wallMs ? wall : null;
  parts.push(d !== null ? fmtDuration(d) : 'time not reported');
  el.querySelector('.turn-figures').textContent = parts.join(' · ');
  Object.assign(el.dataset, {
    input: v(f && f.inputTokens), output: v(f && f.outputTokens), cacheRead: v(f && f.cacheReadTokens),
    cacheWrite: v(f && f.cacheCreationTokens), cost: v(f && f.costUsd), calls: v(f && f.calls), durationMs: v(d),
  });
}

function fillFooters() {
  for (const el of timeline.querySelectorAll('.turn-foot')) fillFooter(el);
}

function renderUnknown(ev) {
  const el = line(ev, 'unknown', str(ev.type) || 'event', '');
  el.append(detailsBlock('payload', h('pre', { class: 'code-box', text: JSON.stringify(ev.payload ?? null, null, 2) })));
  return el;
}

function renderStoredDelta(ev) {
  // Deltas are not stored by default; when they are, they repeat the complete
  // event that follows, so they sit with the raw events behind the toggle.
  const p = ev.payload || {};
  const el = line(ev, 'delta small dim', str(ev.type), str(p.text));
  return el;
}

const RENDER = {
  'session.started': renderSessionStarted,
  'session.title': (ev) => line(ev, 'sys small', 'title', str((ev.payload || {}).title)),
  'session.updated': renderSessionUpdated,
  'session.ended': renderEnded,
  'session.background': renderBackground,
  message: renderMessage,
  thinking: renderThinking,
  plan: renderPlan,
  usage: renderUsage,
  raw: renderRaw,
  'turn.started': renderTurnStarted,
  'turn.ended': renderTurnEnded,
  'tool.denied': renderDenied,
  'file.change': renderFileChange,
  subagent: renderSubagent,
  'permission.request': renderPermission,
  question: renderQuestion,
  'request.resolved': renderResolved,
  'session.state': renderState,
  'message.accepted': renderSent,
  'message.started': renderSent,
  'message.completed': renderSent,
  compaction: renderCompaction,
  quota: renderQuota,
  retry: renderRetry,
  error: renderError,
  warning: (ev) => line(ev, 'warn', 'warning', str((ev.payload || {}).message)),
  stderr: renderStderr,
  hook: renderHook,
  fallback: renderFallback,
  'message.delta': renderStoredDelta,
  'thinking.delta': renderStoredDelta,
  'tool.output': renderStoredDelta,
};

// ---- placing events ----

function orphanEntry(callId) {
  let o = S.orphans.get(callId);
  if (!o) { o = { result: null, children: [] }; S.orphans.set(callId, o); }
  return o;
}

// renderBatch renders stored events in seq order into ctx.top (top-level
// elements) or into the tool calls they belong to.
function renderBatch(events) {
  const ctx = { top: document.createDocumentFragment(), newCalls: [] };
  for (const ev of events) {
    try {
      renderOne(ev, ctx);
    } catch (err) {
      // One event that cannot be rendered costs that event only.
      console.error('agentstream: cannot render event', ev && ev.seq, err);
      const el = shell(ev || {}, 'line bad');
      el.append(h('div', { class: 'event-head' }, h('span', { class: 'line-text', text: 'this event could not be shown (' + str(ev && ev.type) + ')' })));
      ctx.top.append(el);
    }
  }
  return ctx;
}

function renderOne(ev, ctx) {
  // An event can be on the page already when the window was cut at its end
  // and loaded again: a result or a subagent event kept inside its call.
  if (num(ev.seq) !== null && document.getElementById('e' + ev.seq)) return;
  const p = ev.payload || {};
  let el;
  if (ev.type === 'tool.call') {
    const view = new ToolView(ev);
    if (view.callId) {
      S.calls.set(view.callId, view);
      ctx.newCalls.push(view);
    }
    el = view.el;
  } else if (ev.type === 'tool.result') {
    const callId = str(p.callId);
    el = resultElement(ev);
    const view = S.calls.get(callId);
    if (view && !view.result) { view.setResult(ev, el); return; }
    if (!view && callId) orphanEntry(callId).result = { ev, el }; // its call is on an earlier page
  } else {
    el = (Object.hasOwn(RENDER, ev.type) ? RENDER[ev.type] : renderUnknown)(ev);
  }

  // Subagent events go under the call that spawned them.
  const parent = ev.parentCallId ? str(ev.parentCallId) : ev.type === 'subagent' ? str(p.callId) : '';
  if (parent) {
    const view = S.calls.get(parent);
    if (view) { view.addChild(el); return; }
    if (ev.parentCallId) {
      el.classList.add('orphan');
      orphanEntry(parent).children.push(el);
    }
  }
  placeTop(ctx.top, el);
}

// ---- plumbing, folded ----
//
// Events that say how the session ran rather than what the agent did are
// folded, each run of them into one details row ("3 session events") that
// opens on demand. Raw events, shown only with "show raw", join the fold
// they follow (and "show raw" opens it); usage rows have their own toggle.

const PLUMBING = new Set([
  'hook', 'session.updated', 'session.state', 'session.title', 'message.accepted', 'message.started',
  'message.completed', 'message.status', 'account',
]);

function isFold(n) {
  return !!n && n.nodeType === 1 && n.classList.contains('fold');
}

function newFold() {
  const list = h('div', { class: 'fold-list' });
  const d = h('details', { class: 'fold', dataset: { count: '0' } },
    h('summary', { class: 'fold-summary' }, h('span', { class: 'fold-count' }), h('span', { class: 'fold-kinds' })), list);
  d._list = list;
  return d;
}

function updateFold(d) {
  const items = [...d._list.children].filter((el) => el.dataset.type !== 'raw');
  const kinds = new Map();
  for (const el of items) {
    const k = (el.dataset.type || 'event').replace(/^session\./, 'session ').replace(/^message\./, 'message ');
    kinds.set(k, (kinds.get(k) || 0) + 1);
  }
  d.dataset.count = String(items.length);
  d.querySelector('.fold-count').textContent = items.length + (items.length === 1 ? ' session event' : ' session events');
  d.querySelector('.fold-kinds').textContent = [...kinds].map(([k, n]) => (n > 1 ? n + ' × ' : '') + k).join(' · ');
  const first = items[0];
  const last = items[items.length - 1];
  d.dataset.first = first ? first.dataset.seq || '' : '';
  d.dataset.last = last ? last.dataset.seq || '' : '';
}

// placeTop appends a top-level element to parent, a plumbing event into
// the fold at parent's end (a new one if there is none).
function placeTop(parent, el) {
  if (el.dataset.type === 'raw' && isFold(parent.lastChild) && !el.dataset.parent) {
    parent.lastChild._list.append(el);
    parent.lastChild.dataset.raw = 'true';
    if (showRaw.checked) parent.lastChild.open = true;
    return;
  }
  if (!PLUMBING.has(el.dataset.type) || el.dataset.parent) { parent.append(el); return; }
  let d = parent.lastChild;
  if (!isFold(d)) { d = newFold(); parent.append(d); }
  d._list.append(el);
  updateFold(d);
}

// joinFolds merges two folds that became neighbours when a page was
// inserted between the edges: the one after into the one before.
function joinFolds(a, b) {
  if (!isFold(a) || !isFold(b)) return;
  if (b.open) a.open = true;
  if (b.dataset.raw) a.dataset.raw = 'true';
  a._list.append(...b._list.children);
  b.remove();
  updateFold(a);
}

// mergeOrphans moves results and subagent events rendered before their call
// was loaded (paging backwards) into the call.
function mergeOrphans(views) {
  for (const view of views) {
    const o = S.orphans.get(view.callId);
    if (!o) continue;
    S.orphans.delete(view.callId);
    if (o.result && !view.result) view.setResult(o.result.ev, o.result.el);
    for (const c of o.children) view.addChild(c);
  }
}

// ---- context gauge and recap ----

// noteContext follows the context of the session from events that arrive
// live; pages loaded from history leave the gauge to the session's recap,
// which already has the latest call's figures.
function noteContext(ev) {
  if (!S.applyingLive) return;
  const p = ev.payload || {};
  const seq = num(ev.seq) ?? Infinity;
  if (ev.type === 'session.started') {
    if (num(p.contextWindow) !== null && seq >= S.context.windowSeq) {
      S.context.window = p.contextWindow;
      S.context.windowSeq = seq;
      updateContext();
    }
    return;
  }
  if (ev.type !== 'usage') return;
  if (num(ev.seq) !== null && !S.usage.some((e) => e.seq === ev.seq)) {
    S.usage.push(ev);
    if (S.usageLoaded) refreshFootersSoon();
  }
  if (seq < S.context.seq) return;
  const point = contextPoint(ev);
  if (point === null) return;
  if (S.contextLoaded) { S.contextPoints.push(point); drawContextChartSoon(); }
  S.context.seq = seq;
  S.context.tokens = point.tokens;
  if (num(p.contextWindow) !== null) { S.context.window = p.contextWindow; S.context.windowSeq = seq; }
  updateContext();
}

// contextPoint is the context a usage event says the main agent used (a
// subagent's calls are its own conversation), or null.
function contextPoint(ev) {
  const p = ev.payload || {};
  if (ev.type !== 'usage' || ev.parentCallId) return null;
  if (p.scope !== 'call' && p.scope !== 'session') return null;
  let tokens = num(p.contextTokens);
  if (tokens === null && p.scope === 'call') {
    const parts = [p.inputTokens, p.cacheReadTokens, p.cacheCreationTokens].map(num).filter((x) => x !== null);
    if (parts.length) tokens = parts.reduce((a, b) => a + b, 0);
  }
  if (tokens === null) return null;
  return { seq: num(ev.seq) ?? 0, t: envTime(ev), tokens };
}

// loadContextPoints reads the session's usage events, page by page, for
// the chart of its context over time.
async function loadContextPoints() {
  const points = [];
  const all = [];
  let after = 0;
  for (let pages = 0; pages < 50; pages++) {
    const list = await api(base + '/events', { types: 'usage', after, limit: 5000 });
    if (!Array.isArray(list) || !list.length) break;
    for (const ev of list) {
      if (ev && num(ev.seq) !== null) all.push(ev);
      const pt = contextPoint(ev);
      if (pt) points.push(pt);
    }
    after = num(list[list.length - 1].seq) ?? after;
    if (list.length < 5000) break;
  }
  S.contextPoints = points.filter((p) => p.seq > 0).sort((a, b) => a.seq - b.seq);
  S.contextLoaded = true;
  drawContextChart();
  // usage events that came live while the pages loaded
  const seen = new Set(all.map((e) => e.seq));
  S.usage = all.concat(S.usage.filter((e) => !seen.has(e.seq))).sort((a, b) => a.seq - b.seq);
  S.usageLoaded = true;
  S.turnUsage = summarizeTurns(S.usage);
  fillFooters();
}

const refreshFootersSoon = throttle(() => {
  S.turnUsage = summarizeTurns(S.usage);
  fillFooters();
}, 500);

// drawContextChart draws the context used over the session's time: the
// share of the window each model call sent, against the call's time (its
// place in the session when the events carry no time).
function drawContextChart() {
  const box = $('context-chart');
  if (!box) return;
  const pts = S.contextPoints;
  const u = (S.session && S.session.usage) || {};
  const win = S.context.window ?? num(u.contextWindow);
  box.dataset.points = String(pts.length);
  box.dataset.window = win === null ? '' : String(win);
  box.dataset.peak = pts.length ? String(Math.max(...pts.map((p) => p.tokens))) : '';
  if (pts.length < 2) { box.hidden = true; box.replaceChildren(); return; }
  box.hidden = false;
  const W = 160, H = 28, pad = 1;
  const timed = pts.every((p) => p.t);
  const xs = pts.map((p) => (timed ? p.t.getTime() : p.seq));
  const x0 = Math.min(...xs), x1 = Math.max(...xs);
  const peak = Math.max(...pts.map((p) => p.tokens));
  const top = win !== null && win > 0 ? Math.max(win, peak) : peak;
  const X = (x) => pad + (x1 === x0 ? 0 : (x - x0) / (x1 - x0)) * (W - 2 * pad);
  const Y = (v) => H - pad - (top > 0 ? v / top : 0) * (H - 2 * pad);
  let d = '';
  pts.forEach((p, i) => { d += (i ? ' L' : 'M') + X(xs[i]).toFixed(1) + ' ' + Y(p.tokens).toFixed(1); });
  const area = d + ' L' + X(xs[xs.length - 1]).toFixed(1) + ' ' + (H - pad) + ' L' + X(xs[0]).toFixed(1) + ' ' + (H - pad) + ' Z';
  const last = pts[pts.length - 1];
  const what = win !== null && win > 0 ? ' of ' + fmtInt(win) + ' (' + Math.round((100 * peak) / win) + '% at most)' : '';
  const chart = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, class: 'context-svg', role: 'img',
    'aria-label': 'Context over the session: at most ' + fmtInt(peak) + ' tokens' + what },
  svg('title', null, 'Context over the session' + (timed ? '' : ' (by event)') + ': ' + pts.length + ' model calls, at most ' +
    fmtInt(peak) + ' tokens' + what + ', ' + fmtInt(last.tokens) + ' at the latest'),
  svg('path', { d: area, class: 'context-area' }),
  svg('path', { d, class: 'context-line' }));
  if (win !== null && win > 0) chart.append(svg('line', { x1: pad, x2: W - pad, y1: Y(win), y2: Y(win), class: 'context-limit' }));
  box.replaceChildren(chart);
}
const drawContextChartSoon = throttle(drawContextChart, 1000);

function updateContext() {
  const u = (S.session && S.session.usage) || {};
  const tokens = S.context.tokens ?? num(u.contextTokens);
  const win = S.context.window ?? num(u.contextWindow);
  const box = $('context');
  const fill = $('context-fill');
  const text = $('context-text');
  box.classList.remove('level-ok', 'level-warn', 'level-high', 'level-unknown');
  if (tokens === null) {
    text.textContent = win !== null ? '— / ' + fmtTokens(win) : '—';
    fill.style.width = '0%';
    box.classList.add('level-unknown');
    box.title = 'Context: no model call reported yet';
    box.dataset.tokens = '';
    box.dataset.window = win === null ? '' : String(win);
    return;
  }
  box.dataset.tokens = String(tokens);
  box.dataset.window = win === null ? '' : String(win);
  if (win === null || win <= 0) {
    text.textContent = fmtTokens(tokens) + ' / ?';
    fill.style.width = '0%';
    box.classList.add('level-unknown');
    box.title = 'Context: ' + fmtInt(tokens) + ' tokens; window unknown';
    return;
  }
  const pct = Math.min(100, (tokens / win) * 100);
  fill.style.width = pct.toFixed(1) + '%';
  text.textContent = fmtTokens(tokens) + ' / ' + fmtTokens(win) + ' · ' + (pct < 1 && pct > 0 ? '<1' : Math.round(pct)) + '%';
  box.classList.add(pct >= 85 ? 'level-high' : pct >= 60 ? 'level-warn' : 'level-ok');
  box.title = 'Context: ' + fmtInt(tokens) + ' of ' + fmtInt(win) + ' tokens';
}

function sessionDuration(s) {
  const d = num(s.durationMs);
  if (d !== null) return d;
  const start = parseTime(s.startedAt);
  if (!start) return null;
  const end = parseTime(s.endedAt);
  if (end) return end - start;
  if (s.status === 'running') return Date.now() - start.getTime();
  return null;
}

// recapText formats a recap figure: '—' when nobody reported it, '≥' before
// a lower bound.
function recapText(u, key, fmt) {
  const v = num(u[key]);
  if (v === null) return '—';
  return (Array.isArray(u.estimated) && u.estimated.includes(key) ? '≥' : '') + fmt(v);
}

const TOKENS_FROM = {
  session: ' (the harness\'s own total)',
  calls: ' (the sum of the model calls)',
  'session+calls': ' (the harness\'s total, and the model calls since)',
};

function renderRecap(s) {
  const u = s.usage || {};
  const set = (id, text, title) => { const e = $(id); e.textContent = text; e.title = title || ''; };
  const from = TOKENS_FROM[u.tokensFrom] || '';
  const est = Array.isArray(u.estimated) && u.estimated.includes('outputTokens')
    ? '; at least: a model call\'s final count was never printed' : '';
  set('recap-input', recapText(u, 'inputTokens', fmtTokens), 'input tokens: ' + fmtInt(u.inputTokens) + from);
  set('recap-output', recapText(u, 'outputTokens', fmtTokens), 'output tokens: ' + fmtInt(u.outputTokens) + (num(u.reasoningTokens) !== null ? ', of which reasoning ' + fmtInt(u.reasoningTokens) : '') + from + est);
  const cr = num(u.cacheReadTokens);
  const cc = num(u.cacheCreationTokens);
  const cacheParts = [];
  if (cr !== null) cacheParts.push(fmtTokens(cr) + ' read');
  if (cc !== null) cacheParts.push(fmtTokens(cc) + ' write');
  set('recap-cache', cacheParts.length ? cacheParts.join(' · ') : '—',
    'cache read ' + fmtInt(cr) + ', cache write ' + fmtInt(cc));
  const cost = fmtCost(u.costUsd);
  $('recap-cost-item').hidden = cost === null;
  const costEst = Array.isArray(u.estimated) && u.estimated.includes('costUsd');
  set('recap-cost', cost === null ? '—' : (costEst ? '≥' : '') + cost,
    cost ? 'reported by the harness: $' + u.costUsd + (costEst ? '; part of the session reported no cost' : '') : '');
  set('recap-turns', fmtInt(u.turns), 'turns: the prompts the agent took up');
  set('recap-calls', fmtInt(u.modelCalls), 'model calls: round trips to the model' +
    (num(u.calls) ? ', ' + fmtInt(u.calls) + ' with usage of their own' : ''));
  const d = sessionDuration(s);
  set('recap-duration', fmtDuration(d), num(u.durationMs) !== null ? 'harness-reported: ' + fmtDuration(u.durationMs) : '');
  let prem = $('recap-premium');
  if (num(u.premiumRequests) !== null) {
    if (!prem) {
      prem = h('span', { class: 'recap-item', dataset: { field: 'premium' } }, h('span', { class: 'recap-label', text: 'premium' }), ' ', h('span', { class: 'recap-value', id: 'recap-premium' }));
      $('plan-chip').before(prem);
      prem = $('recap-premium');
    }
    prem.textContent = String(u.premiumRequests);
  }
  const models = Array.isArray(u.models) ? u.models.filter((m) => m && typeof m.model === 'string') : [];
  $('recap-models-item').hidden = models.length < 2;
  set('recap-models', models.map((m) => str(m.model) || '(unknown)').join(' + '),
    models.map((m) => str(m.model) + (Array.isArray(m.names) && m.names.length ? ' (' + m.names.map(str).join(', ') + ')' : '') +
      ': in ' + fmtInt(m.inputTokens) + ', out ' + fmtInt(m.outputTokens) + ', cache read ' + fmtInt(m.cacheReadTokens) +
      ', cache write ' + fmtInt(m.cacheCreationTokens) + (fmtCost(m.costUsd) ? ', ' + fmtCost(m.costUsd) : '')).join('\n'));
  const r = $('recap');
  r.dataset.missing = Array.isArray(u.missing) ? u.missing.join(',') : '';
  r.dataset.estimated = Array.isArray(u.estimated) ? u.estimated.join(',') : '';
  const v = (x) => (num(x) === null ? '' : String(x));
  Object.assign(r.dataset, {
    input: v(u.inputTokens), output: v(u.outputTokens), cacheRead: v(u.cacheReadTokens), cacheWrite: v(u.cacheCreationTokens),
    cost: v(u.costUsd), turns: v(u.turns), modelCalls: v(u.modelCalls), runs: v(u.runs), tokensFrom: str(u.tokensFrom),
  });
}

function renderSession(s) {
  S.session = s;
  const title = str(s.title).trim();
  $('title').textContent = title || 'Untitled session';
  $('title').classList.toggle('untitled', !title);
  document.title = (title || 'Session ' + sessionId) + ' · agentstream';
  statusBadge(s.status, s.reason, $('status'));
  $('status').hidden = false;
  $('status').title = [str(s.status), reasonLabel(s.reason)].filter(Boolean).join(' · ');
  $('harness').textContent = [str(s.harness), str(s.version)].filter(Boolean).join(' ') || '—';
  $('harness').title = s.protocol ? 'protocol ' + str(s.protocol) : '';
  $('model').textContent = str(s.model) || '—';
  $('cwd').textContent = str(s.cwd) || '—';
  $('cwd').title = Array.isArray(s.command) ? s.command.map(str).join(' ') : str(s.cwd);
  const start = parseTime(s.startedAt);
  $('started').textContent = fmtWhen(start);
  $('started').title = fmtFull(start);
  const err = $('session-error');
  err.hidden = !s.error;
  err.textContent = s.error ? str(s.error) : '';
  renderRecap(s);
  updateContext();
  applyLiveInfo(s);
  $('session-header').setAttribute('aria-busy', 'false');
  document.body.dataset.status = oneOf(s.status, STATUSES, 'unknown');
  for (const view of S.calls.values()) {
    if (!view.result && !view.el.classList.contains('denied') && !view.liveOut) view.state.textContent = pendingText();
  }
}

async function refreshSession() {
  try {
    renderSession(await api(base));
  } catch { /* keep what is shown */ }
}
const refreshSessionSoon = throttle(refreshSession, 2000);

// ---- the window: loading pages ----

function isAtBottom() {
  return timeline.scrollHeight - timeline.scrollTop - timeline.clientHeight < 48;
}

function scrollToBottom() {
  timeline.scrollTop = timeline.scrollHeight;
  S.stick = true;
  S.newBelow = 0;
  updateJump();
}

function updateEdges() {
  if (S.lo === null) {
    startEdge.textContent = '';
  } else if (S.lo <= 1) {
    startEdge.textContent = 'start of the session';
    startEdge.classList.remove('has-more');
  } else {
    startEdge.textContent = S.loadingBefore ? 'loading earlier events…' : 'scroll up for earlier events';
    startEdge.classList.add('has-more');
  }
  if (S.atEnd) {
    const running = S.session && S.session.status === 'running';
    endEdge.textContent = running ? (S.stream ? 'following live' : 'waiting for events') : '';
    endEdge.classList.toggle('following', !!(running && S.stream));
    endEdge.classList.remove('has-more');
  } else {
    endEdge.textContent = S.loadingAfter ? 'loading later events…' : 'scroll down for later events';
    endEdge.classList.add('has-more');
  }
  const n = timeline.querySelectorAll('.event[data-seq]').length;
  const last = Math.max(num(S.session && S.session.lastSeq) ?? 0, S.atEnd ? S.hi : 0);
  pageStatus.textContent = S.lo === null || S.hi < S.lo ? 'no events yet' : 'events ' + S.lo + '–' + S.hi + (last ? ' of ' + last : '') + ' · ' + n + ' shown';
}

function updateJump() {
  const show = !S.atEnd || (!S.stick && !isAtBottom());
  jumpBottom.hidden = !show;
  jumpBottom.textContent = S.newBelow > 0 ? '↓ ' + S.newBelow + ' new' : '↓ latest';
}

function fetchEvents(params) {
  return api(base + '/events', params).then((list) => (Array.isArray(list) ? list : []));
}

function storedOnly(list) {
  return list.filter((e) => e && num(e.seq) !== null).sort((a, b) => a.seq - b.seq);
}

// resetWindow clears the timeline and loads either the tail or the page
// around seq. It returns when the events are on the page.
async function resetWindow(aroundSeq) {
  const gen = ++S.gen;
  closeStream();
  S.queue = [];
  S.calls.clear();
  S.orphans.clear();
  L.requests.clear();
  L.byCall.clear();
  S.plan = { seq: 0, el: null, done: 0, total: 0 };
  S.turnHeads.clear();
  S.turnStart.clear();
  updatePlanChip();
  S.liveEls.clear();
  liveArea.replaceChildren();
  S.lo = null;
  S.hi = 0;
  S.atEnd = false;
  S.loadingBefore = false; // a page still in flight belongs to the old window
  S.loadingAfter = false;
  S.newBelow = 0;
  timeline.setAttribute('aria-busy', 'true');
  const around = num(aroundSeq);
  const list = storedOnly(await fetchEvents(around !== null ? { after: Math.max(0, around - 100), limit: PAGE } : { tail: PAGE }));
  if (gen !== S.gen) return false;
  // remove the previous window's events
  while (startEdge.nextSibling && startEdge.nextSibling !== endEdge) startEdge.nextSibling.remove();
  const ctx = renderBatch(list);
  endEdge.before(ctx.top);
  mergeOrphans(ctx.newCalls);
  if (list.length) {
    S.lo = list[0].seq;
    S.hi = list[list.length - 1].seq;
  } else {
    S.lo = around !== null ? Math.max(1, around - 100 + 1) : 1;
    S.hi = around !== null ? Math.max(0, around - 100) : 0;
  }
  const lastSeq = num(S.session && S.session.lastSeq);
  S.atEnd = around === null || list.length < PAGE || (lastSeq !== null && S.hi >= lastSeq);
  timeline.setAttribute('aria-busy', 'false');
  updateEdges();
  if (S.atEnd) maybeFollow();
  return true;
}

async function loadBefore() {
  if (S.loadingBefore || S.lo === null || S.lo <= 1) return;
  const gen = S.gen;
  S.loadingBefore = true;
  updateEdges();
  try {
    const list = storedOnly(await fetchEvents({ before: S.lo, limit: PAGE })).filter((e) => e.seq < S.lo);
    if (gen !== S.gen) return;
    if (!list.length) { S.lo = 1; return; }
    const anchor = pickAnchor();
    const ctx = renderBatch(list);
    const oldFirst = startEdge.nextSibling;
    const newLast = ctx.top.lastChild;
    startEdge.after(ctx.top);
    joinFolds(newLast, oldFirst);
    mergeOrphans(ctx.newCalls);
    S.lo = list[0].seq;
    restoreAnchor(anchor);
    trimEnd();
  } catch (err) {
    showError(err);
  } finally {
    if (gen === S.gen) {
      S.loadingBefore = false;
      updateEdges();
      setTimeout(maybeLoad, 0);
    }
  }
}

async function loadAfter() {
  if (S.loadingAfter || S.atEnd || S.lo === null) return;
  const gen = S.gen;
  S.loadingAfter = true;
  updateEdges();
  try {
    const list = storedOnly(await fetchEvents({ after: S.hi, limit: PAGE })).filter((e) => e.seq > S.hi);
    if (gen !== S.gen) return;
    if (list.length) appendStored(list);
    const lastSeq = num(S.session && S.session.lastSeq);
    if (list.length < PAGE || (lastSeq !== null && S.hi >= lastSeq)) {
      S.atEnd = true;
      maybeFollow();
    }
  } catch (err) {
    showError(err);
  } finally {
    if (gen === S.gen) {
      S.loadingAfter = false;
      updateEdges();
      updateJump();
      setTimeout(maybeLoad, 0);
    }
  }
}

// maybeLoad loads the next page when the user is near an edge, or when the
// loaded events do not fill the timeline yet.
function maybeLoad() {
  if (S.lo === null) return;
  if (timeline.scrollTop < NEAR && S.lo > 1) loadBefore();
  if (!S.atEnd && timeline.scrollHeight - timeline.scrollTop - timeline.clientHeight < NEAR) loadAfter();
}

// pickAnchor remembers the first top-level event visible at the top of the
// timeline, to keep it in place while a page is inserted above it.
function pickAnchor() {
  const top = timeline.getBoundingClientRect().top;
  for (let el = startEdge.nextElementSibling; el && el !== endEdge; el = el.nextElementSibling) {
    if (el.classList.contains('orphan')) continue;
    const r = el.getBoundingClientRect();
    if (r.height === 0) continue;
    if (r.bottom > top) return { el, offset: r.top - top, height: timeline.scrollHeight };
  }
  return { el: null, offset: 0, height: timeline.scrollHeight };
}

function restoreAnchor(a) {
  if (a.el && a.el.isConnected && a.el.parentElement === timeline) {
    const top = timeline.getBoundingClientRect().top;
    timeline.scrollTop += a.el.getBoundingClientRect().top - top - a.offset;
  } else {
    timeline.scrollTop += timeline.scrollHeight - a.height;
  }
}

function appendStored(list) {
  const follow = S.stick || isAtBottom();
  const ctx = renderBatch(list);
  const oldLast = endEdge.previousSibling;
  const newFirst = ctx.top.firstChild;
  endEdge.before(ctx.top);
  if (oldLast !== startEdge) joinFolds(oldLast, newFirst);
  mergeOrphans(ctx.newCalls);
  S.hi = list[list.length - 1].seq;
  if (S.lo === null) S.lo = list[0].seq;
  trimStart();
  if (follow && S.atEnd) scrollToBottom();
  else if (S.atEnd) S.newBelow += list.length;
  updateEdges();
  updateJump();
}

// ---- the window: keeping it bounded ----

function rowCount() {
  return timeline.querySelectorAll('.event[data-seq]').length;
}

// seqsOf is the lowest and highest seq of a top-level element and of the
// events inside it (a call's result, a fold's events).
function seqsOf(el) {
  let lo = Infinity;
  let hi = -Infinity;
  const see = (e) => {
    const n = Number(e.dataset.seq);
    if (e.dataset.seq && Number.isFinite(n)) { lo = Math.min(lo, n); hi = Math.max(hi, n); }
  };
  see(el);
  for (const e of el.querySelectorAll('[data-seq]')) see(e);
  return { lo, hi, rows: el.querySelectorAll('.event[data-seq]').length + (el.matches('.event[data-seq]') ? 1 : 0) };
}

// forget drops what the page keeps about elements no longer on it: their
// tool calls, orphaned results and turn headers.
function forget() {
  for (const [id, view] of S.calls) if (!view.el.isConnected) S.calls.delete(id);
  for (const [id, o] of S.orphans) {
    if (o.result && !o.result.el.isConnected) o.result = null;
    o.children = o.children.filter((c) => c.isConnected);
    if (!o.result && !o.children.length) S.orphans.delete(id);
  }
  for (const [turn, el] of S.turnHeads) if (!el.isConnected) S.turnHeads.delete(turn);
  if (S.highlighted && !S.highlighted.isConnected) S.highlighted = null;
}

// trimEnd drops top-level elements from the end of the window, which a
// page loaded at its start pushed away, until MAX_ROWS events are left;
// never one less than two screens below the view. The window then ends
// before the first event dropped, and no longer follows the live stream.
// Positions are all read before anything is removed: one layout, not one
// an element.
function trimEnd() {
  let n = rowCount();
  if (n <= MAX_ROWS) return;
  const limit = timeline.getBoundingClientRect().bottom + 2 * timeline.clientHeight;
  const drop = [];
  let cut = null;
  for (let el = endEdge.previousElementSibling; n > MAX_ROWS && el && el !== startEdge; el = el.previousElementSibling) {
    const box = el.getBoundingClientRect();
    if (box.height > 0 && box.top < limit) break;
    const r = seqsOf(el);
    drop.push(el);
    n -= r.rows;
    if (r.lo !== Infinity) cut = r.lo;
  }
  if (cut === null) return;
  for (const el of drop) el.remove();
  forget();
  // events after the cut kept inside their call (a result) are not drawn
  // again when the window grows back over them (renderOne)
  S.hi = cut - 1;
  if (S.atEnd) {
    S.atEnd = false;
    closeStream();
    S.queue = [];
    clearLive();
  }
  updateEdges();
  updateJump();
}

// trimStart is trimEnd at the start of the window, for a page loaded at its
// end: it keeps the view where it was, and cuts where no event dropped
// (a call's result) is later than the first event kept, when it can.
function trimStart() {
  let n = rowCount();
  if (n <= MAX_ROWS) return;
  const limit = timeline.getBoundingClientRect().top - 2 * timeline.clientHeight;
  const drop = [];
  let dropped = -Infinity;
  let next = null;
  for (let el = startEdge.nextElementSibling; el && el !== endEdge; el = el.nextElementSibling) {
    const box = el.getBoundingClientRect();
    const r = seqsOf(el);
    if ((box.height > 0 && box.bottom > limit) || (n <= MAX_ROWS && !(r.lo < dropped))) { next = r; break; }
    drop.push(el);
    n -= r.rows;
    dropped = Math.max(dropped, r.hi);
  }
  if (!drop.length) return;
  const anchor = pickAnchor();
  for (const el of drop) el.remove();
  forget();
  S.lo = next && next.lo !== Infinity ? next.lo : S.hi + 1;
  restoreAnchor(anchor);
  updateEdges();
}

// ---- following live ----

function maybeFollow() {
  if (!S.atEnd || S.stream) return;
  if (!S.session || S.session.status !== 'running') return;
  const gen = S.gen;
  S.stream = openStream(base + '/stream', () => ({ after: S.hi }), {
    onEvent(msg) {
      if (gen !== S.gen) return;
      if (msg.event === 'end') {
        closeStream();
        clearLive();
        flushQueue();
        refreshSession().then(updateEdges);
        return;
      }
      if (msg.event === 'resync') {
        // we fell behind: reconnect from what we really have (?after=hi)
        S.queue = S.queue.filter((e) => num(e.seq) === null);
        S.stream?.restart();
        return;
      }
      let ev;
      try { ev = JSON.parse(msg.data); } catch { return; }
      if (!ev || typeof ev !== 'object') return;
      if (!ev.type && msg.event) ev.type = msg.event;
      S.queue.push(ev);
      if (!S.flushTimer) S.flushTimer = setTimeout(flushQueue, 40);
    },
    onState(st, err) {
      liveIndicator.hidden = st !== 'open';
      if (st === 'closed' && err) showError(err);
      updateEdges();
    },
  });
  updateEdges();
}

function closeStream() {
  if (S.stream) { const s = S.stream; S.stream = null; s.close(); }
  liveIndicator.hidden = true;
  clearTimeout(S.flushTimer);
  S.flushTimer = null;
}

// flushQueue applies the events received since the last flush, in order:
// stored events are appended (a gap reconnects from hi), deltas update the
// streaming elements.
function flushQueue() {
  S.flushTimer = null;
  const q = S.queue;
  S.queue = [];
  let batch = [];
  let refresh = false;
  const follow = S.stick || isAtBottom();
  const flushBatch = () => {
    if (!batch.length) return;
    S.applyingLive = true;
    try { appendStored(batch); } finally { S.applyingLive = false; }
    batch = [];
  };
  for (let i = 0; i < q.length; i++) {
    const ev = q[i];
    const seq = num(ev.seq);
    if (seq === null) {
      flushBatch();
      applyDelta(ev);
      continue;
    }
    const expected = (batch.length ? batch[batch.length - 1].seq : S.hi) + 1;
    if (seq < expected) continue; // already have it
    if (seq > expected) {
      // a gap: drop the rest and let the stream resume from what we have
      flushBatch();
      S.stream?.restart();
      break;
    }
    removeLiveFor(ev);
    batch.push(ev);
    if (['usage', 'session.ended', 'session.title', 'session.started', 'session.updated', 'turn.ended', 'session.state'].includes(ev.type)) refresh = true;
  }
  flushBatch();
  if (follow) scrollToBottom();
  if (refresh) refreshSessionSoon();
}

function liveKey(ev) {
  const kind = ev.type === 'thinking' || ev.type === 'thinking.delta' ? 'thinking' : 'message';
  return (ev.parentCallId ? str(ev.parentCallId) : '') + '|' + kind;
}

function applyDelta(ev) {
  const p = ev.payload || {};
  if (ev.type === 'tool.output') {
    S.calls.get(str(p.callId))?.addLiveOutput(p);
    return;
  }
  if (ev.type !== 'message.delta' && ev.type !== 'thinking.delta') return;
  const key = liveKey(ev);
  let el = S.liveEls.get(key);
  if (!el) {
    const thinking = ev.type === 'thinking.delta';
    el = h('div', { class: 'streaming ' + (thinking ? 'thinking' : 'message'), dataset: { type: ev.type, role: oneOf(p.role, ROLES, thinking ? 'assistant' : 'other') } });
    el.append(h('div', { class: 'event-head' },
      h('span', { class: thinking ? 'line-label' : 'role', text: thinking ? 'thinking…' : (str(p.role) || 'assistant') }),
      h('span', { class: 'event-meta' }, badge(ev.parentCallId ? 'subagent · streaming' : 'streaming', 'badge-live'))));
    el._text = h('div', { class: 'streaming-text' });
    el.append(el._text);
    S.liveEls.set(key, el);
    liveArea.append(el);
  }
  el._text.append(str(p.text));
}

function removeLiveFor(ev) {
  if (ev.type !== 'message' && ev.type !== 'thinking') return;
  const key = liveKey(ev);
  const el = S.liveEls.get(key);
  if (el) { el.remove(); S.liveEls.delete(key); }
}

function clearLive() {
  S.liveEls.clear();
  liveArea.replaceChildren();
}

// ---- deep links, focus and keyboard ----

function reveal(el) {
  // open every collapsed container around el
  for (let p = el.parentElement; p && p !== timeline; p = p.parentElement) {
    if (p.tagName === 'DETAILS') p.open = true;
    if (p.classList.contains('tool-body') && p.parentElement?._tool) p.parentElement._tool.setExpanded(true);
  }
  if (el.dataset.type === 'raw' && !showRaw.checked) { showRaw.checked = true; applyRaw(); }
  if (el.dataset.type === 'usage' && !showUsage.checked) { showUsage.checked = true; applyUsage(); }
}

function highlight(el) {
  if (S.highlighted) S.highlighted.classList.remove('highlight');
  S.highlighted = el;
  el.classList.add('highlight');
}

async function goToSeq(seq, { fromHash } = {}) {
  let el = document.getElementById('e' + seq);
  if (!el) {
    // not in the window, or dropped with a call cut off its start: load the
    // events around it
    try {
      await resetWindow(seq);
    } catch (err) { showError(err); return; }
    el = document.getElementById('e' + seq);
    if (!el) { pageStatus.textContent = 'event #' + seq + ' not found'; return; }
  }
  reveal(el);
  highlight(el);
  S.stick = false;
  el.scrollIntoView({ block: 'center' });
  el.focus({ preventScroll: true });
  if (!fromHash) history.replaceState(history.state, '', '#' + seq);
  updateJump();
  setTimeout(maybeLoad, 0);
}

function hashSeq() {
  const m = /^#(\d+)$/.exec(location.hash);
  return m ? parseInt(m[1], 10) : null;
}

function topEvents() {
  const out = [];
  for (let el = startEdge.nextElementSibling; el && el !== endEdge; el = el.nextElementSibling) {
    if (el.classList.contains('event') && el.offsetParent !== null) out.push(el);
  }
  return out;
}

function currentTop(list) {
  const active = document.activeElement;
  if (active && timeline.contains(active)) {
    let e = active.closest('.event');
    while (e && e.parentElement !== timeline) e = e.parentElement.closest('.event');
    if (e) return e;
  }
  const top = timeline.getBoundingClientRect().top;
  for (const el of list) if (el.getBoundingClientRect().bottom > top + 8) return el;
  return list[list.length - 1] || null;
}

// moveTurn focuses the first event of the next turn (dir > 0), or of the
// current turn and, when already there, of the previous one (dir < 0). Turns
// are read from the loaded top-level events; a page is loaded at an edge.
async function moveTurn(dir) {
  let list = topEvents();
  if (!list.length) return;
  const cur = currentTop(list);
  const turnOf = (el) => Number(el.dataset.turn) || 0;
  const curTurn = cur ? turnOf(cur) : 0;
  const firstOfTurn = (l, t) => l.find((el) => turnOf(el) === t) || null;
  let target = null;
  if (dir > 0) {
    const after = (l) => l.slice(l.indexOf(cur) + 1).find((el) => turnOf(el) > curTurn) || null;
    target = after(list);
    if (!target && !S.atEnd) {
      await loadAfter();
      target = after(topEvents());
    }
  } else {
    const first = firstOfTurn(list, curTurn);
    if (first && first !== cur && list.indexOf(first) < list.indexOf(cur)) {
      target = first;
    } else {
      const prevTurn = (l) => {
        const earlier = l.filter((el) => turnOf(el) < curTurn);
        return earlier.length ? turnOf(earlier[earlier.length - 1]) : null;
      };
      let t = prevTurn(list);
      // the previous turn may begin on a page not loaded yet
      if ((t === null || firstOfTurn(list, t) === list[0]) && S.lo > 1) {
        await loadBefore();
        list = topEvents();
        t = prevTurn(list);
      }
      if (t !== null) target = firstOfTurn(list, t);
    }
  }
  if (!target) {
    pageStatus.textContent = dir > 0 ? 'no later turn' : 'no earlier turn';
    return;
  }
  focusEvent(target);
}

function focusEvent(el) {
  highlight(el);
  S.stick = false;
  el.focus({ preventScroll: true });
  el.scrollIntoView({ block: 'start' });
  if (el.dataset.seq) history.replaceState(history.state, '', '#' + el.dataset.seq);
  updateJump();
  setTimeout(maybeLoad, 0);
}

document.addEventListener('keydown', (e) => {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t instanceof Element && t.closest('input, textarea, select, [contenteditable="true"]')) return;
  switch (e.key) {
    case 'j': case 'n': e.preventDefault(); moveTurn(1); break;
    case 'k': case 'p': e.preventDefault(); moveTurn(-1); break;
    case 'G': e.preventDefault(); jumpToLatest(); break;
    case 'g': {
      e.preventDefault();
      const first = topEvents()[0];
      if (first) focusEvent(first);
      break;
    }
    default:
  }
});

async function jumpToLatest() {
  if (!S.atEnd) {
    try { await resetWindow(null); } catch (err) { showError(err); return; }
  }
  history.replaceState(history.state, '', location.pathname + location.search);
  scrollToBottom();
  setTimeout(maybeLoad, 0);
}

// ---- clicks (one listener for the whole timeline) ----

timeline.addEventListener('click', (e) => {
  const t = e.target;
  if (!(t instanceof Element)) return;
  const toggle = t.closest('.tool-toggle');
  if (toggle) {
    const view = toggle.closest('.tool')?._tool;
    if (view) view.setExpanded(!view.expanded);
    return;
  }
  const src = t.closest('.source-btn');
  if (src) { showSource(src); return; }
  const link = t.closest('a.seq-link');
  if (link) {
    e.preventDefault();
    const seq = parseInt(link.getAttribute('href').slice(1), 10);
    if (seq) goToSeq(seq);
  }
});

async function showSource(btn) {
  const ev = btn.closest('.event');
  if (!ev) return;
  let box = ev.querySelector(':scope > .source-box');
  if (box) { box.remove(); btn.classList.remove('active'); return; }
  box = h('div', { class: 'source-box' }, h('div', { class: 'source-label', text: btn.dataset.stream + ' line ' + btn.dataset.line }));
  const pre = h('pre', { class: 'source-line', text: 'loading…' });
  box.append(pre);
  ev.append(box);
  btn.classList.add('active');
  try {
    const text = await apiText(base + '/lines/' + encodeURIComponent(btn.dataset.line), { stream: btn.dataset.stream });
    pre.textContent = text;
  } catch (err) {
    pre.textContent = 'cannot load the line: ' + err.message;
    pre.classList.add('error');
  }
}

// ---- toolbar ----

function applyRaw() {
  timeline.classList.toggle('show-raw', showRaw.checked);
  // the raw events folded with the plumbing show with their fold
  for (const d of timeline.querySelectorAll('details.fold[data-raw]')) d.open = showRaw.checked;
  try { localStorage.setItem('agentstream.showRaw', showRaw.checked ? '1' : ''); } catch { /* ignore */ }
}
try { showRaw.checked = localStorage.getItem('agentstream.showRaw') === '1'; } catch { /* ignore */ }
applyRaw();
showRaw.addEventListener('change', applyRaw);

const showUsage = $('show-usage');
function applyUsage() {
  timeline.classList.toggle('show-usage', showUsage.checked);
  try { localStorage.setItem('agentstream.showUsage', showUsage.checked ? '1' : ''); } catch { /* ignore */ }
}
try { showUsage.checked = localStorage.getItem('agentstream.showUsage') === '1'; } catch { /* ignore */ }
applyUsage();
showUsage.addEventListener('change', applyUsage);

expandAll.addEventListener('change', () => {
  const anchor = pickAnchor();
  for (const view of S.calls.values()) view.setExpanded(expandAll.checked);
  restoreAnchor(anchor);
});

$('plan-chip').addEventListener('click', () => {
  if (S.plan.el && S.plan.el.isConnected) {
    reveal(S.plan.el);
    focusEvent(S.plan.el);
  } else if (S.plan.seq) {
    goToSeq(S.plan.seq); // dropped from the window: load it again
  }
});

jumpBottom.addEventListener('click', () => jumpToLatest());

let scrollPending = false;
timeline.addEventListener('scroll', () => {
  if (scrollPending) return;
  scrollPending = true;
  requestAnimationFrame(() => {
    scrollPending = false;
    S.stick = S.atEnd && isAtBottom();
    if (S.stick) S.newBelow = 0;
    updateJump();
    maybeLoad();
  });
}, { passive: true });

window.addEventListener('hashchange', () => {
  const seq = hashSeq();
  if (seq !== null) goToSeq(seq, { fromHash: true });
});

// A running session's duration ticks.
setInterval(() => {
  if (S.session && S.session.status === 'running') $('recap-duration').textContent = fmtDuration(sessionDuration(S.session));
}, 1000);

// ---- live sessions: state, composer, answers ----
//
// A session this server drives (GET /api/sessions/{id} has its "state") gets
// the live bar (its state, Interrupt, Close session) and the composer; each
// of its pending permission requests and questions gets buttons that post
// the answer. What resolved a request is shown from its request.resolved
// event, whoever answered it (this page, the policy, another client).

const LIVE_STATES = ['idle', 'running', 'interrupting', 'closing', 'closed', 'failed'];
const ENDED_STATES = ['closed', 'failed'];
const liveBar = $('live-bar');
const liveState = $('live-state');
const liveReason = $('live-reason');
const liveError = $('live-error');
const interruptBtn = $('interrupt');
const closeBtn = $('close-session');
const composer = $('composer');
const composerText = $('composer-text');
const composerMode = $('composer-mode');
const composerSend = $('composer-send');
const composerNote = $('composer-note');

const L = {
  live: false,        // the server drives this session
  state: '',          // the latest state known
  reason: '',
  stateSeq: -1,       // the seq of the session.state it came from (Infinity: the API's)
  caps: {},
  pending: new Set(), // ids (and aliases) of the requests waiting, as the API said
  requests: new Map(), // requestId -> RequestView
  byCall: new Map(),  // callId -> [RequestView]
  resolved: new Map(), // requestId -> request.resolved payload
  mine: new Set(),    // requests answered from this page
  sending: false,
};

// noteState follows the session's state from its session.state events.
function noteState(ev) {
  const p = ev.payload || {};
  const seq = num(ev.seq) ?? Infinity;
  if (typeof p.state !== 'string' || seq < L.stateSeq) return;
  L.stateSeq = seq;
  setLiveState(p.state, str(p.reason));
}

function setLiveState(state, reason) {
  L.state = state;
  L.reason = reason || '';
  const st = oneOf(state, LIVE_STATES, 'unknown');
  liveBar.hidden = false;
  liveState.dataset.state = st;
  liveState.className = 'live-state live-state-' + st;
  liveState.textContent = state || 'unknown';
  // "closed · closed" says nothing more: a reason that is the state is left out.
  liveReason.textContent = L.reason === state ? '' : L.reason;
  liveReason.title = liveReason.textContent;
  document.body.dataset.liveState = st;
  updateLiveControls();
}

// applyLiveInfo takes what GET /api/sessions/{id} says of a live session.
function applyLiveInfo(s) {
  if (typeof s.state !== 'string' || !s.live) {
    L.live = false;
    updateLiveControls();
    return;
  }
  L.live = true;
  L.caps = (s.live && typeof s.live.caps === 'object' && s.live.caps) || {};
  L.pending = new Set();
  for (const r of Array.isArray(s.pending) ? s.pending : []) {
    if (!r || typeof r.requestId !== 'string') continue;
    L.pending.add(r.requestId);
    for (const a of Array.isArray(r.aliases) ? r.aliases : []) if (typeof a === 'string') L.pending.add(a);
  }
  // The API's state is as new as the events read so far, or newer.
  const lastSeq = num(s.live.lastSeq) ?? 0;
  if (s.state && lastSeq >= L.stateSeq) {
    L.stateSeq = lastSeq;
    setLiveState(s.state, str(s.stateReason));
  }
  for (const v of L.requests.values()) v.update();
  updateLiveControls();
}

function updateLiveControls() {
  const ended = ENDED_STATES.includes(L.state);
  composer.hidden = !L.live;
  document.body.classList.toggle('has-composer', L.live);
  if (!L.live && L.state && !ended) {
    liveReason.textContent = 'this server does not drive the session';
  }
  interruptBtn.hidden = !L.live || !(L.state === 'running' || L.state === 'interrupting') || L.caps.interrupt === 'none';
  interruptBtn.disabled = L.state === 'interrupting';
  interruptBtn.textContent = L.state === 'interrupting' ? 'Interrupting…' : 'Interrupt';
  closeBtn.hidden = !L.live || ended;
  closeBtn.disabled = L.state === 'closing';
  closeBtn.textContent = L.state === 'closing' ? 'Closing…' : 'Close session';
  let why = '';
  if (L.state === 'closed') why = 'The session is closed: it takes no more messages.';
  else if (L.state === 'failed') why = 'The session failed' + (L.reason ? ' (' + L.reason + ')' : '') + ': it takes no more messages.';
  else if (L.state === 'closing') why = 'The session is closing: it takes no more messages.';
  else if (L.caps.messages === 'none' && L.state !== '') why = 'This harness takes one message only, given when the session started.';
  composerText.disabled = !!why;
  composerMode.disabled = !!why;
  composerSend.disabled = !!why || L.sending;
  composer.dataset.disabledReason = why;
  if (why) setComposerNote(why, 'disabled');
  else if (composerNote.dataset.kind === 'disabled') setComposerNote('', '');
  const steer = composerMode.querySelector('option[value="steer"]');
  if (steer) {
    steer.textContent = L.caps.steer === 'emulated' ? 'steer (queued)' : 'steer';
    steer.title = L.caps.steer === 'emulated' ? 'This harness cannot take a message into a running turn: it is queued' : 'Into the running turn';
    steer.disabled = L.caps.steer === 'none';
  }
  for (const v of L.requests.values()) v.update();
}

function setComposerNote(text, kind) {
  composerNote.textContent = text;
  composerNote.dataset.kind = kind;
  composerNote.className = 'composer-note' + (kind ? ' note-' + kind : '');
}

function showLiveError(what, err) {
  liveError.hidden = !err;
  liveError.textContent = err ? what + ': ' + (err.message || String(err)) : '';
}

async function sendMessage() {
  const text = composerText.value;
  if (!text.trim() || composerSend.disabled) return;
  const mode = composerMode.value;
  L.sending = true;
  updateLiveControls();
  setComposerNote('Sending…', 'busy');
  try {
    const res = await apiSend('POST', base + '/messages', { text, mode });
    composerText.value = '';
    setComposerNote('Sent' + (res.messageId ? ' as ' + str(res.messageId) : '') + ' (' + mode + ').', 'ok');
    composer.dataset.lastMessage = str(res.messageId);
  } catch (err) {
    setComposerNote('Not sent: ' + err.message, 'error');
  } finally {
    L.sending = false;
    updateLiveControls();
  }
}

composer.addEventListener('submit', (e) => { e.preventDefault(); sendMessage(); });
sendOnEnter(composerText, sendMessage);

interruptBtn.addEventListener('click', async () => {
  interruptBtn.disabled = true;
  showLiveError(null);
  try {
    await apiSend('POST', base + '/interrupt');
  } catch (err) {
    showLiveError('Cannot interrupt', err);
  } finally {
    updateLiveControls();
  }
});

closeBtn.addEventListener('click', async () => {
  closeBtn.disabled = true;
  showLiveError(null);
  try {
    await apiSend('DELETE', base);
  } catch (err) {
    showLiveError('Cannot close the session', err);
  } finally {
    updateLiveControls();
  }
});

// trackRequest gives a rendered permission.request or question its answer
// area, kept current by RequestView.update.
function trackRequest(ev, el, kind) {
  const p = ev.payload || {};
  const id = str(p.requestId);
  if (!id) return;
  const view = new RequestView(ev, el, kind);
  const old = L.requests.get(id);
  if (old && old.el.isConnected && !old.resolution()) old.superseded = true;
  L.requests.set(id, view);
  if (view.callId) {
    const list = L.byCall.get(view.callId) || [];
    list.push(view);
    L.byCall.set(view.callId, list);
  }
  view.update();
  // A request the API did not list yet: ask it again.
  if (!view.resolution() && !L.pending.has(id) && !ENDED_STATES.includes(L.state)) refreshSessionSoon();
}

// noteResolved records a request.resolved and shows it on its request (and
// on the question or permission request of the same call).
function noteResolved(p) {
  const id = str(p.requestId);
  if (!id) return;
  L.resolved.set(id, p);
  L.pending.delete(id);
  const view = L.requests.get(id);
  if (view) {
    view.update();
    for (const other of L.byCall.get(view.callId) || []) other.update();
  }
}

class RequestView {
  constructor(ev, el, kind) {
    const p = ev.payload || {};
    this.ev = ev;
    this.el = el;
    this.kind = kind;
    this.id = str(p.requestId);
    this.callId = str(p.callId);
    this.live = S.applyingLive; // it arrived while this page followed the session
    this.shown = '';
    this.busy = false;
    this.superseded = false;
    this.sent = false;  // answered from this page; its request.resolved is awaited
    this.refused = ''; // why the server refused this page's answer (409, 404)
    this.box = h('div', { class: 'answer', dataset: { requestId: this.id } });
    el.append(this.box);
    el.dataset.requestId = this.id;
  }

  // resolution is the request.resolved of this request, or of the other
  // request of its call (a question is also a permission request).
  // The session's resolution, which says who answered, wins over the one
  // the harness's tool result gives (a question's, with no "by").
  resolution() {
    const found = [this, ...(L.byCall.get(this.callId) || [])].map((v) => L.resolved.get(v.id)).filter(Boolean);
    return found.find((r) => typeof r.by === 'string' && r.by) || found[0] || null;
  }

  // asks is whether the request still waits for an answer from here.
  asks() {
    if (!L.live || ENDED_STATES.includes(L.state) || this.superseded) return false;
    return L.pending.has(this.id) || this.live;
  }

  update() {
    const res = this.resolution();
    const state = res ? 'resolved' : this.refused ? 'refused' : this.sent ? 'sent' : this.asks() ? 'pending' : 'none';
    this.el.dataset.answer = state;
    if (res) {
      this.el.dataset.outcome = str(res.outcome);
      this.el.dataset.by = str(res.by);
    }
    const key = state + '|' + (res ? str(res.outcome) + str(res.by) + str(res.answer) : '');
    if (key === this.shown || this.busy) return;
    this.shown = key;
    if (res) this.showResolved(res);
    else if (state === 'pending') this.showButtons();
    else if (state === 'sent') this.box.replaceChildren(h('div', { class: 'answer-done answer-wait', text: 'answered: waiting for the session…' }));
    else if (state === 'refused') this.box.replaceChildren(h('p', { class: 'answer-error', role: 'alert', text: this.refused }));
    else this.box.replaceChildren();
  }

  showResolved(res) {
    const outcome = str(res.outcome) || 'resolved';
    let who = Object.hasOwn(BY, res.by) ? BY[res.by] : res.auto === true ? BY.policy : '';
    if (res.by === 'person') who = L.mine.has(this.id) || [...(L.byCall.get(this.callId) || [])].some((v) => L.mine.has(v.id)) ? 'by you' : 'by a person, elsewhere';
    const answer = res.answer === null || res.answer === undefined ? '' : str(res.answer);
    const cls = outcome === 'denied' || outcome === 'cancelled' ? 'warn' : 'ok';
    this.box.replaceChildren(h('div', { class: 'answer-done answer-' + cls },
      h('span', { class: 'answer-outcome', text: outcome }),
      who ? h('span', { class: 'answer-by', text: ' ' + who }) : null,
      answer ? h('span', { class: 'answer-text', text: ': ' + answer }) : null));
    if (this.refused) this.box.append(h('p', { class: 'answer-error', role: 'alert', text: this.refused }));
  }

  showError(text) {
    let err = this.box.querySelector('.answer-error');
    if (!err) {
      err = h('p', { class: 'answer-error', role: 'alert' });
      this.box.append(err);
    }
    err.textContent = text;
  }

  setBusy(on) {
    this.busy = on;
    for (const b of this.box.querySelectorAll('button, input')) b.disabled = on;
  }

  async post(body) {
    this.setBusy(true);
    this.box.querySelector('.answer-error')?.remove();
    try {
      await apiSend('POST', base + '/requests/' + encodeURIComponent(this.id), body);
      L.mine.add(this.id);
      this.sent = true;
    } catch (err) {
      if (err.status === 409) this.refused = 'Already answered: ' + err.message;
      else if (err.status === 404) this.refused = 'The session no longer waits for this request: ' + err.message;
      else {
        // The answer may be sent again.
        this.setBusy(false);
        this.showError('The answer was not taken: ' + err.message);
        return;
      }
    }
    this.busy = false;
    this.update();
  }

  showButtons() {
    if (this.kind === 'question') { this.showQuestion(); return; }
    const p = this.ev.payload || {};
    // AskUserQuestion's permission request is answered through its question.
    if (str(p.name) === 'AskUserQuestion' || (L.byCall.get(this.callId) || []).some((v) => v.kind === 'question')) {
      this.box.replaceChildren(h('p', { class: 'answer-note', text: 'waiting for an answer to the question' }));
      return;
    }
    const msg = h('input', { type: 'text', class: 'answer-message', placeholder: 'message to the agent with a denial (optional)', 'aria-label': 'Message with a denial' });
    const btn = (label, decision, cls) => {
      const b = h('button', { type: 'button', class: cls, dataset: { decision }, text: label });
      b.addEventListener('click', () => {
        const body = { decision };
        if (decision === 'deny' && msg.value.trim()) body.message = msg.value.trim();
        this.post(body);
      });
      return b;
    };
    const tool = str(p.name) || 'the tool';
    this.box.replaceChildren(h('div', { class: 'answer-buttons', role: 'group', 'aria-label': 'Answer the request for ' + tool },
      btn('Allow', 'allow', 'allow-btn'), btn('Allow always', 'allow-always', 'allow-btn'), btn('Deny', 'deny', 'deny-btn'), msg));
    msg.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') { e.preventDefault(); this.post({ decision: 'deny', message: msg.value.trim() || undefined }); }
    });
  }

  showQuestion() {
    const p = this.ev.payload || {};
    const qs = (Array.isArray(p.questions) ? p.questions : []).filter((q) => q && typeof q.question === 'string');
    const picks = qs.map(() => new Set());
    const texts = [];
    // Object.fromEntries makes own keys of any question text ("__proto__" too).
    const answers = () => Object.fromEntries(qs.map((q, i) => {
      const chosen = [...picks[i]];
      const free = texts[i].value.trim();
      if (free) chosen.push(free);
      return [q.question, chosen.join(', ')];
    }).filter(([, a]) => a));
    const form = h('div', { class: 'answer-buttons answer-question', role: 'group', 'aria-label': 'Answer the question' });
    qs.forEach((q, i) => {
      const row = h('div', { class: 'answer-row' });
      if (qs.length > 1) row.append(h('span', { class: 'answer-q', text: str(q.header) || str(q.question) }));
      const single = qs.length === 1 && q.multiSelect !== true;
      for (const o of Array.isArray(q.options) ? q.options : []) {
        if (!o || typeof o.label !== 'string') continue;
        const b = h('button', { type: 'button', class: 'option-btn', 'aria-pressed': 'false', title: str(o.description), text: o.label });
        b.addEventListener('click', () => {
          if (single) { this.post({ decision: 'allow', answers: Object.fromEntries([[q.question, o.label]]) }); return; }
          if (!q.multiSelect) {
            picks[i].clear();
            for (const x of row.querySelectorAll('.option-btn')) x.setAttribute('aria-pressed', 'false');
          }
          const on = !picks[i].has(o.label);
          if (on) picks[i].add(o.label); else picks[i].delete(o.label);
          b.setAttribute('aria-pressed', String(on));
        });
        row.append(b);
      }
      texts[i] = h('input', { type: 'text', class: 'answer-free', placeholder: 'or your own answer', 'aria-label': 'Your own answer to: ' + str(q.question) });
      texts[i].addEventListener('keydown', (e) => {
        if (e.key === 'Enter' && texts[i].value.trim()) { e.preventDefault(); this.post({ decision: 'allow', answers: answers() }); }
      });
      row.append(texts[i]);
      form.append(row);
    });
    const send = h('button', { type: 'button', class: 'primary', text: 'Send answer' + (qs.length > 1 ? 's' : '') });
    send.addEventListener('click', () => this.post({ decision: 'allow', answers: answers() }));
    const decline = h('button', { type: 'button', class: 'deny-btn', dataset: { decision: 'deny' }, text: 'Decline' });
    decline.addEventListener('click', () => this.post({ decision: 'deny' }));
    form.append(h('div', { class: 'answer-row' }, send, decline));
    this.box.replaceChildren(form);
  }
}

// ---- start ----

// showNotFound replaces the page with what a visitor needs when the
// address names no stored session: what was asked for, and the way back.
function showNotFound() {
  closeStream();
  document.title = 'Session not found · agentstream';
  document.body.classList.add('not-found-page');
  for (const id of ['session-header', 'timeline', 'jump-bottom', 'composer', 'error']) { const e = $(id); if (e) e.hidden = true; }
  document.querySelector('.toolbar').hidden = true;
  const main = h('main', { class: 'not-found', id: 'not-found' },
    h('h1', { text: 'No such session' }),
    h('p', null, 'This server stores no session ', h('code', { text: sessionId }), '.'),
    h('p', { class: 'not-found-hint', text: 'It may have been deleted, or the address is mistyped: a session id starts with s_.' }),
    h('p', null, h('a', { class: 'back-link', href: '/', text: '← All sessions' })));
  document.body.append(main);
  main.querySelector('a').focus();
}

async function start() {
  timeline.replaceChildren(startEdge, endEdge, liveArea);
  if (!sessionId) { showError(new Error('no session id in the address')); return; }
  const seq = hashSeq();
  try {
    // the session and the first page are fetched together
    const sessionP = api(base).then((s) => { renderSession(s); return s; });
    await Promise.all([sessionP, resetWindow(seq)]);
    maybeFollow();
    updateEdges();
    loadContextPoints().catch(() => {
      // the gauge keeps the latest figure; the footers sum what is loaded
      S.usageLoaded = true;
      S.turnUsage = summarizeTurns(S.usage);
      fillFooters();
    });
  } catch (err) {
    if (err.status === 404) { showNotFound(); return; }
    $('title').textContent = 'Cannot load the session';
    $('status').hidden = true;
    $('session-header').setAttribute('aria-busy', 'false');
    timeline.setAttribute('aria-busy', 'false');
    showError(err, () => { showError(null); start(); });
    return;
  }
  if (seq !== null) {
    await goToSeq(seq, { fromHash: true });
  } else {
    scrollToBottom();
  }
  setTimeout(maybeLoad, 0);
}

start();
