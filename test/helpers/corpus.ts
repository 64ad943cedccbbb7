/**
 * A deterministic mixed corpus (English, Chinese, Japanese, Korean, code, tool calls) for the search
 * parity test and the benchmark. Seeded, so every backend gets the same rows in the same order.
 */
import { prng } from '../../examples/hermes-state-db.js';

/** The seeded PRNG the example history uses (mulberry32). */
export const rng = prng;

export const EN = [
  'docker',
  'compose',
  'deploy',
  'kubernetes',
  'ingress',
  'postgres',
  'backup',
  'the',
  'server',
  'error',
  'timeout',
  'network',
  'config',
  'python',
  'rust',
  'build',
  'test',
  'release',
  'memory',
  'cache',
  'query',
  'index',
  'search',
  'token',
  'session',
  'agent',
  'model',
  'prompt',
  'retry',
  'lock',
  'write',
  'read',
  'file',
  'path',
  'user',
];
export const ZH = [
  '记忆断裂',
  '通信协议',
  '数据库',
  '服务器',
  '部署',
  '搜索',
  '缓存',
  '测试',
  '广西旅游',
  '会议纪要',
  '问题复现',
  '实现',
];
export const JA = ['こんにちは', '世界', 'データベース', 'サーバー', '検索'];
export const KO = ['안녕하세요', '반갑습니다', '데이터', '검색'];
export const CODE = [
  'chat-send',
  'p2.2',
  'sp_new',
  'simulate.p2.test.ts',
  'my-app.config',
  'v1.2.3',
  'snake_case_thing',
];

export interface CorpusMessage {
  session: string;
  source: string;
  role: string;
  content: string;
  toolName?: string;
  toolCalls?: unknown[];
}

export function corpus(size: number, seed = 20261122): CorpusMessage[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const sources = ['cli', 'telegram', 'discord', 'tool', 'cron'];
  const out: CorpusMessage[] = [];
  for (let i = 0; i < size; i++) {
    const session = `s${Math.floor(i / 25)}`;
    const source = sources[Math.floor(i / 25) % sources.length]!;
    const kind = r();
    const words = (n: number, pool: readonly string[]) => Array.from({ length: n }, () => pick(pool));
    let content: string;
    if (kind < 0.45) content = `${words(8 + Math.floor(r() * 12), EN).join(' ')}.`;
    else if (kind < 0.65) content = words(3 + Math.floor(r() * 5), ZH).join(r() < 0.5 ? '' : '，') + pick(EN);
    else if (kind < 0.72) content = words(3, JA).join('');
    else if (kind < 0.78) content = words(3, KO).join(' ');
    else content = `${words(4, EN).join(' ')} ${pick(CODE)} ${words(3, EN).join(' ')}`;
    const message: CorpusMessage = { session, source, role: r() < 0.5 ? 'user' : 'assistant', content };
    if (r() < 0.15) {
      message.toolName = pick(['terminal', 'web_search', 'read_file']);
      message.toolCalls = [
        {
          id: `call_${i}`,
          type: 'function',
          function: { name: message.toolName, arguments: JSON.stringify({ q: pick(EN) }) },
        },
      ];
    }
    out.push(message);
  }
  return out;
}

/** ≥ 100 queries across the query classes. */
export function parityQueries(): string[] {
  const q: string[] = [];
  for (const w of EN) q.push(w);
  for (const w of EN.slice(0, 10)) q.push(`${w.slice(0, 3)}*`);
  for (let i = 0; i < 10; i++) q.push(`"${EN[i]} ${EN[i + 1]}"`);
  for (let i = 0; i < 10; i++) q.push(`${EN[i]} OR ${EN[i + 5]}`);
  for (let i = 0; i < 8; i++) q.push(`${EN[i]} ${EN[i + 3]}`);
  for (let i = 0; i < 6; i++) q.push(`${EN[i]} NOT ${EN[i + 7]}`);
  for (const c of CODE) q.push(c);
  for (const z of ZH) q.push(z);
  for (const z of ZH.slice(0, 6)) q.push(z.slice(0, 2));
  q.push(
    '记忆断裂 OR 通信协议',
    '部署 OR 搜索',
    'docker 数据库',
    'こんにちは',
    '世界',
    '안녕하세요',
    '데이터',
    'terminal',
    'web_search',
  );
  q.push('a AND OR b', 'key:value', '"unterminated', 'C++', '', 'OR docker', 'deploy AND');
  return q;
}
