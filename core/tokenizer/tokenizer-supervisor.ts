/**
 * The supervisor of one model's tokenizer child: spawns it and opens the model (the first open can add a
 * weights probe, the loader's validation), with a time limit; prefixes its log lines with
 * `[tokenizer pid]`; says why it exited (the engine's exit reasons); kills it when a call goes unanswered
 * for the hang bound; and starts a new child after a crash or a hang, up to a cap per time window. Calls
 * in flight when the child dies fail with TokenizerUnavailableError; calls made while it restarts wait for
 * the new child. The main process never runs native code on the model file.
 */
import type { OpenStage, ThinkingTags, TokenizerMessage, TokenizerMessageOf } from '../../common/tokenizer-protocol.js';
import type { EngineExit, SpawnTokenizer } from '../engine/engine-process.js';
import { ChildLife, describeExit } from '../supervisor/child-life.js';
import { TokenizerChannel, type TokenizerRequestBody } from './tokenizer-channel.js';
import { TokenizerError, TokenizerUnavailableError } from './tokenizer-errors.js';
import type { ToolSupport } from '../../common/tool-calls/tool-call-format.js';

export interface TokenizerSupervisorOptions {
  /** The model the child opens; `reopenFrom` changes what later restarts open. */
  modelPath: string;
  /** Starts the child process (fork under Node, utilityProcess in Electron). */
  spawn: SpawnTokenizer;
  /** Receives every log line, already prefixed. */
  log: (line: string) => void;
  /** Spawn plus open (vocabulary, and the weights probe when asked) may take this long. */
  openTimeoutMs?: number;
  /** A call unanswered for this long means the child hung: it is killed and restarted. */
  hangTimeoutMs?: number;
  /** At most this many restarts within `restartWindowMs`; past that the tokenizer stays down. */
  maxRestarts?: number;
  restartWindowMs?: number;
  /** How long a graceful stop may take before SIGKILL. */
  stopGraceMs?: number;
  /** Test-only: the child skips the header bounds, so a hostile file reaches llama.cpp. */
  testOnlySkipHeaderCheck?: boolean;
}

type TokenizerState = 'idle' | 'opening' | 'ready' | 'restarting' | 'down' | 'stopped';

export interface TokenizerOpened {
  hasModelTemplate: boolean;
  /** How long the weights probe took; null when there was none. */
  probeMs: number | null;
  /** The template's tool-call format, and whether it renders `tools` itself. */
  toolSupport: ToolSupport;
  /** The template's thinking tags (null: it does not think), and the control tokens engines write out for them. */
  thinking: ThinkingTags | null;
  preservedTokens: string[];
}

/** The line of a child's last words that says what failed (llama.cpp's assert, or an error). */
function lastWords(lines: readonly string[]): string | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    const assertion = /GGML_ASSERT\(.*\) failed/.exec(line);
    if (assertion) return `llama.cpp: ${assertion[0]}`;
    if (/\berror\b/i.test(line)) return line.trim();
  }
  return null;
}

const STAGE_WORDS: Record<OpenStage, string> = {
  header: 'checking the header',
  template: 'reading the chat template',
  vocabulary: 'loading the vocabulary',
  weights: 'probing the weights',
};

const RECENT_LINES = 20;

export class TokenizerSupervisor {
  private channel: TokenizerChannel | undefined;
  private stateValue: TokenizerState = 'idle';
  private modelPath: string;
  private readonly life = new ChildLife();
  private hangCheck: NodeJS.Timeout | undefined;
  private restarting: Promise<void> | undefined;
  private readonly restarts: number[] = [];
  private downReason = '';
  private recentLines: string[] = [];
  private readonly openTimeoutMs: number;
  private readonly hangTimeoutMs: number;
  private readonly maxRestarts: number;
  private readonly restartWindowMs: number;
  private readonly stopGraceMs: number;

