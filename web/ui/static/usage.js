// The usage page (/usage): what the stored sessions consumed, per day and
// per model, drawn as SVG from GET /api/usage. Every figure is the API's:
// null is drawn as nothing and written "—", a lower bound gets "≥".

import { api, h, svg, str, num, fmtTokens, fmtInt, fmtCost, showError, sessionPath } from './common.js';

const $ = (id) => document.getElementById(id);
const periodSel = $('usage-period');
const bySel = $('usage-by');

const SEGMENTS = [
  { key: 'inputTokens', cls: 'seg-input', label: 'input' },
  { key: 'outputTokens', cls: 'seg-output', label: 'output' },
  { key: 'cacheReadTokens', cls: 'seg-cache-read', label: 'cache read' },
  { key: 'cacheCreationTokens', cls: 'seg-cache-write', label: 'cache write' },
];
const GROUPINGS = ['day', 'week', 'month', 'model', 'harness', 'project', 'session'];
const TITLES = { day: 'Day', week: 'Week of', month: 'Month', model: 'Model', harness: 'Harness', project: 'Project', session: 'Session' };

let zone = 'UTC';
try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; } catch { /* UTC */ }

// ---- parameters, kept in the address ----

function readParams() {
  const p = new URLSearchParams(location.search);
  const period = p.get('period');
  if (period && [...periodSel.options].some((o) => o.value === period)) periodSel.value = period;
  const by = p.get('by');
  if (GROUPINGS.includes(by)) bySel.value = by;
}

function writeParams() {
  const p = new URLSearchParams({ period: periodSel.value, by: bySel.value });
  history.replaceState(history.state, '', location.pathname + '?' + p.toString());
}

// dayKey is a date's day in the local time zone, as the API names it.
function dayKey(d) {
  return d.getFullYear() + '-' + String(d.getMonth() + 1).padStart(2, '0') + '-' + String(d.getDate()).padStart(2, '0');
}

function sinceDay() {
  if (periodSel.value === 'all') return null;
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  d.setDate(d.getDate() - (parseInt(periodSel.value, 10) - 1));
  return d;
}

// ---- figures ----

function estimated(row, key) {
  return Array.isArray(row.estimated) && row.estimated.includes(key);
}

function tokenText(row, key) {
  const v = num(row[key]);
  if (v === null) return '—';
  return (estimated(row, key) ? '≥' : '') + fmtInt(v);
}

function costText(row) {
  const c = fmtCost(row.costUsd);
  if (c === null) return '—';
  return (estimated(row, 'costUsd') ? '≥' : '') + c;
}

function totalTokens(row) {
  let n = 0;
  let any = false;
  for (const s of SEGMENTS) {
    const v = num(row[s.key]);
    if (v !== null) { n += v; any = true; }
  }
  return any ? n : null;
}

function rowData(row) {
  const v = (x) => (num(x) === null ? '' : String(x));
  return {
    key: str(row.key), sessions: v(row.sessions), input: v(row.inputTokens), output: v(row.outputTokens),
    cacheRead: v(row.cacheReadTokens), cacheWrite: v(row.cacheCreationTokens), cost: v(row.costUsd),
    unpriced: v(row.unpriced), total: v(totalTokens(row)),
  };
}

function rowTitle(label, row) {
  const lines = [label];
  for (const s of SEGMENTS) lines.push(s.label + ': ' + tokenText(row, s.key));
  lines.push('cost: ' + (costText(row) === '—' ? 'not reported' : costText(row)));
  if (num(row.unpriced)) lines.push(row.unpriced + (row.unpriced === 1 ? ' session' : ' sessions') + ' without a reported cost');
  lines.push(fmtInt(row.sessions) + (row.sessions === 1 ? ' session' : ' sessions'));
  return lines.join('\n');
}

// ---- charts ----

const W = 480;

