/**
 * The supervisor of one replica's `llama-server` child (engine kind `llama-server`; a ReplicaDriver,
 * kind/replica-driver.ts): spawns the binary with the replica's env (card visibility,
 * the config's and the entry's env) on a Unix socket in its private folder (llama-server-folder.ts),
 * pins it to the replica's cores, waits for its `/health`, reads what it loaded (`/props`, `/v1/models`:
 * llama-server-ready-info.ts), and speaks to it through the remote client's llama-server dialect
 * (remote/remote-client.ts). While ready it polls `/health` every heartbeat; no 200 for the hang bound
 * means hung: SIGKILL (core's own stalls do not count, as for the engine child). Stop is SIGTERM, then
 * SIGKILL after the grace. Its output lines are logged prefixed `[replica N pid]`. Each start is a new
 * child in the same folder; healing belongs to the replica set, as for the engine child. A live resize
 * restarts the child quietly (`restartWith`: no exit or ready event between the two children, so the set
 * keeps the replica in maintenance).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import type { LogLevel } from '../../common/contract.js';
import { loadOptionsSchema, type LoadOptionsInput, type ReadyInfo } from '../../common/engine-protocol.js';
import { readModelFileHeader } from '../../common/node/gguf-file.js';
import { metadataText, type GgufHeader } from '../../common/gguf/header-reader.js';
import type { HostPromptCacheLimits, PrefixTier } from '../../common/prefix-cache.js';
import type { PoolSizes } from '../../common/rebuild.js';
import type { ReplicaDriver, Rebuilder } from '../kind/replica-driver.js';
import { LlamaServerRebuild } from './llama-server-rebuild.js';
import { kvCacheBytes } from '../arena/engine-memory.js';
import { DEFAULT_REMOTE_TIMEOUTS, type RemoteTimeouts } from '../config/remote-plan.js';
import { forwardLines, OWN_GROUP, ownChild } from '../engine/engine-process.js';
import { llamaServerDialect } from '../remote/llama-server-dialect.js';
import { getPeerJson, type PeerAddress } from '../remote/peer-http.js';
import { describePeer } from '../remote/peer-probe.js';
import { RemoteClient } from '../remote/remote-client.js';
import type { ExitReason } from '../supervisor/child-life.js';
import { pinChild } from '../supervisor/child-pinning.js';
import { LocalSupervisor, type LocalSupervisorOptions } from '../supervisor/local-supervisor.js';
import { llamaServerArgs, promptCacheLimits } from './llama-server-args.js';
import { listenIn, makeChildFolder, slotFolderIn } from './llama-server-folder.js';
import { readyInfoOf } from './llama-server-ready-info.js';
import { restoreSlotFile } from './slot-file-restore.js';
import { SlotFileShelf } from './slot-file-shelf.js';

export interface LlamaServerSupervisorOptions extends LocalSupervisorOptions {
  /** The `llama-server` binary (common/node/llama-server-binary.ts finds it). */
  binary: string;
  /** Its host-memory prompt cache (`--cache-ram`, MiB; 0: off): `cacheRamMib` of the run config's prefix-cache budgets. */
  cacheRamMib: number;
  /**
   * The byte budget of the slot files it lends to the other llama-server replicas of its model and layout
   * (slot-file-shelf.ts; `engine.prefixCache.diskBytes`); 0: it lends none and borrows none.
   */
  slotFileBytes: number;
  /** The client's bounds on each generation (connect, first token, idle). */
  timeouts?: RemoteTimeouts;
}

/** The last lines of output kept for a failed start's message. */
const OUTPUT_TAIL_LINES = 12;
const READY_POLL_MS = 100;

/** A llama-server line's level: errors and warnings as it words them; the rest (start-up, per-request timings) is debug. */
function serverLineLevel(line: string): LogLevel {
  return /\b(error|failed|fatal|abort)/i.test(line) ? 'error' : /\bwarn/i.test(line) ? 'warn' : 'debug';
}

export class LlamaServerSupervisor extends LocalSupervisor implements ReplicaDriver {
  /** Another llama-server child's RAM-tier entries are its own prompt cache, which cannot be read from outside. */
  readonly borrowTiers = ['disk'] as const;
  private child: ChildProcess | undefined;
  private current: RemoteClient | undefined;
  private readonly output: string[] = [];
  /** The child's own folder (0700): its socket, and its slot folder `slots/`. */
  private folder: string | undefined;
  /** While a live resize restarts the child: its exits and readiness are not announced. */
  private quiet = false;
  /** The exit of a quiet restart that did not come up, announced by `announceDown`. */
  private heldExit: ExitReason | undefined;
  /** The running child's host-memory prompt cache, which core's index mirrors; null before the first start. */
  private promptCacheLimits: HostPromptCacheLimits | null = null;
  /** The slot files its children lend, in its slot folder; null before the first start and when it lends none. */
  private shelf: SlotFileShelf | null = null;

