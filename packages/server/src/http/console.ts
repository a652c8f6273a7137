import { readdir, readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative, sep } from 'node:path';
import type { Plugin } from 'graphql-yoga';
import { ServerOptionError } from '../errors.js';
import { IMMUTABLE_CACHE_CONTROL, staticFile, staticFileResponse, type StaticFile } from './static-files.js';

/** Where the console is served. */
export const CONSOLE_PATH = '/console';

/**
 * The console page's Content-Security-Policy: its scripts, styles, workers, fonts and requests
 * come from this server only (`connect-src 'self'` covers the GraphQL WebSocket to the same host);
 * no inline script; no frames around it (it holds an admin secret), no forms posted elsewhere, no
 * `<base>`. Styles may be inline: React sets style attributes and GraphiQL's editor adds `<style>`
 * elements as it goes. Icons and fonts of GraphiQL's style sheet are `data:` URLs.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.ttf': 'font/ttf',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** The built console: every file of the build by its path under `/console/`. */
export interface ConsoleFiles {
  readonly root: string;
  readonly files: ReadonlyMap<string, StaticFile>;
}

/** The console's build of the installed `@svc-graphql/console` package (`dist/`, made by `vite build`). */
export function installedConsoleRoot(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@svc-graphql/console/package.json')), 'dist');
}

/** Thrown when the console is asked for but its build is missing. */
export class ConsoleNotBuiltError extends Error {
  override readonly name = 'ConsoleNotBuiltError';
}

/**
 * The console's build at `root` (`consoleRoot`), else that of the installed package: a missing
 * build is a {@link ServerOptionError} naming the option that asked for it.
 */
export async function loadConsole(root: string | undefined): Promise<ConsoleFiles> {
  try {
    return await loadConsoleFiles(root ?? installedConsoleRoot());
  } catch (error) {
    if (!(error instanceof ConsoleNotBuiltError)) throw error;
    throw new ServerOptionError(root !== undefined ? 'consoleRoot' : 'enableConsole', 'ERR_INVALID_OPTION', error.message, { cause: error });
  }
}

/**
 * Reads the console's build into memory (a few MB, once, when the server starts): files are then
 * served without touching the disk, and nothing outside the build can ever be named by a URL.
 */
export async function loadConsoleFiles(root: string): Promise<ConsoleFiles> {
  const index = join(root, 'index.html');
  try {
    await stat(index);
  } catch {
    throw new ConsoleNotBuiltError(`the console is not built (${index} is missing): run \`pnpm --filter @svc-graphql/console build\``);
  }
  const files = new Map<string, StaticFile>();
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        await walk(path);
        continue;
      }
      const type = TYPES[extname(entry.name).toLowerCase()];
      // Source maps and anything the server has no type for stay on disk.
      if (!entry.isFile() || type === undefined) continue;
      files.set(relative(root, path).split(sep).join('/'), staticFile(type, await readFile(path)));
    }
  };
  await walk(root);
  return { root, files };
}

/** Files under `assets/` carry a hash of their contents in their name (Vite's build). */
function isHashedAsset(name: string): boolean {
  return name.startsWith('assets/');
}

/**
 * Serves the console at `/console`: its files, hashed assets cached for good, `index.html` (and any
 * client-side route under `/console/`, which the page itself resolves) revalidated every time,
 * under a strict Content-Security-Policy, gzipped when the browser accepts it. Answered before any
 * authentication: the page is public and holds no secret; it asks for the admin secret and sends
 * it with its own requests, like any client.
 */
export function useConsole(built: ConsoleFiles): Plugin {
  const index = built.files.get('index.html');
  if (!index) throw new ConsoleNotBuiltError(`the console build in ${built.root} has no index.html`);
  return {
    async onRequest({ request, url, fetchAPI, endResponse }) {
      const { pathname } = url;
      if (pathname !== CONSOLE_PATH && !pathname.startsWith(`${CONSOLE_PATH}/`)) return;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        endResponse(new fetchAPI.Response(null, { status: 405, headers: { allow: 'GET, HEAD' } }));
        return;
      }
      const name = pathname.slice(CONSOLE_PATH.length + 1);
      const file = name === '' ? undefined : built.files.get(name);
      if (file && name !== 'index.html') {
        const cacheControl = isHashedAsset(name) ? IMMUTABLE_CACHE_CONTROL : 'no-cache';
        endResponse(await staticFileResponse(request, fetchAPI.Response, file, { 'cache-control': cacheControl }));
        return;
      }
      if (isHashedAsset(name)) {
        // An asset of another build (the page was loaded before an upgrade): never answered with HTML.
        endResponse(new fetchAPI.Response('Not Found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-cache' } }));
        return;
      }
      endResponse(
        await staticFileResponse(request, fetchAPI.Response, index, {
          // The page names the assets of this build: asked for again after an upgrade.
          'cache-control': 'no-cache',
          'content-security-policy': CONSOLE_CONTENT_SECURITY_POLICY,
          'referrer-policy': 'no-referrer',
          'cross-origin-opener-policy': 'same-origin',
        }),
      );
    },
  };
}