// niceMax rounds a maximum up to 1, 2 or 5 times a power of ten.
function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function yAxis(g, max, top, bottom, left, fmt) {
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    const y = bottom - ((bottom - top) * i) / 4;
    g.append(svg('line', { x1: left, x2: W - 8, y1: y, y2: y, class: 'grid' }));
    g.append(svg('text', { x: left - 6, y: y + 4, class: 'axis-label', 'text-anchor': 'end' }, fmt(v)));
  }
}

// dayChart draws one bar per day: the token segments stacked, or the cost.
function dayChart(el, days, kind) {
  const body = el.querySelector('.chart-body');
  const H = 200, top = 12, bottom = H - 26, left = 48;
  const values = days.map((d) => (kind === 'tokens' ? totalTokens(d.row) ?? 0 : num(d.row.costUsd) ?? 0));
  const max = niceMax(Math.max(0, ...values));
  const chart = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, class: 'chart-svg', role: 'img',
    'aria-label': (kind === 'tokens' ? 'Tokens' : 'Cost') + ' per day, ' + days.length + ' days' });
  const g = svg('g');
  yAxis(g, max, top, bottom, left, kind === 'tokens' ? fmtTokens : (v) => fmtCost(v) ?? '');
  chart.append(g);
  const slot = (W - 8 - left) / Math.max(1, days.length);
  const bw = Math.max(2, Math.min(28, slot * 0.7));
  const every = Math.ceil(days.length / 8);
  days.forEach((d, i) => {
    const x = left + slot * i + (slot - bw) / 2;
    const data = Object.assign({ day: d.key }, rowData(d.row));
    if (!d.row.sessions) data.empty = 'true';
    const bar = svg('g', { class: 'bar', dataset: data });
    bar.append(svg('title', null, rowTitle(d.key, d.row)));
    if (kind === 'tokens') {
      let y = bottom;
      for (const s of SEGMENTS) {
        const v = num(d.row[s.key]);
        if (v === null || v <= 0) continue;
        const hgt = ((bottom - top) * v) / max;
        y -= hgt;
        bar.append(svg('rect', { x, y, width: bw, height: Math.max(hgt, 0.5), class: 'seg ' + s.cls, dataset: { segment: s.key, value: String(v) } }));
      }
    } else {
      const c = num(d.row.costUsd);
      if (c !== null && c > 0) {
        const hgt = ((bottom - top) * c) / max;
        bar.append(svg('rect', { x, y: bottom - hgt, width: bw, height: Math.max(hgt, 0.5), class: 'seg seg-cost' + (estimated(d.row, 'costUsd') ? ' lower-bound' : ''), dataset: { segment: 'costUsd', value: String(c) } }));
      }
      if (num(d.row.unpriced)) {
        // Tokens spent without a reported cost: marked, never drawn as $0.
        bar.append(svg('circle', { cx: x + bw / 2, cy: bottom - 5, r: 3, class: 'unpriced-mark' }));
      }
    }
    if (i % every === 0) {
      bar.append(svg('text', { x: x + bw / 2, y: H - 10, class: 'axis-label', 'text-anchor': 'middle' }, d.key.slice(5)));
    }
    chart.append(bar);
  });
  chart.append(svg('line', { x1: left, x2: W - 8, y1: bottom, y2: bottom, class: 'axis' }));
  body.replaceChildren(chart);
  el.dataset.bars = String(days.length);
}

