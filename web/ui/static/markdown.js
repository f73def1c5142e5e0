// A safe Markdown subset for agent messages, written for this UI.
//
// It builds DOM nodes directly; every piece of source text becomes a Text node
// or textContent, so markup in a message (<script>, <img onerror=…>) shows as
// the literal characters it is. Supported: paragraphs (line breaks kept),
// ATX headings, fenced code blocks, bullet and numbered lists (nested by
// indentation), block quotes, GFM tables, horizontal rules, and inline code,
// **strong**, *emphasis*, ~~strikethrough~~ and backslash escapes.
//
// Links are NOT clickable: [text](url) renders as the text followed by the
// URL in plain text, and images as "[image: alt]" followed by their URL, so
// nothing an agent wrote ever becomes an href or a src, and opening the
// timeline never loads anything from elsewhere.

import { langOfName, paint } from './highlight.js';

const MAX_DEPTH = 8;          // nesting of quotes and lists
const MAX_INLINE_DEPTH = 6;   // nesting of emphasis
const CODE_PAINT_MAX = 100000; // characters of a code block coloured
const PUNCT = /[!-/:-@[-`{-~]/;
const WORD = /[\p{L}\p{N}]/u;

const FENCE = /^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$/;
const HR = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function el(tag, cls) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  return e;
}

/** renderMarkdown returns a div.md holding the rendered text. */
export function renderMarkdown(text) {
  const root = el('div', 'md');
  const src = String(text ?? '').replace(/\r\n?/g, '\n');
  const lines = src.split('\n').map(expandTabs);
  blocks(lines, root, 0);
  return root;
}

function expandTabs(line) {
  const m = /^[ \t]+/.exec(line);
  if (!m || !m[0].includes('\t')) return line;
  let col = 0;
  for (const c of m[0]) col = c === '\t' ? col + 4 - (col % 4) : col + 1;
  return ' '.repeat(col) + line.slice(m[0].length);
}

function indentOf(line) {
  return /^ */.exec(line)[0].length;
}

function isBlank(line) {
  return /^\s*$/.test(line);
}

// startsBlock reports whether a line begins a block other than a paragraph.
function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || ITEM.test(line);
}

function blocks(lines, parent, depth) {
  let para = [];
  const flush = () => {
    if (!para.length) return;
    const p = el('p');
    inline(para.map((l) => l.replace(/^ +/, '')).join('\n'), p, 0);
    parent.append(p);
    para = [];
  };

  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (isBlank(line)) { flush(); i++; continue; }

    if ((m = FENCE.exec(line))) {
      flush();
      const indent = m[1].length;
      const fence = m[2];
      const lang = m[3];
      const body = [];
      i++;
      while (i < lines.length) {
        const l = lines[i];
        const t = l.trim();
        if (indentOf(l) < 4 && t.length >= fence.length && t[0] === fence[0] && /^(`+|~+)$/.test(t)) { i++; break; }
        body.push(l.slice(Math.min(indent, indentOf(l))));
        i++;
      }
      parent.append(codeBlock(body.join('\n'), lang));
      continue;
    }

    if ((m = HEADING.exec(line))) {
      flush();
      const level = m[1].length;
      const hd = el('p', 'md-heading md-h' + level);
      inline(m[2] || '', hd, 0);
      parent.append(hd);
      i++;
      continue;
    }

    if (HR.test(line)) {
      flush();
      parent.append(el('hr'));
      i++;
      continue;
    }

    if (depth < MAX_DEPTH && QUOTE.test(line)) {
      flush();
      const inner = [];
      while (i < lines.length && !isBlank(lines[i])) {
        const l = lines[i];
        if (QUOTE.test(l)) inner.push(l.replace(QUOTE, ''));
        else if (inner.length && !startsBlock(l)) inner.push(l); // lazy continuation
        else break;
        i++;
      }
      const bq = el('blockquote');
      blocks(inner, bq, depth + 1);
      parent.append(bq);
      continue;
    }

    // A list interrupts a paragraph only with a bullet or "1." and some text.
    if (depth < MAX_DEPTH && (m = ITEM.exec(line)) && (para.length === 0 || (m[3] && (!/\d/.test(m[2]) || parseInt(m[2], 10) === 1)))) {
      flush();
      i = list(lines, i, parent, depth);
      continue;
    }

    if (line.includes('|') && i + 1 < lines.length && lines[i + 1].includes('|') && TABLE_SEP.test(lines[i + 1])) {
      flush();
      i = table(lines, i, parent);
      continue;
    }

    para.push(line);
    i++;
  }
  flush();
}

