/**
 * The command line of a replica's `llama-server` child, from the same load options a node-llama-cpp
 * engine gets: the model path (the arena's when there is one), `-np <slots>`, `-c <slots × tokens per
 * slot>` with `--no-kv-unified` so each slot has its own share as a node-llama-cpp sequence does,
 * `-t <threads>` (left to llama.cpp when 0), GPU layers, batch size, flash attention and KV type, on a
 * Unix socket (`--host <path>.sock`) or a loopback port. The web UI is off; the slot list (`/slots`)
 * stays on for the slot view, and the slot actions save to and restore from `slotFolder`
 * (`--slot-save-path`, for live resize).
 */
import { loadOptionsSchema, type LoadOptionsInput } from '../../../common/engine-protocol.js';

/** Where the child listens: a Unix socket's path (ending in `.sock`, which is how llama-server tells it from a host), or a loopback port. */
export type ListenAddress = { readonly socketPath: string } | { readonly port: number };

export function llamaServerArgs(input: LoadOptionsInput, listen: ListenAddress, slotFolder: string): string[] {
  const load = loadOptionsSchema.parse(input);
  const args = ['-m', load.modelPath, ...('socketPath' in listen ? ['--host', listen.socketPath] : ['--host', '127.0.0.1', '--port', String(listen.port)])];
  args.push('-np', String(load.slots), '-c', String(load.slots * load.contextSize), '--no-kv-unified', '--no-webui', '--slot-save-path', slotFolder);
  if (load.threads > 0) args.push('-t', String(load.threads));
  if (load.gpuLayers !== 'auto') args.push('-ngl', String(load.gpuLayers));
  if (load.batchSize !== undefined) args.push('-b', String(load.batchSize));
  args.push('-fa', load.flashAttention === 'auto' ? 'auto' : load.flashAttention ? 'on' : 'off');
  args.push('-ctk', load.kvType, '-ctv', load.kvType);
  return args;
}