// modelChart draws one horizontal bar per model.
function modelChart(el, rows, kind) {
  const body = el.querySelector('.chart-body');
  const shown = rows.slice(0, 12);
  const rowH = 22, top = 6, left = 130, right = 78;
  const H = Math.max(40, top * 2 + rowH * shown.length);
  const values = shown.map((r) => (kind === 'tokens' ? totalTokens(r) ?? 0 : num(r.costUsd) ?? 0));
  const max = niceMax(Math.max(0, ...values));
  const chart = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, class: 'chart-svg', role: 'img',
    'aria-label': (kind === 'tokens' ? 'Tokens' : 'Cost') + ' per model, ' + shown.length + ' models' });
  const span = W - left - right;
  shown.forEach((r, i) => {
    const y = top + rowH * i;
    const label = str(r.key);
    const bar = svg('g', { class: 'bar', dataset: Object.assign({ model: label }, rowData(r)) });
    bar.append(svg('title', null, rowTitle(label + (r.label && r.label !== label ? ' (' + str(r.label) + ')' : ''), r)));
    bar.append(svg('text', { x: left - 8, y: y + 15, class: 'bar-label', 'text-anchor': 'end' }, label.length > 20 ? label.slice(0, 19) + '…' : label));
    if (kind === 'tokens') {
      let x = left;
      for (const s of SEGMENTS) {
        const v = num(r[s.key]);
        if (v === null || v <= 0) continue;
        const w = (span * v) / max;
        bar.append(svg('rect', { x, y: y + 4, width: Math.max(w, 0.5), height: rowH - 8, class: 'seg ' + s.cls, dataset: { segment: s.key, value: String(v) } }));
        x += w;
      }
      bar.append(svg('text', { x: W - right + 6, y: y + 15, class: 'bar-value' }, totalTokens(r) === null ? '—' : fmtTokens(totalTokens(r))));
    } else {
      const c = num(r.costUsd);
      if (c !== null && c > 0) {
        bar.append(svg('rect', { x: left, y: y + 4, width: Math.max((span * c) / max, 0.5), height: rowH - 8, class: 'seg seg-cost', dataset: { segment: 'costUsd', value: String(c) } }));
      }
      bar.append(svg('text', { x: W - right + 6, y: y + 15, class: 'bar-value' }, c === null ? 'not reported' : costText(r)));
    }
    chart.append(bar);
  });
  body.replaceChildren(chart);
  el.dataset.bars = String(shown.length);
}

function legend() {
  const box = $('usage-legend');
  box.replaceChildren(...SEGMENTS.map((s) => h('span', { class: 'legend-item' },
    svg('svg', { viewBox: '0 0 10 10', width: 10, height: 10 }, svg('rect', { width: 10, height: 10, class: 'seg ' + s.cls })), ' ' + s.label)),
  h('span', { class: 'legend-item' }, svg('svg', { viewBox: '0 0 10 10', width: 10, height: 10 }, svg('circle', { cx: 5, cy: 5, r: 3, class: 'unpriced-mark' })), ' tokens without a reported cost'));
}

// fillDays returns one entry per day from the first to the last, the
// report's row where there is one, an empty day elsewhere.
function fillDays(rows, since) {
  const byKey = new Map(rows.map((r) => [str(r.key), r]));
  if (!rows.length && !since) return [];
  let d = since ? new Date(since) : new Date(str(rows[0].key) + 'T00:00:00');
  const end = new Date();
  end.setHours(0, 0, 0, 0);
  const last = rows.length ? new Date(str(rows[rows.length - 1].key) + 'T00:00:00') : end;
  const stop = last > end ? last : end;
  const out = [];
  for (let n = 0; d <= stop && n < 3660; n++) {
    const key = dayKey(d);
    out.push({ key, row: byKey.get(key) || { key, sessions: 0, estimated: [] } });
    d = new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1);
  }
  return out;
}

// ---- tiles and table ----

function tiles(total) {
  const t = totalTokens(total);
  const box = $('usage-tiles');
  const tile = (label, value, title, data) => h('div', { class: 'tile', title, dataset: data },
    h('div', { class: 'tile-label', text: label }), h('div', { class: 'tile-value', text: value }));
  box.replaceChildren(
    tile('Tokens', t === null ? '—' : fmtTokens(t), SEGMENTS.map((s) => s.label + ': ' + tokenText(total, s.key)).join('\n'), { figure: 'tokens', value: t === null ? '' : String(t) }),
    tile('Output', tokenText(total, 'outputTokens') === '—' ? '—' : (estimated(total, 'outputTokens') ? '≥' : '') + fmtTokens(total.outputTokens), 'output tokens: ' + tokenText(total, 'outputTokens'), { figure: 'output', value: num(total.outputTokens) ?? '' }),
    tile('Cost', costText(total) === '—' ? 'not reported' : costText(total), 'the costs the harnesses reported', { figure: 'cost', value: num(total.costUsd) ?? '' }),
    tile('Sessions', fmtInt(total.sessions), '', { figure: 'sessions', value: num(total.sessions) ?? '' }),
    tile('Without a cost', fmtInt(total.unpriced), 'sessions that spent tokens without reporting a cost', { figure: 'unpriced', value: num(total.unpriced) ?? '' }),
  );
}

