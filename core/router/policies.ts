/** The routing policies, one line each (a policy is one file in policies/ implementing route-policy.ts); the first is the default. */
import { leastLoadedPolicy } from './policies/least-loaded.js';
import { prefixPolicy } from './policies/prefix.js';
import { roundRobinPolicy } from './policies/round-robin.js';
import type { RoutePolicy } from './route-policy.js';

const policies = new Map<string, RoutePolicy>();

/** Adds a policy (the built-in ones below; a test adds a stand-in). */
export function registerRoutePolicy(policy: RoutePolicy): void {
  policies.set(policy.name, policy);
}

registerRoutePolicy(prefixPolicy);
registerRoutePolicy(roundRobinPolicy);
registerRoutePolicy(leastLoadedPolicy);

/** The default policy's name. */
export const DEFAULT_ROUTING = prefixPolicy.name;

/** The names a run config's `routing` and the dashboard may use. */
export const routePolicyNames = (): string[] => [...policies.keys()];

/** The policy of that name; undefined when none. */
export const routePolicy = (name: string): RoutePolicy | undefined => policies.get(name);
