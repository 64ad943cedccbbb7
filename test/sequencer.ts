/**
 * The order files start in. Vitest starts the files it has no timings for by size, so on a fresh clone
 * (CI) the contract files, four lines each and the longest to run, start last and one worker runs them
 * alone at the end. Files named in `LONGEST_FIRST` (test/suites.ts) start first, longest first; the rest
 * keep Vitest's order (its timings from the last run where it has them, else size).
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { LONGEST_FIRST } from './suites.js';

function rank(spec: TestSpecification): number {
  const at = LONGEST_FIRST.findIndex((file) => spec.moduleId.endsWith(file));
  return at < 0 ? LONGEST_FIRST.length : at;
}

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const position = new Map(sorted.map((spec, i) => [spec, i]));
    // Projects stay where Vitest put them (their group order); only the order inside one changes.
    const project = new Map<string, number>();
    for (const spec of sorted) if (!project.has(spec.project.name)) project.set(spec.project.name, project.size);
    return [...sorted].sort(
      (a, b) =>
        project.get(a.project.name)! - project.get(b.project.name)! ||
        rank(a) - rank(b) ||
        position.get(a)! - position.get(b)!,
    );
  }
}
