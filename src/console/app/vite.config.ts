// The console's build (`npm run build`): this directory is the root, the output dist/console, served by
// the gateway at /console (src/operations/meta/console.ts). Hashed names under assets/ are cached as
// immutable there; nothing is inlined into the page, so its Content-Security-Policy needs no
// 'unsafe-inline'.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: '../../../dist/console',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
    modulePreload: { polyfill: false },
  },
});
