/**
 * Runs the example app:
 *
 *   JWT_SECRET='{"type":"HS256","key":"a-shared-secret-of-at-least-32-characters"}' pnpm example:embed
 */
import { createServer } from 'node:http';
import { createApp } from './app.js';

const jwt = process.env['JWT_SECRET'];
if (!jwt) {
  process.stderr.write('JWT_SECRET: set it to a JWT configuration, e.g. {"type":"HS256","key":"<32+ characters>"}\n');
  process.exit(1);
}
const port = Number(process.env['PORT'] ?? 4000);
const yoga = createApp(jwt);
createServer(yoga).listen(port, '127.0.0.1', () => {
  process.stdout.write(`example listening on http://127.0.0.1:${port}${yoga.graphqlEndpoint}\n`);
});
