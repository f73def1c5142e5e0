// Syntax colouring for diffs and code blocks: a small tokenizer per
// language family that finds keywords, strings, comments, numbers and a few
// language-specific kinds (keys, tags, variables), one line at a time. It is
// a reading aid, not a parser: a wrong guess costs a colour, never text.
//
// paint appends the tokens of one line to an element as Text nodes and
// span.tk-<kind> elements (textContent only), and returns the state to carry
// into the next line: null, or the index of the block comment or multi-line
// string the line ends inside.

const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const words = (s) => new Set(s.split(' '));
const NUM = '\\b(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|\\d[\\d_]*(?:\\.\\d[\\d_]*)?(?:[eE][+-]?\\d+)?)[a-zA-Z]*\\b';

// A language is a list of rules, each a regular expression source and the
// kind of what it matches ('word' for identifiers, checked against the
// keyword sets), and the spans that may run over several lines.
function lang(def) {
  const spans = def.spans || [];
  const parts = [];
  const kinds = [];
  spans.forEach((s, i) => {
    const body = s.esc ? '(?:\\\\[\\s\\S]|(?!' + esc(s.close) + ')[^\\\\])*' : '(?:(?!' + esc(s.close) + ')[\\s\\S])*';
    s.rest = new RegExp('^' + body + '(?:' + esc(s.close) + ')?');
    parts.push(esc(s.open) + body + '(?:' + esc(s.close) + ')?');
    kinds.push({ span: i });
  });
  for (const [re, kind] of def.rules) { parts.push(re); kinds.push(kind); }
  return {
    re: new RegExp(parts.map((p) => '(' + p + ')').join('|'), 'g'),
    kinds, spans,
    kw: words(def.kw || ''), lit: words(def.lit || ''),
  };
}

const DQ = '"(?:[^"\\\\]|\\\\.)*"?';
const SQ = "'(?:[^'\\\\]|\\\\.)*'?";
const WORD = ['[A-Za-z_$][\\w$]*', 'word'];
const SLASH = [{ open: '/*', close: '*/', kind: 'com' }];

const C_KW = 'auto break case catch char class const constexpr continue default delete do double else enum explicit extends extern final finally float for friend goto if implements import inline int interface long namespace new operator override package private protected public register return short signed sizeof static struct super switch template this throw throws try typedef typename union unsigned using virtual void volatile while fun val var when is in object sealed data let func guard self init deinit protocol extension where async await yield';

const LANGS = {
  go: lang({
    spans: [...SLASH, { open: '`', close: '`', kind: 'str' }],
    rules: [['//.*', 'com'], [DQ, 'str'], ["'(?:[^'\\\\]|\\\\.)*'", 'str'], [NUM, 'num'], WORD],
    kw: 'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var',
    lit: 'true false nil iota bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any comparable append cap clear close copy delete len make max min new panic print println recover',
  }),
  js: lang({
    spans: [...SLASH, { open: '`', close: '`', kind: 'str', esc: true }],
    rules: [['//.*', 'com'], [DQ, 'str'], [SQ, 'str'], [NUM, 'num'], WORD],
    kw: 'async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return static super switch this throw try typeof var void while with yield as type interface enum implements private protected public readonly declare namespace abstract keyof satisfies',
    lit: 'true false null undefined NaN Infinity string number boolean any unknown never object symbol bigint',
  }),
  py: lang({
    spans: [{ open: '"""', close: '"""', kind: 'str', esc: true }, { open: "'''", close: "'''", kind: 'str', esc: true }],
    rules: [['#.*', 'com'], [DQ, 'str'], [SQ, 'str'], [NUM, 'num'], ['@[\\w.]+', 'lit'], WORD],
    kw: 'and as assert async await break class continue def del elif else except finally for from global if import in is lambda match case nonlocal not or pass raise return try while with yield',
    lit: 'True False None self cls int str float bool list dict set tuple bytes print len range isinstance super',
  }),
  rust: lang({
    spans: [...SLASH, { open: '"', close: '"', kind: 'str', esc: true }],
    rules: [['//.*', 'com'], ["'(?:[^'\\\\\\n]|\\\\[^']+)'", 'str'], [NUM, 'num'], ['[A-Za-z_][\\w]*!', 'lit'], WORD],
    kw: 'as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while',
    lit: 'true false None Some Ok Err bool char str String u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64 Vec Option Result Box',
  }),
  sh: lang({
    rules: [['(?<![^\\s;])#.*', 'com'], [DQ, 'str'], ["'[^']*'?", 'str'], ['\\$(?:\\{[^}]*\\}?|[\\w@#?*!$-])', 'var'], [NUM, 'num'], ['[A-Za-z_][\\w-]*', 'word']],
    kw: 'if then else elif fi for while until do done case esac function in return local export readonly declare set unset shift exit break continue trap source',
    lit: 'true false echo cd printf test exec eval',
  }),
  json: lang({
    rules: [['"(?:[^"\\\\]|\\\\.)*"(?=\\s*:)', 'key'], [DQ, 'str'], ['-?' + NUM, 'num'], ['[A-Za-z_]\\w*', 'word']],
    lit: 'true false null',
  }),
  yaml: lang({
    rules: [['(?<![^\\s])#.*', 'com'], ['^[ \\t]*(?:-[ \\t]+)?[^\\s#:"\'][^:#]*?(?=:(?:\\s|$))', 'key'], [DQ, 'str'], ["'(?:[^']|'')*'?", 'str'], ['-?' + NUM, 'num'], ['[A-Za-z_~]\\w*', 'word']],
    lit: 'true false null yes no on off ~',
  }),
  md: lang({
    rules: [['^#{1,6}\\s.*', 'kw'], ['^\\s*(?:[-*+]|\\d+[.)])\\s', 'lit'], ['^\\s*(?:```|~~~).*', 'com'], ['`[^`]*`?', 'str'], ['\\*\\*[^*]+\\*\\*|__[^_]+__', 'kw'], ['\\]\\([^)]*\\)?', 'lit']],
  }),
  html: lang({
    spans: [{ open: '<!--', close: '-->', kind: 'com' }],
    rules: [['</?[A-Za-z][\\w:.-]*|/?>', 'tag'], ['[\\w:-]+(?==)', 'attr'], [DQ, 'str'], [SQ, 'str'], ['&#?\\w+;', 'lit']],
  }),
  css: lang({
    spans: SLASH,
    rules: [['//.*', 'com'], [DQ, 'str'], [SQ, 'str'], ['@[\\w-]+', 'kw'], ['#[0-9a-fA-F]{3,8}\\b', 'num'], ['-?\\d*\\.?\\d+(?:%|[a-z]+)?\\b', 'num'], ['[\\w-]+(?=\\s*:[^:])', 'attr'], ['!important', 'kw']],
  }),
  c: lang({
    spans: SLASH,
    rules: [['//.*', 'com'], ['^\\s*#\\s*\\w+', 'kw'], [DQ, 'str'], ["'(?:[^'\\\\]|\\\\.)*'", 'str'], [NUM, 'num'], ['@\\w+', 'lit'], WORD],
    kw: C_KW,
    lit: 'true false null nullptr NULL nil bool size_t string String Integer Object',
  }),
};

