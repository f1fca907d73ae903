/**
 * Core's implementation of the contract, and the one entry every transport calls: `invokeCall` parses
 * the arguments with the call's schema, runs the handler, and returns its result. The WebSocket bridge
 * uses it now; the Electron IPC wrapper will use the same function.
 */
import { CALL_NAMES, contract, type CallName, type ContractHandlers } from '../../common/contract.js';
import type { Workstation } from './workstation.js';

export class ContractCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContractCallError';
  }
}

export function contractHandlers(workstation: Workstation): ContractHandlers {
  return {
    getInfo: async () => {
      const info = workstation.replicas.info();
      return {
        status: workstation.status().status,
        model: workstation.modelId,
        replicas: info.replicas,
        replicas_alive: info.replicas_alive,
        totalSlots: workstation.replicas.totalSlots,
        maxContext: workstation.replicas.maxContext,
        routing: workstation.routingPolicy,
        apiBase: '/v1',
      };
    },
    getReplicas: async () => workstation.replicas.replicaView(),
    getSlots: async () => workstation.replicas.slotsView(),
    getGpus: async () => workstation.gpuReport(),
    getArena: async () => workstation.arenaStatus(),
    setRoutingPolicy: async ({ policy }) => {
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
  };
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
  const parsed = contract.calls[call].args.safeParse(args ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ContractCallError(`${call}: ${issue.path.join('.') || 'arguments'}: ${issue.message}`);
  }
  const handler = handlers[call] as (a: unknown) => Promise<unknown>;
  return handler(parsed.data);
}
