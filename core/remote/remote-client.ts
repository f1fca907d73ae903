/**
 * The client of a ready remote replica: what the dispatcher and the views use of it, as of a local engine
 * (ReplicaClient). A generation is one streamed HTTP request in the peer's dialect; each token chunk is handed
 * on as it comes; the end is a GenerateDone. Three timeouts guard it (until the response headers: the shorter
 * of connect and first token; first token: from sending; idle: between chunks after the first token), each
 * aborting the upstream request. A peer lost under the request (refused, reset, timed out, a 5xx, a stream cut
 * short or garbled) rejects `done` with RemoteLostError (an EngineExitedError, so the dispatcher fails the
 * request over if no token came); a refusal (4xx) with EngineRequestError. `cancel()` aborts the upstream
 * request and `done` resolves as cancelled with what had come.
 */
import { generateRequestSchema, type GenerateDone, type GenerateRequest, type GenerateRequestInput, type SlotView } from '../../common/engine-protocol.js';
import { firstIssueInWords, inWords } from '../../common/issue-words.js';
import type { PrefixBorrow, PrefixRestoreReport } from '../../common/prefix-cache.js';
import { EngineRequestError, type GenerationHandle, type StartedInfo, type TokenChunk } from '../engine/engine-client.js';
import { readEmbeddings, type CompletionDialect, type SlotStateDialect, type SlotStateResult } from './completion-dialect.js';
import { GenerationTally } from './generation-tally.js';
import { STREAM_GAP_MS } from '../../common/turn-batch.js';
import { getPeerJson, postPeerJson, postPeerStream, type PeerAddress, type PeerStream } from './peer-http.js';
import { describePeerFailure, peerErrorWords, peerRefusal, RemoteLostError } from './remote-errors.js';
import type { RemoteTimeouts } from '../config/remote-plan.js';
import { SseParser } from './sse-parser.js';
import { NOT_JSON, parseJsonOr } from '../../common/parse-json.js';

export interface RemoteClientOptions {
  readonly peer: PeerAddress;
  readonly dialect: CompletionDialect;
  /** The peer's name for the model (sent as `model` where the dialect sends one); null to send none. */
  readonly model: string | null;
  /** The peer's per-slot context; 0 when unknown. */
  readonly contextSize: number;
  readonly timeouts: RemoteTimeouts;
  /**
   * A local llama-server's: restores a request's borrow hint (a lent slot file) into the slot the request is
   * pinned to, before it is sent there; null when nothing was restored. Absent: borrow hints are ignored
   * (remote peers).
   */
  readonly restoreBorrowed?: (borrow: PrefixBorrow, slot: number) => Promise<PrefixRestoreReport | null>;
}

/**
 * One timer a request re-arms as it moves from one bound to the next; firing aborts with the bound's
 * words. Re-arming the same bound (the idle bound, at every piece of the stream) restarts the timer
 * in place rather than making a new one.
 */
class Deadline {
  private timer: NodeJS.Timeout | undefined;
  private problem = '';
  private ms = 0;
  constructor(private readonly expire: (problem: string) => void) {}
  arm(ms: number, problem: string): void {
    if (this.timer !== undefined && ms === this.ms && problem === this.problem) {
      this.timer.refresh();
      return;
    }
    clearTimeout(this.timer);
    this.ms = ms;
    this.problem = problem;
    this.timer = setTimeout(() => this.expire(problem), Math.max(0, ms));
  }
  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** A ReplicaClient (kind/replica-driver.ts), structurally: that layer sits above this one. */
export class RemoteClient {
  private nextId = 0;
  /** The running generations: how to fail each as lost, and whether it has streamed a token. */
  private readonly running = new Map<number, { lose: (problem: string) => void; tokensSeen: () => boolean }>();

  /** One vector per input (token ids), from the peer's embeddings endpoint; absent where its dialect has none. */
  readonly embed?: (inputs: readonly (readonly number[])[]) => Promise<number[][]>;

  constructor(private readonly options: RemoteClientOptions) {
    const path = options.dialect.embeddingsPath;
    if (path !== null) this.embed = (inputs) => this.embedAt(path, inputs);
  }

  get url(): string {
    return this.options.peer.url;
  }

  /** Whether the peer's dialect carries a request's grammar. */
  get takesGrammar(): boolean {
    return this.options.dialect.takesGrammar;
  }

  /** Whether the peer's dialect reports token logprobs. */
  get takesLogprobs(): boolean {
    return this.options.dialect.takesLogprobs;
  }

  /** Generations sent and not yet ended (their streams still open here). */
  get runningCount(): number {
    return this.running.size;
  }

