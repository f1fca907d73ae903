/**
 * Core's implementation of the contract, and the one entry every transport calls: `invokeCall` parses
 * the arguments with the call's schema, runs the handler, and returns its result: the WebSocket bridge and
 * the Electron IPC bridge (shell/ipc-bridge.ts) both call it.
 */
import { hubFiles, HubSearchError, searchHub } from './models/hub-search.js';
import { CALL_NAMES, contract, type CallName, type CallResult, type ContractHandlers, type ModelInspection } from '../common/contract.js';
import { formatBytes } from '../common/format-bytes.js';
import { GgufFormatError } from '../common/gguf/header-reader.js';
import { firstIssueInWords, inWords } from '../common/issue-words.js';
import { ModelFileError } from '../common/node/gguf-file.js';
import { parseRunConfig } from './config/run-config.js';
import { ModelDownloadError } from './models/model-downloads.js';
import { inspectModel, suggestLayoutFor, type InspectPlan } from './models/model-inspector.js';
import { LibraryError } from './models/model-library.js';
import type { Workstation } from './workstation.js';
import { routePolicy } from './router/policies.js';
import { UnknownRoutingError } from './router/router.js';

export class ContractCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContractCallError';
  }
}

/** What the shell provides that core cannot (the desktop's file dialog). */
export interface ShellServices {
  /** Asks the user for a GGUF file; null when they cancel. */
  pickModelFile?: () => Promise<string | null>;
}

export function contractHandlers(workstation: Workstation, shell: ShellServices = {}): ContractHandlers {
  const { chat } = workstation;
  const hubOptions = () => (workstation.downloads.hubEndpoint ? { endpoint: workstation.downloads.hubEndpoint } : {});
  const info = async (): Promise<CallResult<'getInfo'>> => {
    const { replicas, replicas_alive } = workstation.replicas.info();
    return {
      status: workstation.status().status,
      model: workstation.modelId,
      replicas,
      replicas_alive,
      totalSlots: workstation.replicas.totalSlots,
      maxContext: workstation.replicas.maxContext,
      routing: workstation.routingPolicy,
      apiBase: '/v1',
      thinks: workstation.thinks,
    };
  };
  return {
    getInfo: info,
    getReplicas: async () => workstation.replicas.replicaView(),
    getSlots: async () => workstation.replicas.slotsView(),
    getGpus: async () => workstation.gpuReport(),
    getArena: async () => workstation.arenaStatus(),
    setRoutingPolicy: async ({ policy }) => {
      if (!routePolicy(policy)) throw new ContractCallError(new UnknownRoutingError(policy).message);
      workstation.setRoutingPolicy(policy);
      return { policy };
    },
    restartReplica: async ({ replica }) => {
      checkReplica(workstation, replica);
      await workstation.replicas.restartReplica(replica);
      return { replica, state: workstation.replicas.replicaView()[replica]!.state };
    },
    precheckRebuild: async (request) => {
      checkReplica(workstation, request.replica);
      return workstation.replicas.precheck(request);
    },
    rebuild: async (request) => {
      checkReplica(workstation, request.replica);
      return workstation.rebuild(request);
    },
    inspectModel: async ({ path, ...plan }) => inspect(workstation, path, plan),
    listModels: async () => ({ modelsDir: workstation.models.modelsDir, recent: await workstation.models.recent(), found: await workstation.models.found() }),
    loadModel: async (request) => {
      const inspection = await inspect(
        workstation,
        request.path,
        { replicas: request.replicas, contextSize: request.contextSize, slots: request.slots },
        request.gpus,
      );
      const short = inspection.fits.find((f) => !f.fits);
      if (short)
        throw new ContractCallError(
          `${request.path} does not fit: ${short.group} needs ${formatBytes(short.needBytes)}, ${formatBytes(short.freeBytes)} is free`,
        );
      const serving = workstation.modelPath;
      if (serving && !request.replace) {
        throw new ContractCallError(`replace: ${serving} is loaded; loading ${request.path} would replace it (say replace: true, or unload first)`);
      }
      try {
        const config = parseRunConfig({
          model: request.path,
          ...(request.gpus === undefined ? {} : { gpu: request.gpus }),
          replicas: request.replicas,
          engine: { contextSize: request.contextSize, slots: request.slots },
          shared_arena: request.sharedArena,
        });
        await workstation.load(config);
      } catch (error) {
        throw new ContractCallError(`loading ${request.path} failed: ${(error as Error).message}`);
      }
      return info();
    },
    unloadModel: async () => {
      await workstation.unload();
      return info();
    },
    listLibrary: async () => ({
      modelsDir: workstation.models.modelsDir,
      models: await workstation.models.list(workstation.modelPath, (header) => suggestLayoutFor(header, workstation.gpus.nvmlCards())),
    }),
    deleteModel: async ({ path }) => ({ deleted: await inWordsOf(workstation.models.remove(path, workstation.modelPath)) }),
    downloadModel: async ({ uri }) => inWordsOf(workstation.downloads.download(uri)),
    cancelDownload: async ({ uri }) => ({ cancelled: workstation.downloads.cancel(uri) }),
    listDownloads: async () => workstation.downloads.list(),
    searchHub: async ({ query }) => ({ models: await inWordsOf(searchHub(query, hubOptions())) }),
    hubFiles: async ({ repo }) => ({ files: await inWordsOf(hubFiles(repo, hubOptions())) }),
    getThroughput: async () => workstation.throughputSample(),
    listConversations: async () => chat.store.list(),
    getConversation: async ({ id }) => chat.store.get(id),
    createConversation: async (fields) => chat.store.create(fields),
    updateConversation: async ({ id, title, systemPrompt, sampling }) =>
      chat.store.update(id, (c) => {
        if (title !== undefined) c.title = title;
        if (systemPrompt !== undefined) c.systemPrompt = systemPrompt;
        c.sampling = { ...c.sampling, ...sampling };
      }),
    deleteConversation: async ({ id }) => {
      chat.stop(id);
      await chat.store.delete(id);
      return { id };
    },
    sendMessage: async ({ id, content, json }) => chat.send(id, content, json?.schema),
    regenerate: async ({ id }) => chat.regenerate(id),
    editMessage: async ({ id, messageId, content }) => chat.edit(id, messageId, content),
    stopGeneration: async ({ id }) => ({ stopped: chat.stop(id) }),
    pickModelFile: async () =>
      shell.pickModelFile
        ? { path: await shell.pickModelFile(), reason: null }
        : { path: null, reason: 'no file dialog in a browser: type the path, or pick a recent or found model' },
    getLogs: async () => workstation.log.recent(),
    getHistory: async () => workstation.history.samples(),
  };
}

