import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { parseConfig } from '../src/config/index.js';

/**
 * deploy/kubernetes/ checked offline: each object against the Kubernetes (and Prometheus
 * Operator) schemas, then what no schema sees: names and labels that must meet, and the
 * ConfigMap's config.yaml as rpcctl itself reads it.
 */
const dir = new URL('../deploy/kubernetes/', import.meta.url).pathname;
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap as never,
  'v1/Service': Service as never,
  'apps/v1/Deployment': Deployment as never,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget as never,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor as never,
};

interface Obj { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [k: string]: any }

function load(): Array<{ file: string; obj: Obj }> {
  const out: Array<{ file: string; obj: Obj }> = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      expect(doc.errors, file).toEqual([]);
      const obj = doc.toJS() as Obj | null;
      if (obj) out.push({ file, obj });
    }
  }
  return out;
}

function validate(obj: Obj): void {
  const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
  if (!Model) throw new Error(`no schema for ${obj.apiVersion} ${obj.kind}`);
  new Model(obj as never).validate();
}

const objects = load();
const one = (kind: string, name: string): Obj => {
  const found = objects.find((o) => o.obj.kind === kind && o.obj.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in deploy/kubernetes`);
  return found.obj;
};
const matches = (selector: Record<string, string>, labels: Record<string, string> | undefined) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

describe('deploy/kubernetes', () => {
  it('every object is valid against its schema (Deployment, Service, ConfigMap, PodDisruptionBudget, ServiceMonitor)', () => {
    expect(objects.map((o) => o.obj.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Service', 'Service', 'ServiceMonitor']);
    for (const { file, obj } of objects) {
      expect(() => validate(obj), `${file}: ${obj.kind} ${obj.metadata.name}`).not.toThrow();
    }
  });

  it('the schemas do refuse a broken object (the check above can fail)', () => {
    const deployment = structuredClone(one('Deployment', 'rpcctl'));
    deployment.spec.template.spec.containers[0].readinessProbe.httpGet.port = { named: 'api' };
    expect(() => validate(deployment)).toThrow();
    const monitor = structuredClone(one('ServiceMonitor', 'rpcctl'));
    monitor.spec.endpoints = 'metrics';
    expect(() => validate(monitor)).toThrow();
    const pdb = structuredClone(one('PodDisruptionBudget', 'rpcctl'));
    pdb.spec.minAvailable = [1];
    expect(() => validate(pdb)).toThrow();
  });

  it('probes: liveness and startup on /live, readiness on /ready, on the API port; requests and limits set; non-root, read-only root', () => {
    const pod = one('Deployment', 'rpcctl').spec.template.spec;
    const [c] = pod.containers;
    expect(c.livenessProbe.httpGet).toEqual({ path: '/live', port: 'api' });
    expect(c.startupProbe.httpGet).toEqual({ path: '/live', port: 'api' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/ready', port: 'api' });
    expect(c.ports.map((p: { name: string; containerPort: number }) => [p.name, p.containerPort])).toEqual([['api', 8080], ['gateway', 8545], ['metrics', 9464]]);
    expect(c.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(c.resources.limits.memory).toEqual(expect.any(String));
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
    expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    // The image's user owns the data volume's mount point.
    expect(readFileSync(new URL('../Containerfile', import.meta.url), 'utf8')).toMatch(/useradd --system --uid 10001 /);
  });

  it('secrets come from the Secret "rpcctl", never from the ConfigMap', () => {
    const c = one('Deployment', 'rpcctl').spec.template.spec.containers[0];
    const fromSecret = Object.fromEntries(c.env.map((e: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }) => [e.name, e.valueFrom?.secretKeyRef]));
    expect(fromSecret).toMatchObject({
      RPCCTL_MASTER_KEY: { name: 'rpcctl', key: 'master-key' },
      RPCCTL_DATABASE_URL: { name: 'rpcctl', key: 'database-url' },
      RPCCTL_REDIS_URL: { name: 'rpcctl', key: 'redis-url' },
    });
    expect(c.env.every((e: { value?: string }) => e.value === undefined)).toBe(true);
    expect(objects.some((o) => o.obj.kind === 'Secret')).toBe(false);
  });

  it('names and labels meet: the selector, the Services\' target ports, the PDB, the ServiceMonitor, the ConfigMap volume', () => {
    const deployment = one('Deployment', 'rpcctl');
    const podLabels = deployment.spec.template.metadata.labels;
    expect(matches(deployment.spec.selector.matchLabels, podLabels)).toBe(true);
    const portNames = deployment.spec.template.spec.containers[0].ports.map((p: { name: string }) => p.name);
    for (const name of ['rpcctl', 'rpcctl-metrics']) {
      const svc = one('Service', name);
      expect(matches(svc.spec.selector, podLabels), name).toBe(true);
      for (const p of svc.spec.ports) expect(portNames, `${name} ${p.name}`).toContain(p.targetPort);
    }
    // Clients' Service does not carry the metrics port; the ServiceMonitor finds only the metrics one.
    expect(one('Service', 'rpcctl').spec.ports.map((p: { name: string }) => p.name)).toEqual(['api', 'gateway']);
    const monitor = one('ServiceMonitor', 'rpcctl');
    const monitored = objects.filter((o) => o.obj.kind === 'Service' && matches(monitor.spec.selector.matchLabels, o.obj.metadata.labels));
    expect(monitored.map((o) => o.obj.metadata.name)).toEqual(['rpcctl-metrics']);
    expect(monitor.spec.endpoints[0].port).toBe('metrics');
    expect(matches(one('PodDisruptionBudget', 'rpcctl').spec.selector.matchLabels, podLabels)).toBe(true);
    const configVolume = deployment.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'config');
    expect(one('ConfigMap', configVolume.configMap.name).data['config.yaml']).toBeDefined();
  });

  it('the ConfigMap\'s config.yaml is one rpcctl accepts, listening on all the pod\'s interfaces', () => {
    const text = one('ConfigMap', 'rpcctl').data['config.yaml'] as string;
    const config = parseConfig(parse(text), 'configmap config.yaml');
    expect(config.api).toMatchObject({ host: '0.0.0.0', port: 8080 });
    expect(config.gateway).toMatchObject({ host: '0.0.0.0', port: 8545 });
    expect(config.metrics.listen).toBe('0.0.0.0:9464');
  });
});
