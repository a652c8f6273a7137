import { readFileSync } from 'node:fs';

/** The server package's own version (also right when run from `dist/`). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
