import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Tests start real servers on port 0; two workers match the 2-core CI machine.
    pool: 'forks',
    maxWorkers: 2,
  },
});