const EXT = {
  go: 'go', js: 'js', mjs: 'js', cjs: 'js', jsx: 'js', ts: 'js', tsx: 'js', mts: 'js', cts: 'js',
  py: 'py', pyi: 'py', rs: 'rust', sh: 'sh', bash: 'sh', zsh: 'sh', json: 'json', jsonl: 'json',
  yaml: 'yaml', yml: 'yaml', md: 'md', markdown: 'md', html: 'html', htm: 'html', xml: 'html', svg: 'html', vue: 'html',
  css: 'css', scss: 'css', less: 'css', c: 'c', h: 'c', cc: 'c', cpp: 'c', cxx: 'c', hpp: 'c', hh: 'c',
  java: 'c', cs: 'c', kt: 'c', kts: 'c', swift: 'c', scala: 'c', dart: 'c', m: 'c', php: 'c',
};
const NAMES = {
  golang: 'go', 'javascript': 'js', typescript: 'js', node: 'js', python: 'py', python3: 'py', rust: 'rust',
  shell: 'sh', console: 'sh', bash: 'sh', zsh: 'sh', shellscript: 'sh', yaml: 'yaml', markdown: 'md',
  html: 'html', xml: 'html', css: 'css', 'c++': 'c', csharp: 'c', 'c#': 'c', java: 'c', kotlin: 'c', swift: 'c',
};

// langOfPath is the language key of a file path by its extension (or
// null): "a/b/main.go" is "go".
export function langOfPath(path) {
  const base = String(path || '').split('/').pop().toLowerCase();
  if (base === 'dockerfile' || base === 'makefile') return 'sh';
  const dot = base.lastIndexOf('.');
  return dot >= 0 && Object.hasOwn(EXT, base.slice(dot + 1)) ? EXT[base.slice(dot + 1)] : null;
}

// langOfName is the language key of a code block's info string ("go",
// "python", "ts"), or null.
export function langOfName(name) {
  const n = String(name || '').trim().toLowerCase().split(/\s/)[0];
  if (Object.hasOwn(NAMES, n)) return NAMES[n];
  if (Object.hasOwn(LANGS, n)) return n;
  return Object.hasOwn(EXT, n) ? EXT[n] : null;
}

function token(parent, text, kind) {
  const s = document.createElement('span');
  s.className = 'tk-' + kind;
  s.textContent = text;
  parent.append(s);
}

// paint appends line (without its newline) to parent, coloured as the
// language key says, starting in state (null, or what paint returned for
// the line before), and returns the state after the line. An unknown key
// appends the text as it is.
export function paint(parent, line, key, state = null) {
  const L = Object.hasOwn(LANGS, key) ? LANGS[key] : null;
  if (!L) { parent.append(line); return null; }
  let pos = 0;
  if (state !== null && L.spans[state]) {
    const s = L.spans[state];
    const m = s.rest.exec(line);
    const t = m ? m[0] : '';
    if (t) token(parent, t, s.kind);
    if (!t.endsWith(s.close)) return state;
    pos = t.length;
  }
  return paintFrom(parent, line, L, pos);
}

function paintFrom(parent, line, L, pos) {
  const re = L.re;
  re.lastIndex = pos;
  let m;
  let plain = pos;
  let state = null;
  while ((m = re.exec(line)) !== null) {
    if (m[0] === '') { re.lastIndex++; continue; }
    let i = 1;
    while (m[i] === undefined) i++;
    const k = L.kinds[i - 1];
    let kind = k;
    if (typeof k === 'object') {
      const s = L.spans[k.span];
      kind = s.kind;
      const t = m[0];
      if (t.length < s.open.length + s.close.length || !t.endsWith(s.close)) state = k.span;
    } else if (k === 'word') {
      kind = L.kw.has(m[0]) ? 'kw' : L.lit.has(m[0]) ? 'lit' : null;
    }
    if (!kind) continue;
    if (m.index > plain) parent.append(line.slice(plain, m.index));
    token(parent, m[0], kind);
    plain = re.lastIndex;
  }
  if (plain < line.length) parent.append(line.slice(plain));
  return state;
}
