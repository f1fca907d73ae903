/**
 * The tokenizer child's entry: serves the tokenizer protocol with one tokenizer host
 * (engine-bin/child-main.ts connects, logs to stderr — llama.cpp's lines too — and exits when the parent
 * is gone).
 */
import type { TokenizerMessage } from '../common/tokenizer-protocol.js';
import { runChild } from './child-main.js';
import { TokenizerHost } from './tokenizer-host.js';
import { TokenizerServer } from './tokenizer-server.js';

runChild<TokenizerMessage>((transport, log, exit) => new TokenizerServer(transport, new TokenizerHost(log), exit));
