import { chmodSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type Conf from 'conf';
import { CliError, usageError } from './io.js';

/** One set of credentials. The secret leaves this file only to sign requests. */
export interface Profile {
  base_url: string;
  api_key: string;
  secret: string;
  /**
   * The account's webhook signing secret, saved by `init --local` (which reads it from the
   * store); `webhook listen` verifies with it. The Public API never hands it out.
   */
  webhook_secret?: string;
}

interface ProfileFile {
  current?: string;
  profiles?: Record<string, Profile>;
}

/** `$RPCCTL_CONFIG_DIR`, else the XDG config dir (`$XDG_CONFIG_HOME/rpcctl`, `~/.config/rpcctl`). */
export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.RPCCTL_CONFIG_DIR) return env.RPCCTL_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'rpcctl');
  if (process.platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'rpcctl');
  return join(env.HOME || homedir(), '.config', 'rpcctl');
}

/** What may be shown of a secret: enough to tell two apart, never enough to use. */
export function secretHint(secret: string): string {
  return `${secret.slice(0, Math.min(7, Math.floor(secret.length / 4)))}…`;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function checkProfileName(name: string): string {
  if (!NAME.test(name)) throw usageError(`profile name "${name}" must be 1-64 letters, digits, '.', '_' or '-'`);
  return name;
}

/** Profiles in `config.json` of the config dir, file mode 0600 (it holds secrets). */
export class ProfileStore {
  readonly path: string;
  readonly #conf: Conf<ProfileFile>;

  private constructor(conf: Conf<ProfileFile>) {
    this.#conf = conf;
    this.path = conf.path;
  }

  static async open(env: NodeJS.ProcessEnv): Promise<ProfileStore> {
    const dir = configDir(env);
    const { default: ConfClass } = await import('conf');
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      return new ProfileStore(new ConfClass<ProfileFile>({
        cwd: dir, configName: 'config', projectSuffix: '', configFileMode: 0o600, accessPropertiesByDotNotation: false,
      }));
    } catch (err) {
      throw new CliError(`cannot read the profiles in ${dir}: ${(err as Error).message}`);
    }
  }

  list(): Array<[string, Profile]> {
    return Object.entries(this.#conf.get('profiles') ?? {}).sort(([a], [b]) => a.localeCompare(b));
  }

  get(name: string): Profile | undefined {
    const profiles = this.#conf.get('profiles') ?? {};
    // A name like `toString` must not find Object.prototype's.
    return Object.hasOwn(profiles, name) ? profiles[name] : undefined;
  }

  /** The profile chosen with `profile use`; else the one named `default`, if any. */
  selected(): string | undefined {
    const current = this.#conf.get('current');
    if (current && this.get(current)) return current;
    return this.get('default') ? 'default' : undefined;
  }

  save(name: string, profile: Profile): void {
    this.#conf.set('profiles', { ...this.#conf.get('profiles'), [name]: profile });
    if (!this.selected()) this.#conf.set('current', name);
    this.#lockDown();
  }

  use(name: string): void {
    if (!this.get(name)) throw new CliError(`no profile "${name}" (see: rpcctl profile list)`);
    this.#conf.set('current', name);
    this.#lockDown();
  }

  remove(name: string): boolean {
    const profiles = { ...this.#conf.get('profiles') };
    if (!Object.hasOwn(profiles, name)) return false;
    delete profiles[name];
    this.#conf.set('profiles', profiles);
    if (this.#conf.get('current') === name) this.#conf.delete('current');
    this.#lockDown();
    return true;
  }

  /** conf creates the file 0600; a file the user made by hand is tightened on the next write. */
  #lockDown(): void {
    if (process.platform !== 'win32') chmodSync(this.path, 0o600);
  }
}