  constructor(private readonly options: TokenizerSupervisorOptions) {
    this.modelPath = options.modelPath;
    this.openTimeoutMs = options.openTimeoutMs ?? 60_000;
    this.hangTimeoutMs = options.hangTimeoutMs ?? 30_000;
    this.maxRestarts = options.maxRestarts ?? 3;
    this.restartWindowMs = options.restartWindowMs ?? 60_000;
    this.stopGraceMs = options.stopGraceMs ?? 2000;
  }

  get pid(): number | undefined {
    return this.channel?.process.pid;
  }

  /** Starts the first child; rejects with TokenizerError (the child gone) when the model does not open. */
  async start(probeWeights: boolean): Promise<TokenizerOpened> {
    if (this.stateValue !== 'idle') throw new Error(`the tokenizer is already ${this.stateValue}`);
    try {
      return await this.spawnAndOpen(probeWeights);
    } catch (error) {
      this.stateValue = 'down';
      this.downReason = (error as Error).message;
      throw error;
    }
  }

  /** What later restarts open (the shared arena's path once it is filled: the file may then be deleted). */
  reopenFrom(modelPath: string): void {
    this.modelPath = modelPath;
  }

  /** Sends one request to the child (after a restart in progress); resolves with its reply. */
  async call<T extends TokenizerMessage['type']>(body: TokenizerRequestBody, replyType: T): Promise<TokenizerMessageOf<T>> {
    if (this.restarting) await this.restarting;
    if (this.stateValue !== 'ready' || !this.channel) {
      throw new TokenizerUnavailableError(this.stateValue === 'down' ? this.downReason : `the tokenizer is ${this.stateValue}`);
    }
    return this.channel.call(body, replyType);
  }

  /** Sends a signal to the child (tests use SIGKILL and SIGSTOP to stand in for real failures). */
  signal(signal: NodeJS.Signals): void {
    this.channel?.process.kill(signal);
  }

  /** Asks the child to free the model and exit, then kills it after the grace period; no restart follows. */
  async stop(): Promise<void> {
    this.life.stopRequested = true;
    clearInterval(this.hangCheck);
    const channel = this.channel;
    const wasReady = this.stateValue === 'ready';
    this.stateValue = 'stopped';
    if (!channel?.alive) return;
    if (!wasReady) channel.process.kill('SIGKILL');
    const grace = setTimeout(() => channel.process.kill('SIGKILL'), this.stopGraceMs);
    try {
      if (wasReady) await channel.call({ type: 'shutdown' }, 'stopping').catch(() => undefined);
      await channel.exited;
    } finally {
      clearTimeout(grace);
    }
  }

