import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The dashboard and hosted pages. Built into dist/web and served by the service itself under
 * /dashboard/ (assets) and at the hosted paths (/login, /reset-password, …), so every URL is on the
 * service's origin and the API needs no CORS.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/web', import.meta.url)),
    emptyOutDir: true,
    // Nothing inlined as data: URIs, so the CSP can keep img-src and font-src to 'self' (and data: for the QR code only).
    assetsInlineLimit: 0,
  },
});
