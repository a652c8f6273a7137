import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The server serves the build at /console: every asset URL starts there, and files under
// assets/ carry a content hash in their name (cached for good by the browser).
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Browsers that run the console support module preloading: no polyfill in the entry.
    modulePreload: { polyfill: false },
    // No source maps in what the server ships; Monaco's chunk is large by nature.
    sourcemap: false,
    chunkSizeWarningLimit: 4096,
    // Everything as files: a `data:` URL would need a wider Content-Security-Policy for no gain.
    assetsInlineLimit: 0,
    rolldownOptions: {
      onwarn(warning, warn) {
        // GraphiQL's modules start with "use no memo" (for the React compiler), which means
        // nothing to a bundle: not worth a warning per module on every build.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  worker: { format: 'es' },
  // `pnpm --filter @svc-graphql/console dev`: the page's calls go to a running server.
  server: {
    proxy: { '/v1': { target: process.env['SVC_GRAPHQL_URL'] ?? 'http://127.0.0.1:8080', ws: true } },
  },
});
