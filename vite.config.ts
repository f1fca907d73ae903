/** Vite builds the renderer (renderer/) into dist/renderer, with relative paths so Electron's file:// load works too. */
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react()],
  build: { outDir: '../dist/renderer', emptyOutDir: true, chunkSizeWarningLimit: 2000 },
});
