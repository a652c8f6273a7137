import { parseArgs } from 'node:util';
import { startGeneratedRemote, startSampleRemote } from './index.js';

const { values } = parseArgs({
  // `pnpm start -- --port 4001` may pass the `--` through.
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    port: { type: 'string', default: '4001' },
    host: { type: 'string', default: '127.0.0.1' },
    name: { type: 'string', default: 'sample' },
    types: { type: 'string' },
    prefix: { type: 'string' },
  },
  allowPositionals: true,
});

const port = Number(values.port);
const remote =
  values.types === undefined
    ? await startSampleRemote({ port, host: values.host, name: values.name })
    : await startGeneratedRemote({ port, host: values.host, types: Number(values.types), prefix: values.prefix ?? '' });
const what = values.types === undefined ? `sample remote "${values.name}"` : `generated remote (${values.types} types)`;
console.log(`${what} listening on ${remote.url} (WebSocket ${remote.wsUrl})`);

const stop = () => {
  void remote.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
