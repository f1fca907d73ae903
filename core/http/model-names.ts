/**
 * Which names select the loaded model in a request's `model` (and in `GET /v1/models/{id}`): its served
 * id (the file name without `.gguf`), its file name with `.gguf`, `"default"`, and the run config's
 * aliases (llama-server's `--alias`). Anything else is refused with the names that would work.
 */

export interface ServedModel {
  /** The id the API answers with: the file name without `.gguf`; '' when no model is loaded. */
  readonly id: string;
  /** The model's path as configured (its file name is a name too). */
  readonly path: string | null;
  readonly aliases: readonly string[];
}

/** Every name that selects `model`, the served id first; none when no model is loaded. */
export function namesOf(model: ServedModel): string[] {
  if (!model.id) return [];
  const fileName = model.path ? model.path.split(/[\\/]/).at(-1)! : `${model.id}.gguf`;
  return [...new Set([model.id, fileName, `${model.id}.gguf`, 'default', ...model.aliases])];
}

/** Whether `name` selects the loaded model. */
export const selectsModel = (model: ServedModel, name: string): boolean => namesOf(model).includes(name);

/** `model "x" not found; …` naming what is served, for a 404. */
export function notServed(model: ServedModel, name: string): string {
  const names = namesOf(model);
  if (names.length === 0) return `model "${name}" not found; no model is loaded`;
  return `model "${name}" not found; this server serves "${model.id}" (also named ${names
    .slice(1)
    .map((n) => `"${n}"`)
    .join(', ')})`;
}
