import { startGeneratedRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry } from './src/index.js';
for (const types of [100, 1000, 5000]) {
  const remote = await startGeneratedRemote({ types });
  const registry = createRemoteSchemaRegistry({ logger: { debug: console.log, info() {}, warn: console.warn, error: console.error } });
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const plan = await registry.plan([{ name: 'g', definition: { url: remote.url } }], { reload: 'all' });
    const t1 = performance.now();
    registry.commit(plan);
    console.log(types, 'plan', Math.round(t1 - t0), 'ms', ((t1 - t0) / types).toFixed(3), 'ms/type', plan.problems);
  }
  await registry.dispose(); await remote.close();
}
