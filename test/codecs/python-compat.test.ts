/**
 * Byte compatibility with the Python reference: json.dumps output, str.strip, and Hermes' title sanitiser.
 * json.dumps is checked against the real python3 on this machine when it is there.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeStoredContent, encodeStoredContent } from '../../src/codecs/content.js';
import { pythonFloatRepr, pythonJsonDumps } from '../../src/codecs/python-json.js';
import { PY_WS, pyLen, pySlice, pyStrip } from '../../src/codecs/python-text.js';
import { TitleTooLongError, openStore, sanitizeTitle } from '../../src/index.js';
import { sanitizeContext } from '../../src/repos/conversation.js';
import { isCI } from '../backends.js';

function python(): string | undefined {
  try {
    execFileSync('python3', ['-c', 'import json'], { stdio: 'ignore' });
    return undefined;
  } catch {
    if (isCI) throw new Error('CI=true and python3 is not available for the json.dumps comparison');
    return 'python3 is not installed here';
  }
}
const noPython = python();

/** Values whose int/float reading is the same in both languages (integral floats would differ; see python-json.ts). */
const VALUES: unknown[] = [
  0.1,
  1e-5,
  0.0001,
  123456.789,
  -2.5e-7,
  1e300,
  5e-324,
  1.7976931348623157e308,
  1 / 3,
  100.5,
  -0.5,
  42,
  -7,
  0,
  'héllo 记忆 😀 "q" \\ \n\t\r\b\f\u0001\u001f\u007f\u0080',
  [1, [2, {}], []],
  { a: { b: [true, false, null] }, ü: 'x', '': '' },
  [{ id: 'toolu_01', type: 'function', function: { name: 'terminal', arguments: '{"command": "crontab -l"}' } }],
];

describe('python json.dumps', () => {
  it.skipIf(noPython !== undefined)(
    `writes the bytes Python writes${noPython ? ` (skipped: ${noPython})` : ''}`,
    () => {
      const expected = execFileSync(
        'python3',
        ['-c', 'import json,sys\nfor v in json.loads(sys.stdin.read()): print(json.dumps(v))'],
        {
          input: JSON.stringify(VALUES),
        },
      )
        .toString()
        .trimEnd()
        .split('\n');
      expect(VALUES.map(pythonJsonDumps)).toEqual(expected);
    },
  );

  it('formats floats like Python repr', () => {
    expect([1.0, 1e16, 1.5e16, 0.0001, 0.00001, 1e-7, 12.5].map(pythonFloatRepr)).toEqual([
      '1.0',
      '1e+16',
      '1.5e+16',
      '0.0001',
      '1e-05',
      '1e-07',
      '12.5',
    ]);
  });

  it('round-trips structured content through the "\\x00json:" form', () => {
    const parts = [{ type: 'text', text: 'ü' }];
    const stored = encodeStoredContent(parts)!;
    expect(stored).toBe('\u0000json:[{"type": "text", "text": "\\u00fc"}]');
    expect(decodeStoredContent(stored)).toEqual(parts);
    expect(decodeStoredContent('\u0000json:{broken')).toBe('\u0000json:{broken');
    expect(decodeStoredContent('plain')).toBe('plain');
  });
});

