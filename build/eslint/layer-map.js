/**
 * The allow-map of `manifold/layering` (build/eslint/layering-rule.js), in one place: the process layers
 * (DESIGN §1) and the sub-layers of core. Each entry names what it may import: other layers (or, inside
 * core, other sub-layers), and the npm packages on its allow-list; anything not listed is refused.
 * A file belongs to the first entry whose path holds it (a path names a folder, or a file without its
 * extension, or both: `tokenizer` is tokenizer.ts and a tokenizer/ folder). Folders not listed (test/,
 * e2e/, bench/, root config files) are not restricted. Keep it true: a new import that the map does not
 * allow fails lint until the map says why it may.
 */

/**
 * Core's sub-layers, paths relative to core/, listed bottom-up. Every file of core must be in
 * one; an import between two of them must be allowed here, so the map is also the proof that core has
 * no import circle between its parts (the unit test checks the map is acyclic).
 * @type {import('./layer-map.js').Sublayer[]}
 */
export const coreSublayers = [
  // Leaves: they import nothing else of core.
  // Routing is pure: the policies, their costs and the dispatch plan; nothing else of core.
  { name: 'router', allow: [] },
  // The run config (its routing names are the router's registry).
  { name: 'config', allow: ['router'], packages: ['zod'] },
  { name: 'logging', allow: [], packages: ['pino', 'rotating-file-stream'] },
  { name: 'engine', allow: [] },
  { name: 'cpu', allow: [] },
  { name: 'gpu', allow: [] },
  { name: 'throughput-meter', allow: [] },
  // The bounded time series core samples by itself (the dashboard's history, backfilled on connect).
  { name: 'sample-series', allow: [] },
  // The request metrics (prom-client): what the dispatcher and the workstation observe of each request.
  { name: 'metrics', allow: [], packages: ['prom-client'] },
  { name: 'process-alive', allow: [] },
  // What the front and the chat have open, so a graceful stop can finish or cut each in its own format.
  { name: 'open-generations', allow: [] },
  // A generic helper that happens to live beside its first user; models/ uses it too.
  { name: 'chat/atomic-file', allow: ['process-alive'] },
  // The control token kept in the data dir (written atomically).
  { name: 'control-token', allow: ['chat/atomic-file'] },
  // The request queue: routing decisions only; replicas/ drives it, never the reverse.
  { name: 'queue', allow: ['router'] },
  { name: 'rebuild', allow: ['engine'] },
  // What every supervised child's supervisor shares: its life and exit reasons, the local supervisors' base, the watchdog, the log.
  { name: 'supervisor', allow: ['engine', 'logging'] },
  // What every engine kind implements (ReplicaDriver and its capabilities, EngineKind), declared below the kinds.
  { name: 'kind', allow: ['engine', 'config', 'logging', 'supervisor', 'rebuild'] },
  // The link to a remote replica and its client: a server on another machine driven as a local engine is.
  { name: 'remote', allow: ['engine', 'supervisor', 'logging', 'config', 'kind'], packages: ['zod'] },
  // Engine kind `node-llama-cpp`: the engine child's supervisor.
  { name: 'node-llama-cpp', allow: ['engine', 'supervisor', 'logging', 'kind'] },
  // A replica's llama-server child (engine kind `llama-server`): supervised as the engine child is, spoken to by the remote client;
  // its slot files lent to the other llama-server replicas (kept by block hashes, the router's); and its install from llama.cpp's
  // releases (download with ipull, unpack with tar / extract-zip).
  { name: 'llama-server', allow: ['engine', 'supervisor', 'remote', 'logging', 'config', 'arena', 'router', 'kind', 'rebuild'], packages: ['zod', 'ipull', 'tar', 'extract-zip'] },
  // The registry of engine kinds (one line each), the driver of each replica, and the machine's default kind.
  { name: 'engine-kinds', allow: ['kind', 'config', 'node-llama-cpp', 'llama-server', 'remote', 'supervisor'] },
  // The client and supervisor of the tokenizer child (its exit reasons are the engine supervisor's);
  // no native code that reads a model file runs in core.
  { name: 'tokenizer', allow: ['engine', 'supervisor', 'logging'] },
  // The replica set sees engines only through kind/ and engine-kinds/ (remote: the model every peer must serve).
  { name: 'replicas', allow: ['router', 'queue', 'engine', 'supervisor', 'kind', 'engine-kinds', 'remote', 'rebuild', 'cpu', 'config', 'gpu', 'logging', 'metrics'] },
  { name: 'arena', allow: ['logging', 'process-alive'] },
  // The one file of core that imports node-llama-cpp: its model downloader moves bytes and reads no model (no native code runs).
  { name: 'models/model-download', allow: [], packages: ['node-llama-cpp'] },
  { name: 'models', allow: ['arena', 'chat/atomic-file', 'models/model-download'], packages: ['zod'] },
  // The chat sees the workstation only through its ChatBackend interface.
  { name: 'chat', allow: ['chat/atomic-file', 'open-generations'] },
  { name: 'workstation', allow: ['arena', 'chat', 'config', 'engine', 'gpu', 'logging', 'models', 'queue', 'remote', 'replicas', 'throughput-meter', 'sample-series', 'tokenizer', 'metrics'] },
  { name: 'contract-handlers', allow: ['workstation', 'config', 'models', 'logging', 'router'] },
  { name: 'contract-events', allow: ['workstation', 'logging'] },
  // Core's half of the Electron shell: the window policy and the IPC bridge (Electron's objects come in as interfaces).
  { name: 'shell', allow: ['contract-handlers', 'contract-events', 'engine', 'logging'] },
  // The HTTP front may use the workstation and anything below it; only serve.ts imports it.
  {
    name: 'http',
    allow: [
      'config', 'logging', 'engine', 'cpu', 'gpu', 'throughput-meter', 'tokenizer', 'chat/atomic-file', 'router', 'queue', 'rebuild',
      'supervisor', 'llama-server', 'replicas', 'arena', 'models', 'chat', 'workstation', 'contract-handlers', 'contract-events', 'open-generations', 'metrics',
    ],
    // prom-client: /metrics reads the workstation's state into gauges at each scrape.
    packages: ['ws', 'zod', 'prom-client'],
  },
  { name: 'serve', allow: ['http', 'control-token', 'workstation', 'arena', 'config', 'engine', 'engine-kinds', 'gpu', 'replicas', 'logging', 'open-generations'] },
];