  /** `slot`: the peer's slot to run in, where core chooses it (a local llama-server's); absent: the peer picks one. */
  generate(input: GenerateRequestInput, onTokens?: (chunk: TokenChunk) => void, slot?: number): GenerationHandle {
    const id = ++this.nextId;
    const controller = new AbortController();
    let cancelled = false;
    let settled = false;
    let lost: RemoteLostError | undefined;
    let markStarted: (info: StartedInfo) => void = () => {};
    let failStart: (error: Error) => void = () => {};
    const started = new Promise<StartedInfo>((resolve, reject) => {
      markStarted = resolve;
      failStart = reject;
    });
    started.catch(() => {});
    const loseWith = (problem: string): void => {
      lost ??= new RemoteLostError(this.url, problem);
      controller.abort(lost);
    };
    let tokensSeen = false;
    this.running.set(id, { lose: loseWith, tokensSeen: () => tokensSeen });
    const done = this.run(input, slot, controller.signal, {
      onTokens: (chunk) => {
        tokensSeen = true;
        onTokens?.(chunk);
      },
      onStarted: (info) => markStarted(info),
      loseWith,
      lost: () => lost,
      cancelled: () => cancelled,
    }).finally(() => {
      settled = true;
      this.running.delete(id);
      controller.abort();
    });
    done.then(() => failStart(new Error('the peer did not name a slot')), failStart);
    return {
      id,
      started,
      done,
      cancel: async () => {
        if (settled) return false;
        cancelled = true;
        controller.abort();
        return true;
      },
    };
  }

  /**
   * Fails running generations as lost: all of them (the link was stopped), or only those that have not
   * streamed a token (the peer stopped answering: they fail over now rather than at their first-token bound).
   */
  abandon(problem: string, which: 'all' | 'without-tokens'): void {
    for (const generation of this.running.values()) if (which === 'all' || !generation.tokensSeen()) generation.lose(problem);
  }

  private async run(
    input: GenerateRequestInput,
    slot: number | undefined,
    signal: AbortSignal,
    hooks: {
      onTokens: (chunk: TokenChunk) => void;
      onStarted: (info: StartedInfo) => void;
      loseWith: (problem: string) => void;
      lost: () => RemoteLostError | undefined;
      cancelled: () => boolean;
    },
  ): Promise<GenerateDone> {
    const parsed = generateRequestSchema.safeParse(input, { error: inWords });
    if (!parsed.success) throw new EngineRequestError('bad_message', firstIssueInWords(parsed.error, 'the request').message);
    const request: GenerateRequest = parsed.data;
    const { peer, dialect, timeouts } = this.options;
    const sentAt = performance.now();
    const tally = new GenerationTally(request, sentAt);
    const deadline = new Deadline(hooks.loseWith);
    /** The error to end with when the request was aborted or broke: a cancel, a timeout, or what broke it. */
    const ending = (error: unknown, what: string): GenerateDone => {
      if (hooks.cancelled()) return tally.done(true, performance.now());
      throw (
        hooks.lost() ??
        (error instanceof RemoteLostError || error instanceof EngineRequestError
          ? error
          : new RemoteLostError(peer.url, `${what}: ${describePeerFailure(error)}`))
      );
    };

    const noFirstToken = `no first token within ${timeouts.firstTokenMs} ms (timeouts.firstTokenMs)`;
    // Until the headers too, the first-token bound: llama-server sends a stream's headers with its first
    // token, after the prompt's prefill (8 long prompts at once on a slow box take seconds each). A peer
    // that stops answering is caught sooner by its link's health check (connectMs), which fails over the
    // requests without a token.
    deadline.arm(timeouts.firstTokenMs, noFirstToken);
    try {
      const restored = slot !== undefined && request.borrow && this.options.restoreBorrowed ? await this.options.restoreBorrowed(request.borrow, slot) : null;
      // The request is known to have started in its slot once a file was restored there, not only at its last chunk.
      if (restored)
        hooks.onStarted({ slot: slot!, reusedTokens: Math.min(restored.tokens, request.tokens.length - 1), queuedMs: 0, prefixCache: { moves: [], restored } });
      const body = dialect.body(request, { model: this.options.model, contextSize: this.options.contextSize, ...(slot !== undefined ? { slot } : {}) });
      let response: PeerStream;
      try {
        response = await postPeerStream(peer, dialect.path, JSON.stringify(body), signal);
      } catch (error) {
        return ending(error, `cannot reach it (POST ${dialect.path})`);
      }
      if (response.status < 200 || response.status > 299) {
        const text = await response.text().catch(() => '');
        // Not JSON: its text is the message.
        throw hooks.lost() ?? peerRefusal(peer.url, response.status, parseJsonOr(text, text));
      }
      const firstTokenLeft = timeouts.firstTokenMs - (performance.now() - sentAt);
      deadline.arm(firstTokenLeft, noFirstToken);
      const idle = `the stream was silent for ${timeouts.idleMs} ms after its first tokens (timeouts.idleMs)`;
      const parser = new SseParser();
      /** Takes one event; true at the stream's `[DONE]`. */
      const take = (data: string): boolean => {
        if (data === '[DONE]') return true;
        const json = parseJsonOr(data, NOT_JSON);
        if (json === NOT_JSON) throw new RemoteLostError(peer.url, `sent a chunk that is not JSON: ${data.slice(0, 200)}`);
        const read = dialect.read(json);
        if (!read.ok) throw new RemoteLostError(peer.url, `sent a malformed chunk: ${read.problem}`);
        if (read.value.error !== undefined) throw peerRefusal(peer.url, null, read.value.error, tally.tokensSeen);
        const hadTokens = tally.tokensSeen;
        const chunk = tally.add(read.value, performance.now());
        if (chunk) hooks.onTokens(chunk);
        if (!hadTokens && tally.tokensSeen) deadline.arm(timeouts.idleMs, idle);
        const startedInfo = tally.started;
        if (startedInfo) hooks.onStarted(startedInfo);
        return false;
      };
      try {
        // From the first token to the last few, the peer's events are read a gap apart, several at a time.
        await response.read((bytes) => {
          if (tally.tokensSeen) deadline.arm(timeouts.idleMs, idle);
          for (const event of parser.push(bytes)) if (take(event.data)) return 'end';
          return tally.mayHold(STREAM_GAP_MS) ? 'pace' : 'more';
        });
      } catch (error) {
        return ending(error, `the stream broke${tally.tokensSeen ? ' after its first tokens' : ' before its first token'}`);
      }
      if (hooks.cancelled()) return tally.done(true, performance.now());
      if (!tally.finished) {
        throw new RemoteLostError(
          peer.url,
          `the stream ended before its last chunk${tally.tokensSeen ? ' (after its first tokens)' : ' (before its first token)'}`,
        );
      }
      return tally.done(false, performance.now());
    } finally {
      deadline.clear();
    }
  }

