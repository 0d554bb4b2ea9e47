// Vite builds this example against the installed draftsmith package: nothing special is
// needed for the worker and the wasm, which the package resolves relative to itself.
import { defineConfig } from 'vite';

export default defineConfig({
  // Relative URLs: dist/ works from any path of any static server.
  base: './',
});
