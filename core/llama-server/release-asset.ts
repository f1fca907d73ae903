/**
 * Which file of a llama.cpp GitHub release holds `llama-server` for a platform, CPU architecture and GPU
 * backend (pure). llama.cpp names its release archives `llama-<tag>-bin-<os>[-<backend>]-<arch>.<zip|tar.gz>`:
 * `ubuntu-x64` (CPU), `ubuntu-vulkan-x64`, `win-cpu-x64`, `win-cuda-12.4-x64` (its CUDA runtime in
 * `cudart-llama-bin-win-cuda-12.4-x64.zip`), `win-vulkan-x64`, `macos-arm64` (Metal). The release's JSON
 * (GitHub's REST API) gives each asset's SHA-256 as `digest`; an asset without one is refused, since the
 * install promises a verified binary.
 */
import { z } from 'zod';

export const ENGINE_BACKENDS = ['cpu', 'vulkan', 'cuda', 'metal'] as const;
export type EngineBackend = (typeof ENGINE_BACKENDS)[number];

export const releaseAssetSchema = z.object({
  name: z.string().min(1).max(512),
  browser_download_url: z.url(),
  size: z.number().int().nonnegative(),
  /** `sha256:<64 hex>`; GitHub computes it for every asset uploaded since 2025. */
  digest: z.string().nullish(),
});
export type ReleaseAsset = z.infer<typeof releaseAssetSchema>;

export const releaseSchema = z.object({ tag_name: z.string(), assets: z.array(releaseAssetSchema).max(1000) });
export type Release = z.infer<typeof releaseSchema>;

/** An asset chosen to install, with its verified-to-be SHA-256 (hex). */
export interface ChosenAsset {
  readonly asset: ReleaseAsset;
  readonly sha256: string;
}

export interface AssetChoice {
  /** The archive with llama-server. */
  readonly archive: ChosenAsset;
  /** More archives unpacked beside it (the CUDA runtime of a Windows CUDA build). */
  readonly extras: readonly ChosenAsset[];
}

export class ReleaseAssetError extends Error {
  override readonly name = 'ReleaseAssetError';
}

const OS_NAMES: Partial<Record<NodeJS.Platform, string>> = { linux: 'ubuntu', win32: 'win', darwin: 'macos' };
const ARCHIVE = /\.(zip|tar\.gz)$/;

/** `llama-<tag>-bin-<rest>.<ext>` → `<rest>`; null for any other file. */
function variantOf(name: string, tag: string): string | null {
  const prefix = `llama-${tag}-bin-`;
  return name.startsWith(prefix) && ARCHIVE.test(name) ? name.slice(prefix.length).replace(ARCHIVE, '') : null;
}

/** The CUDA version in a `win-cuda-12.4-x64` variant, as numbers to compare. */
const cudaVersion = (variant: string): number[] => (/cuda-([\d.]+)-/.exec(variant)?.[1] ?? '0').split('.').map(Number);
const newerFirst = (a: number[], b: number[]): number => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (b[i] ?? 0) - (a[i] ?? 0);
  return 0;
};

function verified(asset: ReleaseAsset): ChosenAsset {
  const sha256 = /^sha256:([0-9a-f]{64})$/i.exec(asset.digest ?? '')?.[1];
  if (!sha256)
    throw new ReleaseAssetError(
      `${asset.name} has no SHA-256 digest in the release, so it cannot be verified; build llama-server from source instead (npm run build:llama-server)`,
    );
  return { asset, sha256: sha256.toLowerCase() };
}

/** The variants a platform, architecture and backend accept, best first. */
function wantedVariants(os: string, arch: string, backend: EngineBackend, variants: readonly string[]): string[] {
  switch (backend) {
    case 'cpu':
      return os === 'macos' ? [] : [os === 'ubuntu' ? `ubuntu-${arch}` : `win-cpu-${arch}`];
    case 'metal':
      return os === 'macos' ? [`macos-${arch}`] : [];
    case 'vulkan':
      return os === 'macos' ? [] : [`${os}-vulkan-${arch}`];
    case 'cuda':
      return variants.filter((v) => v.startsWith(`${os}-cuda-`) && v.endsWith(`-${arch}`)).sort((a, b) => newerFirst(cudaVersion(a), cudaVersion(b)));
  }
}

/** The archive (and extras) to install for `platform`/`arch`/`backend`; an error in words naming what the release has otherwise. */
export function chooseReleaseAsset(release: Release, platform: NodeJS.Platform, arch: string, backend: EngineBackend): AssetChoice {
  const os = OS_NAMES[platform];
  if (!os) throw new ReleaseAssetError(`llama.cpp publishes no llama-server build for ${platform}; build it from source (npm run build:llama-server)`);
  const byVariant = new Map<string, ReleaseAsset>();
  for (const asset of release.assets) {
    const variant = variantOf(asset.name, release.tag_name);
    // Prefer .tar.gz where both are published (unpacked without a zip reader, keeps permissions).
    if (variant !== null && (!byVariant.has(variant) || asset.name.endsWith('.tar.gz'))) byVariant.set(variant, asset);
  }
  const variant = wantedVariants(os, arch, backend, [...byVariant.keys()]).find((v) => byVariant.has(v));
  if (variant === undefined) {
    const available = [...byVariant.keys()].sort().join(', ') || 'none';
    throw new ReleaseAssetError(
      `llama.cpp release ${release.tag_name} has no ${backend} build of llama-server for ${platform} ${arch} (its builds: ${available}); build it from source (npm run build:llama-server)`,
    );
  }
  const extras: ChosenAsset[] = [];
  if (backend === 'cuda' && os === 'win') {
    const runtime = release.assets.find((a) => a.name === `cudart-llama-bin-${variant}.zip`);
    if (!runtime)
      throw new ReleaseAssetError(`llama.cpp release ${release.tag_name} has ${variant} but not its CUDA runtime (cudart-llama-bin-${variant}.zip)`);
    extras.push(verified(runtime));
  }
  return { archive: verified(byVariant.get(variant)!), extras };
}
