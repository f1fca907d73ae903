/** Failures of a request or a call on the replica set that the front turns into HTTP statuses. */

/** No replica can serve: none is alive (HTTP 503 with Retry-After). */
export class NoReplicaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoReplicaError';
  }
}

/** The engine serving a stream died after tokens had been sent: the stream cannot be continued. */
export class ReplicaDiedError extends Error {
  constructor(
    readonly replica: number,
    readonly tokensSent: number,
  ) {
    super(`replica ${replica} died mid-stream after ${tokensSent} tokens; the response is incomplete`);
    this.name = 'ReplicaDiedError';
  }
}

/** A rebuild was asked for while another one is running. */
export class RebuildInProgressError extends Error {
  constructor() {
    super('another rebuild is in progress; wait for its outcome');
    this.name = 'RebuildInProgressError';
  }
}

/** No ready replica serves embeddings (only node-llama-cpp engines do; HTTP 501 as llama-server answers). */
export class EmbeddingsUnsupportedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddingsUnsupportedError';
  }
}