/**
 * The process layers. `node`: whether Node builtins may be imported; `packages`: the npm packages the
 * layer may import (an allow-list); `sublayers`: the map inside the layer.
 * @type {import('./layer-map.js').Layer[]}
 */
export const layers = [
  // esbuild: child-bundle.ts bundles the children, for the app's build and for the plain-Node spawn; a dev
  // dependency, so it is required lazily there and nothing the packaged app runs loads it.
  { name: 'common/node', folder: 'common/node', allow: ['common'], node: true, packages: ['zod', 'esbuild'] },
  { name: 'common', folder: 'common', allow: [], node: false, packages: ['zod'] },
  {
    name: 'core',
    folder: 'core',
    allow: ['common', 'common/node', 'native'],
    node: true,
    // node-llama-cpp only for its model downloader (core/models/model-download only, by its sub-layer list):
    // native code that reads model files runs only in the children (engine-bin/).
    // ipull, tar, extract-zip: the llama-server release install (core/llama-server only, by its sub-layer list).
    packages: ['zod', 'ws', 'pino', 'rotating-file-stream', 'prom-client', 'ipull', 'tar', 'extract-zip', 'node-llama-cpp'],
    sublayers: coreSublayers,
  },
  // The command lines (`manifold`, `npm run serve`, `npm run gpu-info`) on commander; build: the test model `manifold calibrate` makes.
  { name: 'cli', folder: 'cli', allow: ['core', 'common', 'build'], node: true, packages: ['commander'] },
  // The Electron shell: the window, the preload bridge, the utility-process children.
  { name: 'shell', folder: 'electron', allow: ['core', 'common', 'build'], node: true, packages: ['electron'] },
  { name: 'renderer', folder: 'renderer', allow: ['common'], node: false, packages: ['react', 'react-dom', 'zustand', 'recharts'] },
  { name: 'engine-bin', folder: 'engine-bin', allow: ['common', 'common/node'], node: true, packages: ['node-llama-cpp', 'zod'] },
  { name: 'native', folder: 'native', allow: ['common'], node: true, packages: ['koffi', 'zod'] },
  { name: 'build', folder: 'build', allow: ['common', 'common/node'], node: true, packages: ['esbuild'] },
];
