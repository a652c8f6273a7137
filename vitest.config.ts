import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CommonJS (`main`) and ESM (`module`). Node, and so Yoga and @graphql-tools
    // loaded from node_modules, takes the CommonJS build; Vite would hand our TypeScript sources
    // the ESM one, and a schema built by one realm is refused by the other. One realm, as in Node.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    projects: [
      { extends: true, test: { name: 'all', include: ['packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts'] } },
      {
        // The server's tests once more with every request through Yoga's pipeline: the direct lane
        // (answers of remotes alone before Yoga) and Yoga's own path must pass the same tests.
        extends: true,
        test: {
          name: 'server without the direct lane',
          include: ['packages/server/test/**/*.test.ts'],
          // Nothing in these reaches the lane (configuration, documents, the browser pages, the lane's own
          // test, the lock-down building blocks' unit tests).
          exclude: [
            '**/config.test.ts',
            '**/depth-limit.test.ts',
            '**/docs.test.ts',
            '**/graphiql.test.ts',
            '**/direct-lane.test.ts',
            '**/console.test.ts',
            '**/console-browser.test.ts',
            '**/test/lockdown/**',
          ],
          env: { SVC_GRAPHQL_DIRECT_LANE: 'off' },
        },
      },
    ],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Tests start real servers on port 0; two workers match the 2-core CI machine.
    pool: 'forks',
    maxWorkers: 2,
  },
});
