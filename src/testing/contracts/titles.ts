/** Contract: titles (spec §4, §12.3). */
import { describe, expect, it } from 'vitest';
import { TitleConflictError, TitleTooLongError } from '../../index.js';
import type { StoreFixture } from '../fixture.js';

// size: one describe block of the contract, each `it` one rule of the spec; splitting it would scatter the spec.
export function titlesContract(f: StoreFixture): void {
  describe('titles', () => {
    it('T1-T4, T17 sets, reads and updates a title; an unknown session gives false', async () => {
      await f.store.createSession('s1', 'cli');
      expect(await f.store.getSessionTitle('s1')).toBeNull();
      expect(await f.store.setSessionTitle('s1', 'My Session')).toBe(true);
      expect(await f.store.getSessionTitle('s1')).toBe('My Session');
      await f.store.setSessionTitle('s1', 'Updated Title');
      expect(await f.store.getSessionTitle('s1')).toBe('Updated Title');
      expect(await f.store.setSessionTitle('nonexistent', 'Title')).toBe(false);
      expect(await f.store.getSessionTitle('nonexistent')).toBeNull();
    });

    it('T7/T12/T13 stores punctuation verbatim, sanitises, and refuses over 100 characters', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.setSessionTitle('s1', "PR #438 — fixing the 'auth' middleware");
      expect(await f.store.getSessionTitle('s1')).toBe("PR #438 — fixing the 'auth' middleware");
      await f.store.setSessionTitle('s1', '  hello\u200b  world  ');
      expect(await f.store.getSessionTitle('s1')).toBe('hello world');
      const error = await f.store.setSessionTitle('s1', 'X'.repeat(150)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TitleTooLongError);
      expect((error as Error).message).toMatch(/too long/);
      expect(await f.store.getSessionTitle('s1')).toBe('hello world');
      // 100 code points of astral characters are 200 UTF-16 units, and still fit.
      expect(await f.store.setSessionTitle('s1', '😀'.repeat(100))).toBe(true);
    });

    it("sanitises before validating, by Hermes' rules: NUL and C0 controls go, C1 stay, invisibles go, whitespace collapses", async () => {
      await f.store.createSession('s1', 'cli');
      const cases: Array<[input: string, stored: string | null]> = [
        ['  hello\u0000  world  ', 'hello world'],
        // Step 2: C0 controls (and DEL) are deleted, not turned into spaces; tab, LF and CR are left for step 4.
        ['he\u0000l\u0001l\u0008o\u000b\u000c\u000e\u001b\u001c\u001f\u007f!', 'hello!'],
        ['a\tb\nc\r\nd', 'a b c d'],
        // Step 3: zero-width, directional and line/paragraph separators are deleted, also not spaces.
        [
          'a\u200bb\u200fc\u2028d\u2029e\u202af\u202eg\u2060h\u2066i\u2069j\ufeffk\ufffcl\ufff9m\ufffbn',
          'abcdefghijklmn',
        ],
        // Step 4: Python's whitespace, which includes NEL (U+0085); other C1 controls are kept as they are.
        ['a\u0085b \u00a0\u1680\u2000\u200a\u202f\u205f\u3000c', 'a b c'],
        ['x\u0080y\u009fz', 'x\u0080y\u009fz'],
        // Step 5: nothing left clears the title.
        ['\u0000 \u200b\t\u0085', null],
      ];
      for (const [input, stored] of cases) {
        await f.store.setSessionTitle('s1', 'placeholder');
        expect(await f.store.setSessionTitle('s1', input), JSON.stringify(input)).toBe(true);
        expect(await f.store.getSessionTitle('s1'), JSON.stringify(input)).toBe(stored);
      }
      // Length is counted after sanitising; uniqueness compares sanitised titles.
      expect(await f.store.setSessionTitle('s1', `${'x'.repeat(100)}${'\u0000'.repeat(50)}`)).toBe(true);
      await f.store.createSession('s2', 'cli');
      const conflict = await f.store
        .setSessionTitle('s2', ` x${'\u0000'.repeat(3)}${'x'.repeat(99)} `)
        .catch((e: unknown) => e);
      expect(conflict).toBeInstanceOf(TitleConflictError);
      expect(await f.store.getSessionTitle('s2')).toBeNull();
    });

    it('T8/T9 clears with an empty title; many sessions may have none', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.createSession('s2', 'cli');
      await f.store.setSessionTitle('s1', 'x');
      await f.store.setSessionTitle('s1', '');
      await f.store.setSessionTitle('s2', '   ');
      expect([await f.store.getSessionTitle('s1'), await f.store.getSessionTitle('s2')]).toEqual([null, null]);
    });

    it('T10 keeps the title when the session ends', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.setSessionTitle('s1', 'Before End');
      await f.store.endSession('s1', 'user_exit');
      expect(await f.store.getSession('s1')).toMatchObject({ title: 'Before End', endReason: 'user_exit' });
    });

    it("T14/T15 refuses another session's exact title with Hermes' message, allows re-setting one's own", async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.createSession('s2', 'cli');
      await f.store.setSessionTitle('s1', 'my project');
      const error = await f.store.setSessionTitle('s2', 'my project').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TitleConflictError);
      expect((error as Error).message).toBe("Title 'my project' is already in use by session s1");
      expect(await f.store.getSessionTitle('s2')).toBeNull();
      expect(await f.store.setSessionTitle('s1', 'my project')).toBe(true);
      // Uniqueness is exact-case.
      expect(await f.store.setSessionTitle('s2', 'My Project')).toBe(true);
    });

    it('T16 looks a session up by exact title', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.setSessionTitle('s1', 'refactoring auth');
      expect((await f.store.getSessionByTitle('refactoring auth'))!.id).toBe('s1');
      expect(await f.store.getSessionByTitle('Refactoring auth')).toBeNull();
      expect(await f.store.getSessionByTitle('unknown')).toBeNull();
    });

    it('T18-T20 resolves a title to its newest numbered variant', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.setSessionTitle('s1', 'my project');
      expect(await f.store.resolveSessionByTitle('my project')).toBe('s1');
      await f.store.createSession('s2', 'cli');
      await f.store.setSessionTitle('s2', 'my project #2');
      await f.store.createSession('s3', 'cli');
      await f.store.setSessionTitle('s3', 'my project #3');
      expect(await f.store.resolveSessionByTitle('my project')).toBe('s3');
      expect(await f.store.resolveSessionByTitle('my project #2')).toBe('s2');
      expect(await f.store.resolveSessionByTitle('nonexistent')).toBeNull();
    });

    it('T25/T26 escapes LIKE wildcards when resolving', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.setSessionTitle('s1', 'test_project');
      await f.store.createSession('s2', 'cli');
      await f.store.setSessionTitle('s2', 'testXproject #2');
      expect(await f.store.resolveSessionByTitle('test_project')).toBe('s1');
      await f.store.createSession('s3', 'cli');
      await f.store.setSessionTitle('s3', '100% done');
      await f.store.createSession('s4', 'cli');
      await f.store.setSessionTitle('s4', '100X done #2');
      expect(await f.store.resolveSessionByTitle('100% done')).toBe('s3');
    });

    it('matches numbered variants ASCII-case-insensitively, as SQLite LIKE does', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.setSessionTitle('s1', 'my project');
      await f.store.createSession('s2', 'cli');
      await f.store.setSessionTitle('s2', 'My Project #2');
      expect(await f.store.resolveSessionByTitle('my project')).toBe('s2');
      await f.store.createSession('s3', 'cli');
      await f.store.setSessionTitle('s3', 'über');
      await f.store.createSession('s4', 'cli');
      await f.store.setSessionTitle('s4', 'ÜBER #2');
      // Non-ASCII letters do not fold.
      expect(await f.store.resolveSessionByTitle('über')).toBe('s3');
    });

    it('T21-T24, T27 numbers the next title in a lineage', async () => {
      expect(await f.store.getNextTitleInLineage('my project')).toBe('my project');
      await f.store.createSession('s1', 'cli');
      await f.store.setSessionTitle('s1', 'my project');
      expect(await f.store.getNextTitleInLineage('my project')).toBe('my project #2');
      await f.store.createSession('s2', 'cli');
      await f.store.setSessionTitle('s2', 'my project #2');
      expect(await f.store.getNextTitleInLineage('my project #2')).toBe('my project #3');
      await f.store.createSession('s3', 'cli');
      await f.store.setSessionTitle('s3', 'my project #3');
      expect(await f.store.getNextTitleInLineage('my project')).toBe('my project #4');
      await f.store.createSession('t1', 'cli');
      await f.store.setSessionTitle('t1', 'test_project');
      await f.store.createSession('t2', 'cli');
      await f.store.setSessionTitle('t2', 'testXproject #2');
      expect(await f.store.getNextTitleInLineage('test_project')).toBe('test_project #2');
    });

    it('T5 lists the titled session once among all sessions', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.createSession('s2', 'cli');
      await f.store.setSessionTitle('s1', 'Debugging Auth');
      const titled = (await f.store.exportAll()).filter((s) => s.title === 'Debugging Auth');
      expect(titled.map((s) => s.id)).toEqual(['s1']);
      expect((await f.store.exportSession('s1'))!.title).toBe('Debugging Auth');
    });
  });
}