  /** One child: spawn, open within the time limit; on failure the child is killed and the error names why. */
  private async spawnAndOpen(probeWeights: boolean): Promise<TokenizerOpened> {
    this.stateValue = 'opening';
    this.life.hung = undefined;
    this.recentLines = [];
    const modelPath = this.modelPath;
    // An abort in the child is expected on a hostile file: no backtrace (ggml would attach gdb, seconds).
    const child = this.options.spawn({ env: { GGML_NO_BACKTRACE: '1' } });
    let stage: OpenStage | undefined;
    const channel = new TokenizerChannel(
      child,
      (exit) => this.exitError(exit, stage),
      (problem) => this.log(`protocol: ${problem}`),
    );
    this.channel = channel;
    child.onLog((line) => {
      this.recentLines.push(line);
      if (this.recentLines.length > RECENT_LINES) this.recentLines.shift();
      this.log(line);
    });
    void channel.exited.then((exit) => this.onChildExit(channel, exit));
    this.log(`opening ${modelPath}${probeWeights ? ' with a weights probe' : ''}`);

    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new TokenizerError(
              `${modelPath} failed validation: ${stage ? STAGE_WORDS[stage] : 'starting the tokenizer process'} took longer than ${this.openTimeoutMs} ms`,
            ),
          ),
        this.openTimeoutMs,
      );
    });
    try {
      const opened = await Promise.race([
        channel.call(
          { type: 'open', modelPath, probeWeights, ...(this.options.testOnlySkipHeaderCheck ? { testOnlySkipHeaderCheck: true } : {}) },
          'opened',
          (s) => (stage = s),
        ),
        timeout,
      ]);
      if (this.life.stopRequested) throw new TokenizerUnavailableError('the tokenizer was stopped while it opened');
      const { hasModelTemplate, probeMs, toolSupport, thinking, preservedTokens } = opened;
      const info: TokenizerOpened = { hasModelTemplate, probeMs, toolSupport, thinking, preservedTokens };
      this.stateValue = 'ready';
      this.startHangCheck(channel);
      this.log(`ready${info.probeMs === null ? '' : ` (weights probe ${Math.round(info.probeMs)} ms)`}`);
      return info;
    } catch (error) {
      const failure =
        error instanceof TokenizerError && error.code !== null
          ? new TokenizerError(`${modelPath} failed validation: ${error.message}`, error.code)
          : (error as Error);
      this.log(`open failed: ${failure.message}`);
      child.kill('SIGKILL');
      await channel.exited;
      throw failure;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The error pending calls fail with when the child exits: while opening it is the model's; after, the process's. */
  private exitError(exit: EngineExit, stage: OpenStage | undefined): Error {
    if (this.life.stopRequested) return new TokenizerUnavailableError('the tokenizer was stopped (its model is being unloaded)');
    const how = this.life.hung
      ? `hung (no answer for ${this.life.hung.silentMs} ms) and was killed`
      : `exited (code ${exit.code ?? 'none'}, signal ${exit.signal ?? 'none'})`;
    if (this.stateValue === 'opening') {
      const words = lastWords(this.recentLines);
      return new TokenizerError(
        `${this.modelPath} failed validation: the tokenizer process ${how} while ${stage ? STAGE_WORDS[stage] : 'starting'}${words ? ` — ${words}` : ''}`,
      );
    }
    return new TokenizerUnavailableError(`the tokenizer process ${how} while serving this call; it is restarted for the next one`);
  }

  private startHangCheck(channel: TokenizerChannel): void {
    this.hangCheck = setInterval(
      () => {
        const silentMs = Math.round(channel.oldestWaitMs());
        if (silentMs <= this.hangTimeoutMs) return;
        this.life.hung = { silentMs };
        this.log(`hung: a call unanswered for ${silentMs} ms; killing`);
        clearInterval(this.hangCheck);
        channel.process.kill('SIGKILL');
      },
      Math.min(1000, Math.max(10, this.hangTimeoutMs / 4)),
    );
    this.hangCheck.unref();
  }

  private onChildExit(channel: TokenizerChannel, exit: EngineExit): void {
    if (this.channel !== channel) return;
    clearInterval(this.hangCheck);
    const wasReady = this.stateValue === 'ready';
    const reason = this.life.exitReason({ kind: 'crashed', code: exit.code, signal: exit.signal }, wasReady ? undefined : 'the model did not open');
    this.log(`exited: ${describeExit(reason)}`);
    if (wasReady && !this.life.stopRequested) {
      this.stateValue = 'restarting';
      this.restarting = this.restart().finally(() => (this.restarting = undefined));
    }
  }

  /** New children until one opens the model or the restart cap is reached (then the tokenizer is down). */
  private async restart(): Promise<void> {
    for (;;) {
      const now = performance.now();
      while (this.restarts.length > 0 && now - this.restarts[0]! > this.restartWindowMs) this.restarts.shift();
      if (this.restarts.length >= this.maxRestarts) {
        this.stateValue = 'down';
        this.downReason = `the tokenizer process failed ${this.restarts.length + 1} times within ${this.restartWindowMs / 1000} s and is not restarted; load the model again`;
        this.log(this.downReason);
        return;
      }
      this.restarts.push(now);
      try {
        await this.spawnAndOpen(false);
        return;
      } catch (error) {
        if (this.life.stopRequested) return;
        this.log(`restart failed: ${(error as Error).message}`);
      }
    }
  }

  private log(line: string): void {
    this.options.log(`[tokenizer ${this.pid ?? '-'}] ${line}`);
  }
}