function table(rep) {
  const by = GROUPINGS.includes(rep.by) ? rep.by : 'day';
  const labelCol = by === 'model' ? 'As named' : by === 'session' ? 'Title' : '';
  const cols = [TITLES[by], 'Sessions', 'Input', 'Output', 'Cache read', 'Cache write', 'Total tokens', 'Cost', 'Without a cost'];
  if (labelCol) cols.push(labelCol);
  $('usage-head').replaceChildren(...cols.map((c, i) => h('th', { scope: 'col', class: i > 0 && i < 9 ? 'num' : '', text: c })));
  const tr = (row, isTotal) => {
    const key = isTotal ? 'Total' : str(row.key);
    const first = h(isTotal ? 'th' : 'td', { class: 'usage-key', scope: isTotal ? 'row' : null });
    if (by === 'session' && !isTotal) first.append(h('a', { href: sessionPath(key), text: key.length > 16 ? key.slice(0, 16) + '…' : key, title: key }));
    else first.textContent = key;
    const t = totalTokens(row);
    const cells = [first, h('td', { class: 'num', text: fmtInt(row.sessions) })];
    for (const s of SEGMENTS) cells.push(h('td', { class: 'num', text: tokenText(row, s.key) }));
    cells.push(h('td', { class: 'num', text: t === null ? '—' : fmtInt(t) }), h('td', { class: 'num', text: costText(row) }), h('td', { class: 'num', text: fmtInt(row.unpriced) }));
    if (labelCol) cells.push(h('td', { class: 'usage-label', text: isTotal ? '' : str(row.label) }));
    return h('tr', { dataset: rowData(row), class: isTotal ? 'usage-total' : '' }, ...cells);
  };
  const rows = Array.isArray(rep.rows) ? rep.rows : [];
  $('usage-body').replaceChildren(...rows.map((r) => tr(r, false)));
  $('usage-foot').replaceChildren(tr(rep.total || {}, true));
  $('usage-empty').hidden = rows.length > 0;
}

// ---- loading ----

let gen = 0;

async function load() {
  const my = ++gen;
  writeParams();
  $('usage').setAttribute('aria-busy', 'true');
  const since = sinceDay();
  const params = (by) => ({ by, since: since ? dayKey(since) : null, tz: zone });
  try {
    const by = bySel.value;
    const [days, models, other] = await Promise.all([
      api('/api/usage', params('day')),
      api('/api/usage', params('model')),
      by === 'day' || by === 'model' ? null : api('/api/usage', params(by)),
    ]);
    if (my !== gen) return;
    showError(null);
    const dayRows = Array.isArray(days.rows) ? days.rows.filter((r) => r.key !== '(unknown)') : [];
    const filled = fillDays(dayRows, since);
    dayChart($('chart-tokens-day'), filled, 'tokens');
    dayChart($('chart-cost-day'), filled, 'cost');
    const modelRows = Array.isArray(models.rows) ? models.rows : [];
    modelChart($('chart-tokens-model'), modelRows, 'tokens');
    modelChart($('chart-cost-model'), [...modelRows].sort((a, b) => (num(b.costUsd) ?? -1) - (num(a.costUsd) ?? -1)), 'cost');
    tiles(days.total || {});
    table(by === 'day' ? days : by === 'model' ? models : other);
  } catch (err) {
    if (my === gen) showError(err, () => { showError(null); load(); });
  } finally {
    if (my === gen) $('usage').setAttribute('aria-busy', 'false');
  }
}

readParams();
legend();
periodSel.addEventListener('change', load);
bySel.addEventListener('change', load);
load();
