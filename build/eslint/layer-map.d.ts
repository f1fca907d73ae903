/** Types of the allow-map (layer-map.js), for the rule's JSDoc and the unit test. */

/** A part of a layer; `name` is also its path inside the layer's folder (a folder, a file without extension, or both). */
export interface Sublayer {
  name: string;
  /** Sub-layers of the same layer it may import. */
  allow: string[];
  /** npm packages it may import (each also on its layer's list); none when absent. */
  packages?: string[];
}

export interface Layer {
  name: string;
  folder: string;
  /** Layers it may import. */
  allow: string[];
  /** Whether it runs in Node (may import Node builtins). */
  node: boolean;
  /** npm packages it may import. */
  packages: string[];
  /** When present, every file of the layer must be in one, and imports between them follow their `allow`. */
  sublayers?: Sublayer[];
}

export const coreSublayers: Sublayer[];
export const layers: Layer[];