/**
 * The loader's view of a model on the cards it would use (all NVML sees, the listed ones, or none for
 * CPU engines); a missing file or one that is not a GGUF is a clear refusal.
 */
async function inspect(workstation: Workstation, path: string, plan: InspectPlan, gpus?: 'cpu' | number[]): Promise<ModelInspection> {
  const detected = gpus === 'cpu' ? null : workstation.gpus.nvmlCards();
  const cards = detected && Array.isArray(gpus) ? gpus.flatMap((card) => detected.filter((c) => c.index === card)) : detected;
  try {
    return await inspectModel(path, plan, cards);
  } catch (error) {
    if (error instanceof ModelFileError || error instanceof GgufFormatError) throw new ContractCallError(`${path}: ${error.message}`);
    throw error;
  }
}

/** A library or download refusal is the caller's to read (a 400 on the admin routes), not a server fault. */
async function inWordsOf<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof ModelDownloadError || error instanceof LibraryError || error instanceof HubSearchError) throw new ContractCallError(error.message);
    throw error;
  }
}

function checkReplica(workstation: Workstation, replica: number | 'all'): void {
  if (replica !== 'all' && replica >= workstation.replicas.size) {
    throw new ContractCallError(`replica: there is no replica ${replica} (there are ${workstation.replicas.size})`);
  }
}

/** Runs the call `name` with untrusted `args`; throws ContractCallError for an unknown call or bad arguments. */
export async function invokeCall(handlers: ContractHandlers, name: string, args: unknown): Promise<unknown> {
  if (!(CALL_NAMES as string[]).includes(name)) throw new ContractCallError(`unknown call "${name}" (known: ${CALL_NAMES.join(', ')})`);
  const call = name as CallName;
  const parsed = contract.calls[call].args.safeParse(args ?? {}, { error: inWords });
  if (!parsed.success) throw new ContractCallError(`${call}: ${firstIssueInWords(parsed.error, 'arguments').message}`);
  const handler = handlers[call] as (a: unknown) => Promise<unknown>;
  return handler(parsed.data);
}
