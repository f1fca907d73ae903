/**
 * The compiled grammars of recent requests, keyed by their GBNF text: a structured-output client sends
 * the same grammar turn after turn, and llama.cpp parses a grammar each time one is compiled. A grammar
 * that does not parse is a `bad_grammar` request error (llama.cpp's parser writes its reason to the
 * engine's stderr, the engine log); the engine carries on.
 */
import type { Llama, LlamaGrammar } from 'node-llama-cpp';
import { LruMap } from '../common/lru-map.js';
import { EngineError } from './engine-error.js';

/** Grammars kept (least recently used dropped first). */
const CACHED_GRAMMARS = 32;

export class GrammarCache {
  private readonly grammars = new LruMap<string, LlamaGrammar>(CACHED_GRAMMARS);

  /** The compiled grammar for `text`, from the cache or compiled now. */
  async get(llama: Llama, text: string): Promise<LlamaGrammar> {
    const cached = this.grammars.get(text);
    if (cached) return cached;
    let grammar: LlamaGrammar;
    try {
      grammar = await llama.createGrammar({ grammar: text });
    } catch (error) {
      throw new EngineError(
        'bad_grammar',
        `the grammar does not parse as GBNF (llama.cpp: ${(error as Error).message}; its parser's reason is in the engine log)`,
      );
    }
    this.grammars.set(text, grammar);
    return grammar;
  }

  /** Drops every grammar (their Llama instance is being disposed). */
  clear(): void {
    this.grammars.clear();
  }
}