  constructor(protected override readonly options: LlamaServerSupervisorOptions) {
    super(options);
  }

  /** The ready server's client; undefined unless ready. */
  get client(): RemoteClient | undefined {
    return this.stateValue === 'ready' ? this.current : undefined;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Where the child saves and restores slot files (its `--slot-save-path`); created by the first start. */
  get slotFolder(): string | undefined {
    return this.folder === undefined ? undefined : slotFolderIn(this.folder);
  }

  /** What the running child's host-memory prompt cache may hold (`--cache-ram`); null before the first start, and when the cache is off. */
  get promptCache(): HostPromptCacheLimits | null {
    return this.promptCacheLimits;
  }

  /** The slot files the ready child lends (saved after its replies); null when it lends none. */
  get slotFiles(): SlotFileShelf | null {
    return this.stateValue === 'ready' ? this.shelf : null;
  }

  /** A resize restarts the child at the new sizes (llama-server-rebuild.ts). */
  rebuilder(sizes: PoolSizes): Rebuilder {
    const rebuild = new LlamaServerRebuild(this, sizes);
    return { client: rebuild, isEngineLost: () => rebuild.isEngineLost() };
  }

  /** Its prompt cache as the RAM tier and the slot files it lends as the disk tier; null when it keeps neither. */
  prefixTierBudgets(): Record<PrefixTier, number> | null {
    const ram = this.promptCacheLimits?.budgetBytes ?? 0;
    const disk = this.slotFiles?.budgetBytes ?? 0;
    return ram || disk ? { ram, disk } : null;
  }

  /** True when the child is gone and its exit was announced (the replica set heals it). */
  get lost(): boolean {
    return this.stateValue === 'exited' && this.heldExit === undefined;
  }

  /** Spawns a new server and waits until it serves; rejects (with the child gone) when it does not come up. */
  async start(): Promise<ReadyInfo> {
    this.beginStart();
    this.output.length = 0;
    const startedAt = performance.now();
    this.folder ??= await makeChildFolder(this.options.replica);
    const slotFolder = slotFolderIn(this.folder);
    const lends = this.options.slotFileBytes > 0;
    if (lends) this.shelf ??= new SlotFileShelf(slotFolder, this.options.slotFileBytes);
    // The last child's files belong to its layout, which a resize may have changed; the index forgot them with it.
    await this.shelf?.clear();
    const { listen, peer } = await listenIn(this.folder);
    const child = ownChild(
      spawn(this.options.binary, llamaServerArgs(this.load, listen, slotFolder, this.options.cacheRamMib), {
        env: { ...process.env, ...this.options.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        ...OWN_GROUP,
      }),
    );
    this.child = child;
    const onLine = (line: string): void => {
      if (!line.trim()) return;
      this.output.push(line);
      this.output.splice(0, Math.max(0, this.output.length - OUTPUT_TAIL_LINES));
      this.log(line, serverLineLevel(line));
    };
    forwardLines(child.stdout, [onLine]);
    forwardLines(child.stderr, [onLine]);
    const exited = new Promise<void>((resolve) => {
      const gone = (code: number | null, signal: NodeJS.Signals | null): void => {
        this.onChildExit(child, code, signal);
        resolve();
      };
      child.once('close', gone);
      child.once('error', (error) => {
        onLine(`spawn error: ${error.message}`);
        // A binary that could not be started has no process to close.
        if (child.pid === undefined) gone(null, null);
      });
    });
    this.log(`starting llama-server on ${peer.url}`);
    const pin = (): Promise<void> => pinChild(this.options.pinning, child.pid);
    const pinnedAtSpawn = pin();
    // Read while the child loads, not after: the header's KV shape, for the prompt cache's limits (never rejects).
    // The GGUF's header, read once per start: the prompt cache's KV shape and the architecture llama-server's metadata leaves out.
    const header = readModelFileHeader(this.load.modelPath).catch(() => null);
    const cacheLimits = promptCacheLimitsOf(this.load, this.options.cacheRamMib, header);
    try {
      await this.waitHealthy(child, peer, startedAt);
      const description = await describePeer(peer, 'llama-server', this.connectMs);
      if (this.child !== child || child.exitCode !== null || child.signalCode !== null) throw new Error('llama-server exited while loading');
      await pinnedAtSpawn;
      await pin();
      const read = await header;
      const architecture = read ? metadataText(read, 'general.architecture') : null;
      const info = readyInfoOf(description, this.load, performance.now() - startedAt, lends ? slotFolder : null, architecture);
      this.promptCacheLimits = await cacheLimits;
      const client: RemoteClient = new RemoteClient({
        peer,
        dialect: llamaServerDialect,
        model: null,
        contextSize: info.sizes.contextSize,
        timeouts: this.options.timeouts ?? DEFAULT_REMOTE_TIMEOUTS,
        ...(lends ? { restoreBorrowed: (borrow, slot) => restoreSlotFile(client, borrow, slot, slotFolder) } : {}),
      });
      this.current = client;
      this.shelf?.serve(client);
      this.stateValue = 'ready';
      this.watch(
        () => getPeerJson(peer, '/health', this.timing.hangTimeoutMs).then((answer) => answer.status === 200),
        () => child.kill('SIGKILL'),
        '/health silent',
      );
      this.log(`ready: ${info.sizes.slots} slots × ${info.sizes.contextSize} tokens on llama-server (${peer.url}) in ${Math.round(info.loadMs)} ms`);
      if (!this.quiet) this.emit('ready', info);
      return info;
    } catch (error) {
      this.startFailed(error);
      child.kill('SIGKILL');
      await exited;
      throw error;
    }
  }

  private get connectMs(): number {
    return (this.options.timeouts ?? DEFAULT_REMOTE_TIMEOUTS).connectMs;
  }

  /** Polls `/health` until 200 (llama-server answers 503 while it loads); fails when the child exits or the load bound passes. */
  private async waitHealthy(child: ChildProcess, peer: PeerAddress, startedAt: number): Promise<void> {
    for (;;) {
      if (this.child !== child || child.exitCode !== null || child.signalCode !== null || this.life.stopRequested) {
        throw new Error(`llama-server exited before it was ready${this.output.length ? `; its last words:\n${this.output.join('\n')}` : ''}`);
      }
      const answer = await getPeerJson(peer, '/health', this.connectMs).catch(() => null);
      if (answer?.status === 200) return;
      if (performance.now() - startedAt > this.timing.loadTimeoutMs) throw new Error(`loading took longer than ${this.timing.loadTimeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
    }
  }

  /**
   * Stops the child and starts another that loads `load` (a live resize), with no exit or ready event in
   * between; rejects when the new one does not come up (no child then: its exit is held for `announceDown`).
   */
  async restartWith(load: LoadOptionsInput): Promise<ReadyInfo> {
    this.quiet = true;
    try {
      await this.stop();
      this.heldExit = undefined;
      this.load = load;
      return await this.start();
    } finally {
      this.quiet = false;
    }
  }

  /** After a quiet restart that did not come up: announces the child's exit, so the replica set heals it. */
  announceDown(): void {
    const exit = this.heldExit;
    if (!exit || this.stateValue !== 'exited') return;
    this.heldExit = undefined;
    this.emit('exit', exit);
  }

  /** SIGTERM, then SIGKILL after the grace period; resolves once the server has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.life.stopRequested = true;
    this.stateValue = 'stopping';
    const gone = new Promise((resolve) => child.once('close', resolve));
    const grace = setTimeout(() => child.kill('SIGKILL'), this.timing.stopGraceMs);
    child.kill('SIGTERM');
    try {
      await gone;
    } finally {
      clearTimeout(grace);
    }
  }

  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  private onChildExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child || this.stateValue === 'exited') return;
    // Its generations are lost with it now, not at their timeouts (those without a token fail over).
    this.current?.abandon('the llama-server process exited', 'all');
    this.current = undefined;
    const codes = `code ${code ?? 'none'}, signal ${signal ?? 'none'}`;
    const loading =
      this.stateValue === 'starting'
        ? `llama-server exited while loading (${codes})${this.output.length ? `; its last words:\n${this.output.join('\n')}` : ''}`
        : undefined;
    const reason = this.exited(this.life.exitReason({ kind: 'crashed', code, signal }, loading));
    if (this.quiet) this.heldExit = reason;
    else this.emit('exit', reason);
  }

  /** Removes the child's folder and writes out and closes the log file (after the last stop). */
  override async close(): Promise<void> {
    const folder = this.folder;
    this.folder = undefined;
    if (folder) await rm(folder, { recursive: true, force: true });
    await super.close();
  }
}

/**
 * The child's prompt-cache limits (null when it is off), one token's KV bytes read from the model's header (null when it cannot be read or lacks the
 * shape); never rejects.
 */
async function promptCacheLimitsOf(input: LoadOptionsInput, ramMib: number, header: Promise<GgufHeader | null>): Promise<HostPromptCacheLimits | null> {
  if (ramMib === 0) return null;
  const load = loadOptionsSchema.parse(input);
  const read = await header;
  return promptCacheLimits(load, read ? kvCacheBytes(read, { contextSize: 1, slots: 1, kvType: load.kvType }) : null, ramMib);
}