function codeBlock(text, lang) {
  const pre = el('pre', 'md-code');
  if (lang) pre.dataset.lang = lang;
  const code = el('code');
  const key = lang ? langOfName(lang) : null;
  if (key && text.length <= CODE_PAINT_MAX) {
    // coloured by highlight.js, one line at a time
    code.dataset.lang = key;
    let state = null;
    text.split('\n').forEach((l, i) => {
      if (i) code.append('\n');
      state = paint(code, l, key, state);
    });
  } else {
    code.textContent = text;
  }
  pre.append(code);
  return pre;
}

function list(lines, i, parent, depth) {
  const first = ITEM.exec(lines[i]);
  const base = first[1].length;
  const ordered = /\d/.test(first[2]);
  const listEl = el(ordered ? 'ol' : 'ul');
  if (ordered) {
    const start = parseInt(first[2], 10);
    if (start !== 1 && Number.isSafeInteger(start)) listEl.setAttribute('start', String(start));
  }
  while (i < lines.length) {
    const m = ITEM.exec(lines[i]);
    if (!m) break;
    const ind = m[1].length;
    if (ind < base || ind > base + 3) break;
    if (/\d/.test(m[2]) !== ordered) break;
    const contentIndent = ind + m[2].length + 1;
    const itemLines = [m[3] || ''];
    i++;
    while (i < lines.length) {
      const l = lines[i];
      if (isBlank(l)) {
        let j = i + 1;
        while (j < lines.length && isBlank(lines[j])) j++;
        if (j < lines.length && indentOf(lines[j]) > base && indentOf(lines[j]) >= Math.min(contentIndent, base + 2)) {
          for (; i < j; i++) itemLines.push('');
          continue;
        }
        const sib = j < lines.length ? ITEM.exec(lines[j]) : null;
        if (sib && sib[1].length >= base && sib[1].length <= base + 3 && /\d/.test(sib[2]) === ordered) i = j; // a loose list goes on
        break;
      }
      const li = indentOf(l);
      if (li > base) { itemLines.push(l.slice(Math.min(li, contentIndent))); i++; continue; }
      if (startsBlock(l)) break;
      itemLines.push(l); // lazy continuation of the item's paragraph
      i++;
    }
    const item = el('li');
    blocks(itemLines, item, depth + 1);
    listEl.append(item);
  }
  parent.append(listEl);
  return i;
}

function splitRow(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells = [];
  let cur = '';
  let inCode = false;
  for (let k = 0; k < s.length; k++) {
    const c = s[k];
    if (c === '\\' && s[k + 1] === '|') { cur += '|'; k++; continue; }
    if (c === '`') inCode = !inCode;
    if (c === '|' && !inCode) { cells.push(cur.trim()); cur = ''; continue; }
    cur += c;
  }
  cells.push(cur.trim());
  return cells;
}

function table(lines, i, parent) {
  const head = splitRow(lines[i]);
  const aligns = splitRow(lines[i + 1]).map((c) => {
    const l = c.startsWith(':');
    const r = c.endsWith(':');
    return l && r ? 'center' : r ? 'right' : l ? 'left' : '';
  });
  const wrap = el('div', 'md-table-wrap');
  const t = el('table', 'md-table');
  const thead = el('thead');
  const tr = el('tr');
  head.forEach((c, k) => {
    const th = el('th', aligns[k] ? 'align-' + aligns[k] : '');
    inline(c, th, 0);
    tr.append(th);
  });
  thead.append(tr);
  t.append(thead);
  const tbody = el('tbody');
  i += 2;
  while (i < lines.length && !isBlank(lines[i]) && lines[i].includes('|')) {
    const cells = splitRow(lines[i]);
    const row = el('tr');
    for (let k = 0; k < head.length; k++) {
      const td = el('td', aligns[k] ? 'align-' + aligns[k] : '');
      inline(cells[k] ?? '', td, 0);
      row.append(td);
    }
    tbody.append(row);
    i++;
  }
  t.append(tbody);
  wrap.append(t);
  parent.append(wrap);
  return i;
}

