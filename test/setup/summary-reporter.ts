import type { Reporter, TestModule, TestSuite } from 'vitest/node';

/**
 * Prints, as the very last line of a run, `N passed, N failed` (and `, N skipped` when any), counted over tests.
 * A file or suite that fails outside any test (import error, failing beforeAll/afterAll) counts as one failure,
 * as does each unhandled error, so a broken run can never print `0 failed`.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    const countOwnErrors = (node: TestModule | TestSuite) => {
      if (node.errors().length > 0) failed += 1;
      for (const suite of node.children.allSuites()) if (suite.errors().length > 0) failed += 1;
    };
    for (const module of testModules) {
      countOwnErrors(module);
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}
