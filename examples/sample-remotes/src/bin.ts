import { parseArgs } from 'node:util';
import { COMMERCE_SCHEMAS, startCommerceRemote, startGeneratedRemote, startSampleRemote } from './index.js';

const { values } = parseArgs({
  // `pnpm start -- --port 4001` may pass the `--` through.
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    port: { type: 'string', default: '4001' },
    host: { type: 'string', default: '127.0.0.1' },
    name: { type: 'string', default: 'sample' },
    types: { type: 'string' },
    prefix: { type: 'string' },
    schema: { type: 'string' },
  },
  allowPositionals: true,
});

const port = Number(values.port);
const commerce = values.schema;
if (commerce !== undefined && !Object.hasOwn(COMMERCE_SCHEMAS, commerce)) {
  console.error(`--schema must be one of ${Object.keys(COMMERCE_SCHEMAS).join(', ')}, but got "${commerce}"`);
  process.exit(1);
}
const remote =
  commerce !== undefined
    ? await startCommerceRemote(commerce as keyof typeof COMMERCE_SCHEMAS, { port, host: values.host })
    : values.types === undefined
      ? await startSampleRemote({ port, host: values.host, name: values.name })
      : await startGeneratedRemote({ port, host: values.host, types: Number(values.types), prefix: values.prefix ?? '' });
const what =
  commerce !== undefined
    ? `${commerce} remote`
    : values.types === undefined
      ? `sample remote "${values.name}"`
      : `generated remote (${values.types} types)`;
console.log(`${what} listening on ${remote.url} (WebSocket ${remote.wsUrl})`);

const stop = () => {
  void remote.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