// inline renders one paragraph's text into parent.
function inline(s, parent, depth) {
  let buf = '';
  const out = (node) => {
    if (buf) { parent.append(buf); buf = ''; }
    parent.append(node);
  };
  let i = 0;
  while (i < s.length) {
    const c = s[i];

    if (c === '\\' && i + 1 < s.length && PUNCT.test(s[i + 1])) {
      buf += s[i + 1];
      i += 2;
      continue;
    }

    if (c === '`') {
      let n = 1;
      while (s[i + n] === '`') n++;
      const close = findRun(s, '`', n, i + n);
      if (close >= 0) {
        let code = s.slice(i + n, close).replace(/\n/g, ' ');
        if (code.length > 2 && code[0] === ' ' && code[code.length - 1] === ' ' && code.trim()) code = code.slice(1, -1);
        const node = el('code');
        node.textContent = code;
        out(node);
        i = close + n;
      } else {
        buf += '`'.repeat(n);
        i += n;
      }
      continue;
    }

    if ((c === '*' || c === '_' || c === '~') && depth < MAX_INLINE_DEPTH) {
      let n = 1;
      while (s[i + n] === c) n++;
      const next = s[i + n];
      const prev = i > 0 ? s[i - 1] : ' ';
      const canOpen = n <= 3 && next !== undefined && !/\s/.test(next) &&
        (c !== '_' || !WORD.test(prev)) && (c !== '~' || n === 2);
      if (canOpen) {
        const close = findClose(s, c, n, i + n);
        if (close >= 0) {
          const inner = s.slice(i + n, close);
          let node;
          let target;
          if (c === '~') { node = el('del'); target = node; }
          else if (n === 1) { node = el('em'); target = node; }
          else if (n === 2) { node = el('strong'); target = node; }
          else { node = el('strong'); target = el('em'); node.append(target); }
          inline(inner, target, depth + 1);
          out(node);
          i = close + n;
          continue;
        }
      }
      buf += c.repeat(n);
      i += n;
      continue;
    }

    if (c === '!' && s[i + 1] === '[') {
      const link = parseLink(s, i + 1);
      if (link) {
        const span = el('span', 'md-image');
        span.textContent = '[image: ' + (link.text || 'no description') + ']';
        out(span);
        if (link.url) out(urlNode(link.url));
        i = link.end;
        continue;
      }
    }

    if (c === '[') {
      const link = parseLink(s, i);
      if (link) {
        const span = el('span', 'md-link');
        inline(link.text, span, depth + 1);
        out(span);
        if (link.url && link.url !== link.text) out(urlNode(link.url));
        i = link.end;
        continue;
      }
    }

    if (c === '<') {
      const m = /^<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]*)>/.exec(s.slice(i, i + 2048));
      if (m) {
        const span = el('span', 'md-url md-autolink');
        span.textContent = m[1];
        out(span);
        i += m[0].length;
        continue;
      }
    }

    buf += c;
    i++;
  }
  if (buf) parent.append(buf);
}

function urlNode(url) {
  const span = el('span', 'md-url');
  span.textContent = ' (' + url + ')';
  return span;
}

// findRun finds the next run of exactly n copies of ch at or after from.
function findRun(s, ch, n, from) {
  const run = ch.repeat(n);
  let j = s.indexOf(run, from);
  while (j >= 0) {
    let end = j + n;
    if (s[end] !== ch && (j === 0 || s[j - 1] !== ch)) return j;
    while (s[end] === ch) end++;
    j = s.indexOf(run, end);
  }
  return -1;
}

// findClose finds the delimiter run that closes an emphasis opened at from.
function findClose(s, ch, n, from) {
  const run = ch.repeat(n);
  let j = s.indexOf(run, from + 1);
  while (j >= 0) {
    let end = j + n;
    const longer = s[end] === ch;
    const before = s[j - 1];
    const after = s[end];
    if (!longer && s[j - 1] !== ch && before !== undefined && !/\s/.test(before) &&
        (ch !== '_' || after === undefined || !WORD.test(after))) {
      return j;
    }
    while (s[end] === ch) end++;
    j = s.indexOf(run, end);
  }
  return -1;
}

// parseLink reads [text](url "title") starting at s[i] === '['.
function parseLink(s, i) {
  let depth = 0;
  let k = i;
  for (; k < s.length && k < i + 2000; k++) {
    const c = s[k];
    if (c === '\\') { k++; continue; }
    if (c === '[') depth++;
    else if (c === ']') { depth--; if (depth === 0) break; }
    else if (c === '\n' && s[k + 1] === '\n') return null;
  }
  if (depth !== 0 || s[k] !== ']' || s[k + 1] !== '(') return null;
  const text = s.slice(i + 1, k);
  let p = k + 2;
  let parens = 1;
  for (; p < s.length && p < k + 4000; p++) {
    const c = s[p];
    if (c === '\\') { p++; continue; }
    if (c === '(') parens++;
    else if (c === ')') { parens--; if (parens === 0) break; }
    else if (c === '\n') return null;
  }
  if (parens !== 0) return null;
  let url = s.slice(k + 2, p).trim();
  const titled = /^(\S+)\s+(["'(]).*["')]$/.exec(url);
  if (titled) url = titled[1];
  if (url.startsWith('<') && url.endsWith('>')) url = url.slice(1, -1);
  return { text, url, end: p + 1 };
}
