import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, slowest first: they spawn servers or the CLI (`node --import tsx`,
 * seconds of CPU each), run Chromium, or start two apps. Kept by hand from runs of single files
 * (docs/decisions.md, "The slowest test files start first").
 */
export const SLOW_FILES = [
  'test/startup.test.ts',
  'test/signing-key-revocation.test.ts',
  'test/browser/external-sign-in.test.ts',
  'test/browser/web-app.test.ts',
  'test/browser/dashboard-feedback.test.ts',
  'test/browser/list-return-and-pickers.test.ts',
  'test/browser/list-pages.test.ts',
  'test/retention.test.ts',
  'src/modules/workspaces/workspaces.test.ts',
];

/**
 * Vitest orders files by the durations it cached from the last run, and without that cache (CI
 * installs node_modules afresh, where it lives) by size, largest first: there the slow files, small
 * ones mostly, started last, and one worker ran them alone after the other had finished. This
 * sequencer puts SLOW_FILES first in each project whatever the cache holds, then the rest in
 * vitest's order; projects and their groupOrder keep vitest's order too.
 */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const groups = new Map<string, number>();
    const keyed = sorted.map((file, index) => {
      const group = `${file.project.config.sequence.groupOrder}:${file.project.name}`;
      if (!groups.has(group)) groups.set(group, groups.size);
      const slow = SLOW_FILES.indexOf(relative(root, file.moduleId));
      return { file, group: groups.get(group) ?? 0, rank: slow === -1 ? SLOW_FILES.length : slow, index };
    });
    keyed.sort((a, b) => a.group - b.group || a.rank - b.rank || a.index - b.index);
    return keyed.map(({ file }) => file);
  }
}
