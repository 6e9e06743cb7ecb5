import { CliError, EXIT, usageError } from './io.js';

// Read on every command: built-ins through process.getBuiltinModule, not an ESM import, whose
// facade reads every export (node:fs's then loads fs/promises, which nothing here needs).
const { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } = process.getBuiltinModule('node:fs');
const { homedir } = process.getBuiltinModule('node:os');
const { dirname, join } = process.getBuiltinModule('node:path');

/** One set of credentials. The secret leaves this file only to sign requests. */
/** A profile name that names none: exit 4 wherever it is given (`-p NAME`, `profile use NAME`), as for any credentials that do not work. */
export const noProfile = (name: string) => new CliError(`no profile "${name}" (see: rpcctl profile list)`, EXIT.auth);

export interface Profile {
  base_url: string;
  api_key: string;
  secret: string;
  /**
   * The account's webhook signing secret, saved by `init --local` (which reads it from the
   * store); `webhook listen` verifies with it. The Public API never hands it out.
   */
  webhook_secret?: string;
  /** The gateway's base URL, so `rpc UUID` needs no Public API call (saved by `init --local`). */
  gateway_url?: string;
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

/**
 * Profiles in `config.json` of the config dir, file mode 0600 (it holds secrets). A plain JSON
 * file written atomically (temp file, then rename): read on every command, so it must load
 * fast, and a crash mid-write must not leave half a file.
 */
export class ProfileStore {
  readonly path: string;
  #data: ProfileFile;

  private constructor(path: string, data: ProfileFile) {
    this.path = path;
    this.#data = data;
  }

  static async open(env: NodeJS.ProcessEnv): Promise<ProfileStore> {
    const dir = configDir(env);
    const path = join(dir, 'config.json');
    let text: string | undefined;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new CliError(`cannot read the profiles in ${path}: ${(err as Error).message}`);
    }
    let data: ProfileFile = {};
    if (text !== undefined && text.trim() !== '') {
      try {
        data = JSON.parse(text) as ProfileFile;
      } catch (err) {
        throw new CliError(`${path} is not valid JSON (${(err as Error).message}); fix or remove it`);
      }
      if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new CliError(`${path} must hold a JSON object`);
    }
    return new ProfileStore(path, data);
  }

  list(): Array<[string, Profile]> {
    return Object.entries(this.#data.profiles ?? {}).sort(([a], [b]) => a.localeCompare(b));
  }

  get(name: string): Profile | undefined {
    const profiles = this.#data.profiles ?? {};
    // A name like `toString` must not find Object.prototype's.
    return Object.hasOwn(profiles, name) ? profiles[name] : undefined;
  }

  /** The profile chosen with `profile use`; else the one named `default`, if any. */
  selected(): string | undefined {
    const current = this.#data.current;
    if (current && this.get(current)) return current;
    return this.get('default') ? 'default' : undefined;
  }

  save(name: string, profile: Profile): void {
    this.#data = { ...this.#data, profiles: { ...this.#data.profiles, [name]: profile } };
    if (!this.selected()) this.#data.current = name;
    this.#write();
  }

  use(name: string): void {
    if (!this.get(name)) throw noProfile(name);
    this.#data = { ...this.#data, current: name };
    this.#write();
  }

  remove(name: string): boolean {
    const profiles = { ...this.#data.profiles };
    if (!Object.hasOwn(profiles, name)) return false;
    delete profiles[name];
    this.#data = { ...this.#data, profiles };
    if (this.#data.current === name) delete this.#data.current;
    this.#write();
    return true;
  }

  #write(): void {
    const dir = dirname(this.path);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const temp = `${this.path}.${process.pid}.tmp`;
      writeFileSync(temp, `${JSON.stringify(this.#data, null, '\t')}\n`, { mode: 0o600 });
      // A file the user made by hand is tightened too: it holds secrets.
      if (process.platform !== 'win32') chmodSync(temp, 0o600);
      renameSync(temp, this.path);
    } catch (err) {
      throw new CliError(`cannot save the profiles in ${this.path}: ${(err as Error).message}`);
    }
  }
}