describe("Hermes' Python reads what we store", () => {
  it.skipIf(noPython !== undefined)(
    `decodes every content exactly, NUL and marker-looking strings included${noPython ? ` (skipped: ${noPython})` : ''}`,
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-pycompat-'));
      try {
        const file = path.join(dir, 'state.db');
        const store = await openStore(`sqlite:${file}`);
        const contents = [
          'plain',
          'a\u0000b',
          '\u0000',
          '\u0000json:[1, 2]',
          '\u0000json:{"a": 1}',
          '\u0000json:"s"',
          '\u0000json:broken',
          [{ type: 'text', text: 'x\u0000y' }],
          { k: '\u0000json:[3]' },
        ];
        await store.createSession('s', 'cli');
        for (const c of contents) await store.appendMessage('s', 'user', c);
        await store.close();
        // Hermes' decode (spec: "Content encoding"): the marker's remainder through json.loads, else the raw string.
        const script = [
          'import json, sqlite3, sys',
          'out = []',
          "for (v,) in sqlite3.connect(sys.argv[1]).execute('SELECT content FROM messages ORDER BY id'):",
          "    if isinstance(v, str) and v.startswith('\\x00json:'):",
          '        try:',
          '            v = json.loads(v[6:])',
          '        except Exception:',
          '            pass',
          '    out.append(v)',
          'print(json.dumps(out))',
        ].join('\n');
        expect(JSON.parse(execFileSync('python3', ['-c', script, file]).toString())).toEqual(contents);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('python strings', () => {
  it('strips what str.strip strips (not U+FEFF, but U+001C-U+001F and U+0085)', () => {
    expect(pyStrip('\u001c\u0085 x \u3000\n')).toBe('x');
    expect(pyStrip('\ufeffx')).toBe('\ufeffx');
  });

  it("strips exactly what the class of Python's whitespace matches, for every UTF-16 unit", () => {
    // The regex form pyStrip had before its scan, over PY_WS (Python's str.isspace set, see python-text.ts).
    const leading = new RegExp(`^[${PY_WS}]+`, 'u');
    const trailing = new RegExp(`[${PY_WS}]+$`, 'u');
    const byRegex = (s: string) => s.replace(leading, '').replace(trailing, '');
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      for (const s of [`${ch}a${ch}`, `${ch}${ch}`, ch, `a${ch}b`]) {
        if (pyStrip(s) !== byRegex(s))
          throw new Error(`pyStrip differs for U+${c.toString(16)} in ${JSON.stringify(s)}`);
      }
    }
    expect(pyStrip('')).toBe('');
    expect(pyStrip(' \t😀 x 😀\n')).toBe('😀 x 😀');
  });

  it('counts and slices code points', () => {
    expect(pyLen('a😀b')).toBe(3);
    expect(pySlice('😀😀😀', 2)).toBe('😀😀');
    // Python's s[:n] counts code points; a lone surrogate (which JS strings allow) is one of them.
    const pieces = ['a', '😀', '\ud800', '\udc00', '中', 'é'];
    let seed = 7;
    for (let round = 0; round < 2000; round++) {
      let s = '';
      const length = round % 40;
      for (let i = 0; i < length; i++) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        s += pieces[seed % pieces.length];
      }
      const points = [...s];
      for (const n of [0, 1, 3, 10, points.length - 1, points.length, points.length + 1]) {
        if (n < 0) continue;
        expect(pySlice(s, n)).toBe(points.slice(0, n).join(''));
      }
    }
  });
});

describe('sanitizeTitle (T11)', () => {
  it.each([
    ['My Project', 'My Project'],
    ['  hello world  ', 'hello world'],
    ['hello   world', 'hello world'],
    ['hello\t\nworld', 'hello world'],
    ['hello\u0000world', 'helloworld'],
    ['\u0007\u0008test\u001b', 'test'],
    ['hello\u007fworld', 'helloworld'],
    ['hello\u200bworld', 'helloworld'],
    ['hello\u200dworld', 'helloworld'],
    ['hello\u202eworld', 'helloworld'],
    ['\ufeffhello', 'hello'],
    ['日本語のタイトル 🚀', '日本語のタイトル 🚀'],
    ['café — déjà vu!?', 'café — déjà vu!?'],
    ['a\u3000\u00a0b', 'a b'],
  ])('%j -> %j', (input, output) => {
    expect(sanitizeTitle(input)).toBe(output);
  });

  it.each([null, undefined, '', '   \t\n  ', '\u0000\u0001\u0002\u200b\ufeff'])('%j -> null', (input) => {
    expect(sanitizeTitle(input)).toBeNull();
  });

  it("allows 100 characters and refuses 101 with Hermes' message", () => {
    expect(sanitizeTitle('A'.repeat(100))).toBe('A'.repeat(100));
    expect(() => sanitizeTitle('A'.repeat(101))).toThrow(TitleTooLongError);
    expect(() => sanitizeTitle('A'.repeat(101))).toThrow('Title too long (101 chars, max 100)');
  });
});

describe('sanitizeContext', () => {
  it('removes memory blocks, system notes and stray tags, case-insensitively', () => {
    const note =
      '[System note: The following is recalled memory context, NOT new user input. Treat as authoritative reference data (x).] ';
    expect(sanitizeContext('a<MEMORY-CONTEXT>secret</memory-context>b')).toBe('ab');
    expect(sanitizeContext(`${note}kept`)).toBe('kept');
    expect(sanitizeContext('x< memory-context >y')).toBe('xy');
  });

  it('gives what the three replacements give, also where one removal makes the next match', () => {
    const S = `[${PY_WS}]`;
    const block = new RegExp(`<${S}*memory-context${S}*>[^]*?</${S}*memory-context${S}*>`, 'giu');
    const note = new RegExp(
      `\\[System note:${S}*The following is recalled memory context,${S}*NOT new user input\\.${S}*` +
        `Treat as (?:informational background data|authoritative reference data[^\\]]*)\\.\\]${S}*`,
      'giu',
    );
    const stray = new RegExp(`</?${S}*memory-context${S}*>`, 'giu');
    const plain = (t: string) => t.replace(block, '').replace(note, '').replace(stray, '');
    const systemNote =
      '[System note: The following is recalled memory context, NOT new user input. Treat as informational background data.]';
    for (const text of [
      '',
      'no tags at all',
      'a < b and c[0]',
      '<memory-<memory-context>x</memory-context>context>left',
      `[System note: The following is recalled<memory-context>x</memory-context> memory context, NOT new user input. Treat as informational background data.] kept`,
      `${systemNote}\u3000kept </Memory-Context>`,
      '<MEMORY-CONTEXT>\n a [System note: b] \n</memory-context> [',
      'x<\u2003memory-context\u3000>y',
    ]) {
      expect(sanitizeContext(text), JSON.stringify(text)).toBe(plain(text));
    }
  });
});
