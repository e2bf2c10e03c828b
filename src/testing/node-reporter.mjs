// Written by wfx into its report directory and loaded by `node --test`
// through NODE_OPTIONS (`--test-reporter=<this file>`).
//
// Node's own TAP reporter, with one addition: before every test result a
// diagnostic line `# wfx-location: <file>:<line>:<column>` at the test's
// nesting. Node's TAP names the file only for failing tests; wfx needs the
// file of every test so that a test has the same id whether it passes or
// fails, and so that two files with equally named tests stay apart.
import { tap } from 'node:test/reporters';

async function* located(source) {
  for await (const event of source) {
    const { type, data } = event;
    if ((type === 'test:pass' || type === 'test:fail') && data && data.file) {
      yield {
        type: 'test:diagnostic',
        data: {
          nesting: data.nesting,
          file: data.file,
          message: `wfx-location: ${data.file}:${data.line}:${data.column}`,
        },
      };
    }
    yield event;
  }
}

export default async function* wfxTap(source) {
  yield* tap(located(source));
}
