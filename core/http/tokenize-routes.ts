/**
 * llama-server's `POST /tokenize` (`{content, add_special, parse_special, with_pieces}` → `{tokens}`) and
 * `POST /detokenize` (`{tokens}` → `{content}`), answered by core's tokenizer process with the loaded
 * model's vocabulary. `with_pieces` gives each token with its text (`{id, piece}`: its leading space
 * kept, control tokens written out; a byte of a split UTF-8 character reads as U+FFFD, where llama-server
 * gives the bytes).
 */
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { tokenIdsSchema } from '../../common/token-ids.js';
import type { Workstation } from '../workstation.js';
import { HttpError, parseRequest, sendJson } from './http-error.js';
import { tokensOf } from './generation-request.js';

/** The most tokens one `/detokenize` (or `with_pieces` answer) takes. */
const MAX_TOKENS = 1 << 20;

const tokenizeRequestSchema = z
  .object({
    content: z.string(),
    /** Add the model's BOS token when it wants one (llama-server's default: false). */
    add_special: z.boolean().default(false),
    /** Control-token text such as `<|im_start|>` becomes that token (llama-server's default: true). */
    parse_special: z.boolean().default(true),
    with_pieces: z.boolean().default(false),
  })
  .strict();

const detokenizeRequestSchema = z.object({ tokens: tokenIdsSchema({ max: MAX_TOKENS }) }).strict();

export async function handleTokenize(workstation: Workstation, raw: unknown, res: ServerResponse): Promise<void> {
  const body = parseRequest(tokenizeRequestSchema, raw);
  const tokens = await tokensOf(
    workstation,
    () => workstation.tokenizer.tokenize(body.content, { special: body.parse_special, addBos: body.add_special }),
    'content',
  );
  if (!body.with_pieces) return sendJson(res, 200, { tokens });
  const pieces = await tokensOf(workstation, () => workstation.tokenizer.pieces(tokens), 'content');
  sendJson(res, 200, { tokens: tokens.map((id, i) => ({ id, piece: pieces[i]! })) });
}

export async function handleDetokenize(workstation: Workstation, raw: unknown, res: ServerResponse): Promise<void> {
  const body = parseRequest(detokenizeRequestSchema, raw);
  const vocabulary = workstation.vocabularySize;
  const outside = vocabulary > 0 ? body.tokens.findIndex((token) => token >= vocabulary) : -1;
  if (outside >= 0)
    throw new HttpError(
      400,
      `tokens[${outside}]: token id ${body.tokens[outside]} is outside the model's vocabulary of ${vocabulary} tokens`,
      'invalid_request_error',
      `tokens[${outside}]`,
    );
  const content = await tokensOf(workstation, () => workstation.tokenizer.detokenize(body.tokens), 'tokens');
  sendJson(res, 200, { content });
}
