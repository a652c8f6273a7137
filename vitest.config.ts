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
    include: ['packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Tests start real servers on port 0; two workers match the 2-core CI machine.
    pool: 'forks',
    maxWorkers: 2,
  },
});
