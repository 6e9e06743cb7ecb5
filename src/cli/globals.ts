import type { Command } from 'commander';

// A leaf: every command group's run file needs the global options, and program.ts (which loads
// every group) must not be what they import, or the whole command tree is one import circle.

/** Options every command accepts. */
export interface GlobalOptions {
  json?: boolean;
  color?: boolean;
  /** Use this saved profile (see context.ts for the precedence). */
  profile?: string;
  /** Public API base URL for this run. */
  baseUrl?: string;
  /** jq filter for the JSON output; implies --json. */
  jq?: string;
  /** Seconds one Public API call may take, retries included. */
  timeout?: string;
}

/** The merged global and command options of an action. */
export function optionsOf<T>(cmd: Command): T & GlobalOptions {
  return cmd.optsWithGlobals() as T & GlobalOptions;
}
