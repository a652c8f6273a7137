import { getIntrospectionQuery, graphqlSync, buildClientSchema, validateSchema } from 'graphql';
import { createGeneratedSchema } from '@svc-graphql/sample-remotes';
import { buildRemoteSchema, publicRemoteSchema } from './src/remote-schema.js';
import { compose, createPlaceholderSchema } from './src/compose.js';
const N = 5000;
const intro = graphqlSync({ schema: createGeneratedSchema({ types: N }), source: getIntrospectionQuery() });
const text = JSON.stringify(intro);
for (let i = 0; i < 3; i++) {
  let t = performance.now(); const lap = (l: string) => { const n = performance.now(); console.log(l, Math.round(n - t)); t = n; };
  const parsed = JSON.parse(text); lap('parse');
  const s = buildClientSchema(parsed.data); lap('buildClientSchema');
  validateSchema(s); lap('validate');
  const p = publicRemoteSchema(s, (() => ({ data: null })) as any, undefined); lap('attach');
  const c = compose(createPlaceholderSchema(), true, [{ name: 'g', key: '', client: {} as any, introspection: intro, public: p, forwardable: true }]); lap('compose');
}
const t0 = performance.now(); graphqlSync({ schema: createGeneratedSchema({ types: N }), source: getIntrospectionQuery() }); console.log('remote introspection exec', Math.round(performance.now() - t0));
