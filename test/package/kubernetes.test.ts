import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/processes.js';

// The kustomize base, rendered as `kubectl apply -k` would render it (no cluster here), and read part by part.

interface Resource {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- Kubernetes objects, read by path
}

describe('the Kubernetes manifests (deploy/kubernetes/base)', () => {
  let resources: Resource[];
  const named = (kind: string, name: string) => {
    const found = resources.find((r) => r.kind === kind && r.metadata.name === name);
    expect(found, `${kind} ${name}`).toBeDefined();
    return found!;
  };

  beforeAll(() => {
    const rendered = spawnSync('kubectl', ['kustomize', path.join(REPO_ROOT, 'deploy/kubernetes/base')], { encoding: 'utf8' });
    expect(rendered.status, rendered.stderr).toBe(0);
    resources = parseAllDocuments(rendered.stdout).map((d) => d.toJS() as Resource);
  });

  it('renders a migration Job, the API and worker Deployments with probes and resources, their Services and budgets', () => {
    expect(resources.map((r) => r.kind).sort()).toEqual(
      ['ConfigMap', 'Deployment', 'Deployment', 'Job', 'PodDisruptionBudget', 'PodDisruptionBudget', 'PrometheusRule', 'Service', 'Service', 'ServiceMonitor'].sort(),
    );
    expect(named('Job', 'alert-webhooks-migrate').spec.template.spec.containers[0].args).toEqual(['migrate']);
    for (const [name, role, port] of [['alert-webhooks-api', 'api', 'http'], ['alert-webhooks-worker', 'worker', 'metrics']] as const) {
      const deployment = named('Deployment', name);
      const pod = deployment.spec.template.spec;
      const container = pod.containers[0];
      expect(container.args).toEqual(['serve']);
      expect(container.env).toContainEqual({ name: 'ROLE', value: role });
      expect(container.livenessProbe.httpGet).toEqual({ path: '/health/live', port });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/health/ready', port });
      expect(container.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
      // The key comes from the Secret, as a file.
      expect(container.envFrom[0].configMapRef.name).toMatch(/^alert-webhooks-/); // the generated ConfigMap, hashed
      expect(pod.volumes.find((v: { name: string }) => v.name === 'secrets-key').secret.secretName).toBe('alert-webhooks');
      // Each budget selects its own pods.
      const budget = named('PodDisruptionBudget', name);
      expect(budget.spec.minAvailable).toBe(1);
      expect(budget.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    }
    const configMap = resources.find((r) => r.kind === 'ConfigMap')! as unknown as { data: Record<string, string> };
    expect(configMap.data.SECRETS_KEY_FILE).toBe('/run/secrets/alert-webhooks/secrets-key');
    expect(named('Service', 'alert-webhooks-api').spec.ports[0]).toMatchObject({ name: 'http', port: 3000 });
    expect(named('Service', 'alert-webhooks-worker-metrics').spec.ports[0]).toMatchObject({ name: 'metrics', port: 9464 });
  });

  it('scrapes both roles with the METRICS_TOKEN bearer, and carries the alert rules of docs/operations.md', () => {
    const monitor = named('ServiceMonitor', 'alert-webhooks');
    expect(monitor.spec.endpoints.map((e: { port: string }) => e.port).sort()).toEqual(['http', 'metrics']);
    for (const endpoint of monitor.spec.endpoints) expect(endpoint.bearerTokenSecret).toEqual({ name: 'alert-webhooks', key: 'METRICS_TOKEN' });
    const operations = readFileSync(path.join(REPO_ROOT, 'docs/operations.md'), 'utf8');
    const section = operations.slice(operations.indexOf('## Alert rules'));
    const documented = parse(/```yaml\n([\s\S]*?)```/.exec(section)![1]!) as { groups: unknown };
    expect(named('PrometheusRule', 'alert-webhooks').spec.groups).toEqual(documented.groups);
  });
});
