import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeUnless } from './helpers/skips.js';

/**
 * deploy/systemd/rpcctl.service through `systemd-analyze verify` (PID 1 need not be systemd).
 * verify only warns on a bad value or an unknown key, so any output at all fails the check. It
 * runs against a staged root holding the system units and an executable at ExecStart's path.
 */
const unitFile = new URL('../deploy/systemd/rpcctl.service', import.meta.url).pathname;
const unit = readFileSync(unitFile, 'utf8');
const analyze = spawnSync('systemd-analyze', ['--version']).status === 0 ? 'systemd-analyze' : undefined;
const systemUnits = ['/usr/lib/systemd/system', '/lib/systemd/system'].find((d) => existsSync(join(d, 'sysinit.target')));
const skip = !analyze ? 'systemd-analyze is not installed (Debian: systemd)' : !systemUnits ? 'no system units (sysinit.target) on this machine' : undefined;

const roots: string[] = [];
afterAll(() => { for (const r of roots) rmSync(r, { recursive: true, force: true }); });

function stage(text: string, opts: { execStart?: boolean } = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'rpcctl-unit-'));
  roots.push(root);
  mkdirSync(join(root, 'usr/lib/systemd'), { recursive: true });
  cpSync(systemUnits!, join(root, 'usr/lib/systemd/system'), { recursive: true, dereference: false, verbatimSymlinks: true });
  mkdirSync(join(root, 'etc/systemd/system'), { recursive: true });
  writeFileSync(join(root, 'etc/systemd/system/rpcctl.service'), text);
  mkdirSync(join(root, 'bin'), { recursive: true });
  copyFileSync('/bin/kill', join(root, 'bin/kill'));
  if (opts.execStart !== false) {
    mkdirSync(join(root, 'usr/local/bin'), { recursive: true });
    writeFileSync(join(root, 'usr/local/bin/rpcctl'), '#!/bin/sh\n');
    chmodSync(join(root, 'usr/local/bin/rpcctl'), 0o755);
  }
  return root;
}

function verify(root: string) {
  const r = spawnSync(analyze!, ['verify', `--root=${root}`, join(root, 'etc/systemd/system/rpcctl.service')], { encoding: 'utf8', env: { ...process.env, SYSTEMD_LOG_COLOR: '0' } });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

describeUnless(skip, 'deploy/systemd/rpcctl.service', () => {
  it('passes systemd-analyze verify with no output at all', () => {
    expect(verify(stage(unit))).toEqual({ status: 0, output: '' });
  });

  it('the check fails on a bad value (a warning only, exit 0) and on a missing ExecStart binary (exit 1)', () => {
    const bad = verify(stage(unit.replace('ProtectSystem=strict', 'ProtectSystem=stricter')));
    expect(bad.output).toMatch(/ProtectSystem|protect system/i);
    const missing = verify(stage(unit, { execStart: false }));
    expect(missing.status).not.toBe(0);
    expect(missing.output).toMatch(/\/usr\/local\/bin\/rpcctl/);
  });

  it('is hardened: own user, state and config directories, strict read-only system, no new privileges, reload by SIGHUP, secrets as credentials', () => {
    const settings = unit.split('\n').filter((l) => /^\w+=/.test(l)).map((l) => l.trim());
    for (const expected of [
      'DynamicUser=yes', 'StateDirectory=rpcctl', 'ConfigurationDirectory=rpcctl', 'ProtectSystem=strict', 'NoNewPrivileges=yes',
      'ProtectHome=yes', 'PrivateTmp=yes', 'CapabilityBoundingSet=', 'ExecReload=/bin/kill -HUP $MAINPID', 'KillSignal=SIGTERM',
      'LoadCredential=secrets:/etc/rpcctl/credentials',
    ]) expect(settings).toContain(expected);
    expect(settings.find((s) => s.startsWith('ExecStart='))).toBe('ExecStart=/usr/local/bin/rpcctl serve --config ${CONFIGURATION_DIRECTORY}/config.yaml');
    // Nothing but the state directory is writable: no ReadWritePaths= opening more.
    expect(settings.some((s) => s.startsWith('ReadWritePaths='))).toBe(false);
  });
});
