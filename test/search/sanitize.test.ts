/** Hermes' sanitizer: the input -> output table of hermes-schema-search.md §3.3 (T: asserted by Hermes' tests, C: computed). */
import { describe, expect, it } from 'vitest';
import { sanitizeFts5Query } from '../../src/index.js';
import { countCjk, routeCjk } from '../../src/search/cjk.js';

const TABLE: Array<[string, string]> = [
  ['hello world', 'hello world'],
  ['C++', 'C'],
  ['"unterminated', 'unterminated'],
  ['(problem', 'problem'],
  ['{test}', 'test'],
  ['hello AND', 'hello'],
  ['OR world', 'world'],
  ['***', ''],
  ['deploy*', 'deploy*'],
  ['"exact phrase"', '"exact phrase"'],
  ['"docker networking" setup', '"docker networking" setup'],
  ['"hello world" OR "foo bar"', '"hello world" OR "foo bar"'],
  ['chat-send', '"chat-send"'],
  ['docker-compose-up', '"docker-compose-up"'],
  ['fix chat-send bug', 'fix "chat-send" bug'],
  ['chat-send OR deploy-prod', '"chat-send" OR "deploy-prod"'],
  ['"chat-send"', '"chat-send"'],
  ['"my chat-send thing"', '"my chat-send thing"'],
  ['P2.2', '"P2.2"'],
  ['simulate.p2', '"simulate.p2"'],
  ['simulate.p2.test.ts', '"simulate.p2.test.ts"'],
  ['"P2.2"', '"P2.2"'],
  ['P2.2 OR simulate.p2', '"P2.2" OR "simulate.p2"'],
  ['my-app.config', '"my-app.config"'],
  ['my-app.config.ts', '"my-app.config.ts"'],
  ['sp_new', '"sp_new"'],
  ['a_b_c', '"a_b_c"'],
  ['sp_new1', '"sp_new1"'],
  ['docker-compose_up', '"docker-compose_up"'],
  ['my.app_config.ts', '"my.app_config.ts"'],
  ['"sp_new"', '"sp_new"'],
  ['sp_new and 血管瘤', '"sp_new" and 血管瘤'],
  ['*deploy', 'deploy'],
  ['foo **bar', 'foo bar'],
  ['a AND OR b', 'a AND OR b'],
  ['AND OR', 'OR'],
  ['OR OR', 'OR'],
  ['NOT foo', 'foo'],
  ['foo NOT', 'foo'],
  ['and foo', 'foo'],
  ['foo or', 'foo'],
  ['a^b', 'a b'],
  ['x "y', 'x  y'],
  ['a "b c', 'a  b c'],
  ['"a" "b', '"a"  b'],
  ['"" x', '"" x'],
  ['"a b" c-d "e-f"', '"a b" "c-d" "e-f"'],
  ['snake_case*', '"snake_case"*'],
  ['v1.2*', '"v1.2"*'],
  ['v1.2.3', '"v1.2.3"'],
  ['2024-01-01', '"2024-01-01"'],
  ['NOT-foo', '-foo'],
  ['-foo', '-foo'],
  ['key:value', 'key:value'],
  ['C#', 'C#'],
  ['50%', '50%'],
  ['$HOME', '$HOME'],
  ['user@example.com', 'user@"example.com"'],
  ['path/to/file.py', 'path/to/"file.py"'],
  ['NEAR(a b)', 'NEAR a b'],
  ['x*y', 'x*y'],
  ['ORACLE db', 'ORACLE db'],
  ['foo ANDROID', 'foo ANDROID'],
  ['  spaced  ', 'spaced'],
  ['日本語', '日本語'],
  ['100%完成', '100%完成'],
  ['记忆系统 OR 断裂连接', '记忆系统 OR 断裂连接'],
  // Python's \w is Unicode-aware.
  ['über-cool', '"über-cool"'],
  ['naïve_test', '"naïve_test"'],
  ['a "$&" b', 'a "$&" b'],
];

describe('sanitizeFts5Query', () => {
  it.each(TABLE)('%j -> %j', (input, output) => {
    expect(sanitizeFts5Query(input)).toBe(output);
  });
});

describe('CJK routing', () => {
  it.each([
    ['记忆断裂', 'trigram'],
    ['通信', 'like'],
    ['こんにちは', 'trigram'],
    ['世界', 'like'],
    ['Agent通信', 'like'],
    ['记忆系统 OR 断裂连接', 'trigram'],
    ['广西 OR 桂林', 'like'],
    ['docker 记忆断裂', 'trigram'],
    ['修改youer服务端', 'trigram'],
  ])('%s -> %s', (query, path) => {
    expect(routeCjk(query).path).toBe(path);
  });

  it('counts only the listed CJK blocks (not half-width katakana or compatibility jamo)', () => {
    expect(countCjk('记忆断裂 こんにちは カタカナ 안녕하세요 hello。')).toBe(4 + 5 + 4 + 5 + 1);
    expect(countCjk('ｶﾀｶﾅ ㄱ 𪜀 hello')).toBe(0);
  });

  it('keeps lowercase operators as terms and quotes everything else on the trigram path', () => {
    expect(routeCjk('记忆系统 or 断裂连接')).toEqual({ path: 'trigram', query: '"记忆系统" or "断裂连接"' });
    expect(routeCjk('"广西 旅游"')).toEqual({ path: 'like', tokens: ['广西', '旅游'] });
  });
});
