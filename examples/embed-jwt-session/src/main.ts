/**
 * Runs the example app:
 *
 *   JWT_SECRET='{"type":"HS256","key":"a-shared-secret-of-at-least-32-characters"}' pnpm example:embed
 *
 * REMOTE_URL: the remote's GraphQL endpoint; without it the sample remote is started in this
 * process on a free port. PORT: the app's port (default 4000).
 */
import { createServer } from 'node:http';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createApp } from './app.js';

const jwt = process.env['JWT_SECRET'];
if (!jwt) {
  process.stderr.write('JWT_SECRET: set it to a JWT configuration, e.g. {"type":"HS256","key":"<32+ characters>"}\n');
  process.exit(1);
}
const port = Number(process.env['PORT'] ?? 4000);

let sample: RunningRemote | undefined;
let remoteUrl = process.env['REMOTE_URL'];
if (!remoteUrl) {
  sample = await startSampleRemote();
  remoteUrl = sample.url;
  process.stdout.write(`sample remote listening on ${remoteUrl}\n`);
}

const app = await createApp(jwt, { remoteUrl });
for (const problem of app.problems) {
  process.stderr.write(`remote "${problem.name}"${problem.role ? `, role "${problem.role}"` : ''}: ${problem.message}\n`);
}
const server = createServer(app.yoga);
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`example listening on http://127.0.0.1:${port}${app.yoga.graphqlEndpoint}\n`);
});

const stop = () => {
  server.closeAllConnections();
  server.close();
  void Promise.all([app.dispose(), sample?.close()]).then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