  /** The peer's slots as it lists them; [] for a peer that lists none (or has its slot list turned off). */
  async slots(): Promise<SlotView[]> {
    const { dialect, peer, timeouts } = this.options;
    if (dialect.slotsPath === null) return [];
    const answer = await getPeerJson(peer, dialect.slotsPath, timeouts.connectMs);
    if (answer.status === 404 || answer.status === 501) return [];
    if (answer.status !== 200) throw peerRefusal(peer.url, answer.status, answer.body);
    const read = dialect.slots(answer.body);
    if (!read.ok) throw new RemoteLostError(peer.url, `listed its slots in a shape it should not: ${read.problem}`);
    return read.value;
  }

  private async embedAt(path: string, inputs: readonly (readonly number[])[]): Promise<number[][]> {
    const { peer, model, timeouts } = this.options;
    const answer = await postPeerJson(peer, path, { ...(model !== null ? { model } : {}), input: inputs, encoding_format: 'float' }, timeouts.firstTokenMs);
    // A peer without embeddings (404, 405, 501) is passed over like a lost one: another replica serves them.
    if ([404, 405, 501].includes(answer.status))
      throw new RemoteLostError(peer.url, `does not serve embeddings (POST ${path} answered ${answer.status}: ${peerErrorWords(answer.body).message})`);
    if (answer.status !== 200) throw peerRefusal(peer.url, answer.status, answer.body);
    const read = readEmbeddings(answer.body, inputs.length);
    if (!read.ok) throw new RemoteLostError(peer.url, `answered POST ${path} in a shape it should not: ${read.problem}`);
    return read.value;
  }

  /** Saves slot `slot`'s KV state to `filename` in the peer's slot folder, or restores it from there. */
  async slotAction(slot: number, action: 'save' | 'restore', filename: string, timeoutMs: number): Promise<SlotStateResult> {
    const slotState = this.slotState();
    const path = slotState.actionPath(slot, action);
    const answer = await postPeerJson(this.options.peer, path, slotState.actionBody(filename), timeoutMs);
    if (answer.status !== 200) throw peerRefusal(this.url, answer.status, answer.body);
    const read = slotState.actionResult(answer.body);
    if (!read.ok) throw new RemoteLostError(this.url, `answered POST ${path} in a shape it should not: ${read.problem}`);
    return read.value;
  }

  /** Evaluates `tokens` into slot `slot` so that it holds them (a prefix that could not be restored from a file). */
  async fillSlot(slot: number, tokens: readonly number[], timeoutMs: number): Promise<void> {
    const answer = await postPeerJson(this.options.peer, this.options.dialect.path, this.slotState().fillBody(slot, tokens), timeoutMs);
    if (answer.status !== 200) throw peerRefusal(this.url, answer.status, answer.body);
  }

  private slotState(): SlotStateDialect {
    const slotState = this.options.dialect.slotState;
    if (!slotState) throw new EngineRequestError('bad_message', `${this.url} cannot save or restore its slots`);
    return slotState;
  }
}
