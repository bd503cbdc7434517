// k8s-validate.mjs - validates deploy/k8s offline (kubectl cannot: it
// needs an API server, and kubeconform is not packaged for Debian or npm).
//
//   node deploy/lint/k8s-validate.mjs deploy/k8s
//
// 1. Schema: every built-in resource goes through the JSON-schema
//    validator that kubernetes-models (npm, generated from the Kubernetes
//    OpenAPI spec) ships for its kind: types, required fields, enums.
// 2. Strict fields: those validators allow unknown keys, so a typo such as
//    "resorces:" would pass; every key is also checked against the
//    TypeScript interfaces of the same package (kubeconform -strict).
// 3. Custom resources (ServiceMonitor, CloudNativePG Cluster) get a
//    structural check of the fields we rely on.
// 4. Policy: what issue 6 and SERVICE.md 2.14 ask of these manifests
//    (probes, drain timing, non-root, read-only root, resources, PDB,
//    selectors that match, the probe's token from a Secret...).
//
// Prints one line per finding and a summary; exit 1 on any error.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

const require = createRequire(import.meta.url);
const modelsDir = path.dirname(require.resolve("kubernetes-models/package.json"));
const nodeModules = path.dirname(modelsDir);
const errors = [];
const notes = [];
const err = (where, msg) => errors.push(`${where}: ${msg}`);

// ---- loading --------------------------------------------------------------

function yamlFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return yamlFiles(p);
    return /\.ya?ml$/.test(e.name) ? [p] : [];
  });
}

function load(file) {
  const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"), { uniqueKeys: true });
  const out = [];
  docs.forEach((d, i) => {
    if (d.errors.length) {
      d.errors.forEach((e) => err(`${file}#${i}`, `YAML: ${e.message}`));
      return;
    }
    const obj = d.toJS();
    if (obj !== null && obj !== undefined) out.push({ file, index: i, obj });
  });
  return out;
}

// ---- 1. schema ------------------------------------------------------------

function modelPath(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  return group ? `kubernetes-models/${group}/${version}/${kind}` : `kubernetes-models/${version}/${kind}`;
}

async function schemaCheck(where, obj) {
  let mod;
  try {
    mod = await import(modelPath(obj.apiVersion, obj.kind));
  } catch {
    return null; // not a built-in kind
  }
  const Model = mod[obj.kind];
  try {
    new Model(obj).validate();
  } catch (e) {
    err(where, `schema: ${e.message}`);
  }
  return modelPath(obj.apiVersion, obj.kind);
}

// ---- 2. strict fields from the .d.ts interfaces ---------------------------

const ifaceCache = new Map();

// Finds the .d.ts of an import specifier relative to the file importing it.
function resolveDts(spec, fromFile) {
  let base;
  if (spec.startsWith(".")) base = path.resolve(path.dirname(fromFile), spec);
  else base = path.join(nodeModules, spec);
  base = base.replace(/\.js$/, "");
  for (const c of [`${base}.d.ts`, path.join(base, "index.d.ts")]) if (fs.existsSync(c)) return c;
  return null;
}

// Top-level properties of the first "export interface" of a .d.ts, as
// {name: typeText}, plus the file's imports {alias: file}; null for a type
// alias (string, IntOrString, Quantity...: nothing to check inside).
function parseInterface(file) {
  if (ifaceCache.has(file)) return ifaceCache.get(file);
  const src = fs.readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
  const imports = {};
  for (const m of src.matchAll(/import\s*\{([^}]*)\}\s*from\s*"([^"]+)"/g)) {
    for (const name of m[1].split(",").map((s) => s.trim()).filter(Boolean)) {
      const alias = name.split(/\s+as\s+/).pop();
      imports[alias] = resolveDts(m[2], file);
    }
  }
  const start = src.search(/export interface \w+(\s+extends\s+[\w, ]+)?\s*\{/);
  let result = null;
  if (start >= 0) {
    let i = src.indexOf("{", start) + 1;
    let depth = 0;
    let body = "";
    for (; i < src.length; i++) {
      const c = src[i];
      if (c === "{" || c === "<" || c === "(") depth++;
      if (c === "}" || c === ">" || c === ")") {
        if (depth === 0) break;
        depth--;
      }
      body += c;
    }
    const props = {};
    // Split the body at top-level semicolons.
    let d = 0;
    let cur = "";
    for (const c of body) {
      if ("{<(".includes(c)) d++;
      if ("}>)".includes(c)) d--;
      if (c === ";" && d === 0) {
        const m = cur.match(/^\s*"?([\w$.-]+)"?\??\s*:\s*([\s\S]*)$/);
        if (m) props[m[1]] = m[2].trim();
        cur = "";
      } else cur += c;
    }
    result = { props, imports, file };
  }
  ifaceCache.set(file, result);
  return result;
}

function checkType(where, value, type, iface) {
  type = type.trim();
  let m;
  if ((m = type.match(/^Array<([\s\S]*)>$/))) {
    if (Array.isArray(value)) value.forEach((v, i) => checkType(`${where}[${i}]`, v, m[1], iface));
    return;
  }
  if ((m = type.match(/^\{\s*\[key: string\]:\s*([\s\S]*?);?\s*\}$/))) {
    if (value && typeof value === "object")
      for (const [k, v] of Object.entries(value)) checkType(`${where}.${k}`, v, m[1], iface);
    return;
  }
  if (/^I\w+$/.test(type) && iface.imports[type]) {
    const sub = parseInterface(iface.imports[type]);
    if (sub && value && typeof value === "object" && !Array.isArray(value)) checkObject(where, value, sub);
  }
}

function checkObject(where, obj, iface) {
  for (const [k, v] of Object.entries(obj)) {
    if (!(k in iface.props)) {
      err(where, `unknown field "${k}" (known: ${Object.keys(iface.props).join(", ")})`);
      continue;
    }
    checkType(`${where}.${k}`, v, iface.props[k], iface);
  }
}

function strictCheck(where, obj, model) {
  const dts = resolveDts(model, path.join(nodeModules, "x"));
  const iface = dts && parseInterface(dts);
  if (!iface) {
    err(where, `no typings for ${model}`);
    return;
  }
  checkObject(where, obj, iface);
}

// ---- 3. custom resources ---------------------------------------------------

function need(where, obj, dotted) {
  const v = dotted.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);
  if (v === undefined || v === null || v === "") err(where, `${dotted} is required`);
  return v;
}

const customChecks = {
  "monitoring.coreos.com/v1/ServiceMonitor": (where, o) => {
    need(where, o, "spec.selector.matchLabels");
    const eps = need(where, o, "spec.endpoints");
    (eps || []).forEach((e, i) => {
      if (!e.port && !e.targetPort) err(where, `spec.endpoints[${i}] needs port`);
      for (const k of Object.keys(e))
        if (!["port", "targetPort", "path", "interval", "scrapeTimeout", "scheme", "relabelings", "metricRelabelings", "honorLabels"].includes(k))
          err(where, `spec.endpoints[${i}]: unexpected field "${k}"`);
    });
  },
  "postgresql.cnpg.io/v1/Cluster": (where, o) => {
    const n = need(where, o, "spec.instances");
    if (n !== undefined && !(Number.isInteger(n) && n >= 1)) err(where, "spec.instances must be an integer >= 1");
    need(where, o, "spec.storage.size");
    need(where, o, "spec.bootstrap.initdb.database");
    // replicas acknowledge commits: a 2xx survives a failover (review s19a F6)
    if (n > 1 && !(o.spec?.postgresql?.synchronous?.number >= 1) && !(o.spec?.minSyncReplicas >= 1))
      err(where, "a cluster with replicas needs synchronous replication (spec.postgresql.synchronous.number >= 1)");
  },
};

// ---- 4. policy -------------------------------------------------------------

const podSpecOf = (o) =>
  o.kind === "CronJob" ? o.spec?.jobTemplate?.spec?.template?.spec : o.spec?.template?.spec;
const podLabelsOf = (o) =>
  (o.kind === "CronJob" ? o.spec?.jobTemplate?.spec?.template : o.spec?.template)?.metadata?.labels || {};
const matches = (selector, labels) =>
  selector && Object.entries(selector).every(([k, v]) => labels[k] === v);

function argValue(c, flag) {
  const args = [...(c.command || []), ...(c.args || [])];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === flag) return args[i + 1];
    if (args[i].startsWith(`${flag}=`)) return args[i].slice(flag.length + 1);
  }
  return undefined;
}

function podPolicy(where, o) {
  const spec = podSpecOf(o);
  if (!spec) return;
  const psc = spec.securityContext || {};
  if (psc.runAsNonRoot !== true) err(where, "pod securityContext.runAsNonRoot must be true");
  if (!(psc.runAsUser > 0)) err(where, "pod securityContext.runAsUser must be a non-zero uid");
  if (psc.seccompProfile?.type !== "RuntimeDefault") err(where, "pod seccompProfile must be RuntimeDefault");
  if (spec.automountServiceAccountToken !== false) err(where, "automountServiceAccountToken must be false");
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC) err(where, "no host namespaces");
  for (const v of spec.volumes || []) if (v.hostPath) err(where, `volume ${v.name}: no hostPath`);
  for (const c of [...(spec.initContainers || []), ...(spec.containers || [])]) {
    const cw = `${where} container ${c.name}`;
    const sc = c.securityContext || {};
    if (sc.readOnlyRootFilesystem !== true) err(cw, "securityContext.readOnlyRootFilesystem must be true");
    if (sc.allowPrivilegeEscalation !== false) err(cw, "securityContext.allowPrivilegeEscalation must be false");
    if (sc.privileged) err(cw, "must not be privileged");
    if (!(sc.capabilities?.drop || []).includes("ALL")) err(cw, 'securityContext.capabilities.drop must include "ALL"');
    if (!c.resources?.requests?.cpu || !c.resources?.requests?.memory) err(cw, "resources.requests cpu and memory");
    if (!c.resources?.limits?.memory) err(cw, "resources.limits.memory");
    if (!/:[\w.-]+$|@sha256:/.test(c.image || "") || /:latest$/.test(c.image)) err(cw, `image "${c.image}" needs a pinned tag`);
  }
}

const seconds = (v) => (typeof v === "number" ? v : parseInt(v, 10));

function daemonPolicy(where, d, all) {
  if (!(d.spec.replicas >= 2)) err(where, "replicas must be >= 2");
  const spec = d.spec.template.spec;
  const c = spec.containers.find((x) => x.name === "gpusizerd") || spec.containers[0];
  if (c.readinessProbe?.httpGet?.path !== "/readyz") err(where, "readinessProbe must GET /readyz");
  if (c.livenessProbe?.httpGet?.path !== "/healthz") err(where, "livenessProbe must GET /healthz");
  const pre = c.lifecycle?.preStop;
  const preSleep = pre?.sleep ? seconds(pre.sleep.seconds)
    : pre?.exec?.command?.[0] === "sleep" ? seconds(pre.exec.command[1]) : NaN;
  if (!(preSleep > 0)) err(where, "lifecycle.preStop must sleep (exec sleep N or sleep.seconds)");
  const delay = seconds(argValue(c, "--drain-delay") ?? NaN);
  const timeout = seconds(argValue(c, "--drain-timeout") ?? 20);
  if (!(delay > 0)) err(where, "args need --drain-delay N (N > 0)");
  const grace = spec.terminationGracePeriodSeconds ?? 30;
  if (!(grace > preSleep + delay + timeout))
    err(where, `terminationGracePeriodSeconds ${grace} must exceed preStop ${preSleep} + drain-delay ${delay} + drain-timeout ${timeout}`);
  else notes.push(`${where}: grace ${grace}s > preStop ${preSleep}s + drain-delay ${delay}s + drain-timeout ${timeout}s`);
  const env = c.env || [];
  const db = env.find((e) => e.name === "DATABASE_URL");
  if (!db?.valueFrom?.secretKeyRef) err(where, "DATABASE_URL must come from a Secret");
  const labels = podLabelsOf(d);
  const ports = new Set((c.ports || []).map((p) => p.name));
  const pdbs = all.filter((x) => x.obj.kind === "PodDisruptionBudget" && matches(x.obj.spec?.selector?.matchLabels, labels));
  if (!pdbs.length) err(where, "no PodDisruptionBudget selects its pods");
  for (const p of pdbs) if (p.obj.spec.minAvailable !== undefined && !(p.obj.spec.minAvailable < d.spec.replicas))
    err(`${p.file}`, "minAvailable must be below replicas, or drains block");
  const svcs = all.filter((x) => x.obj.kind === "Service" && matches(x.obj.spec?.selector, labels));
  if (!svcs.length) err(where, "no Service selects its pods");
  for (const s of svcs)
    for (const p of s.obj.spec.ports || [])
      if (typeof p.targetPort === "string" && !ports.has(p.targetPort))
        err(s.file, `targetPort "${p.targetPort}" is not a port of the pods`);
  for (const sm of all.filter((x) => x.obj.kind === "ServiceMonitor")) {
    const svc = svcs.find((s) => matches(sm.obj.spec.selector.matchLabels, s.obj.metadata.labels || {}));
    if (!svc) err(sm.file, "selects no Service of gpusizerd");
    else for (const e of sm.obj.spec.endpoints)
      if (e.port && !(svc.obj.spec.ports || []).some((p) => p.name === e.port)) err(sm.file, `port "${e.port}" is not a Service port`);
  }
  for (const h of all.filter((x) => x.obj.kind === "HorizontalPodAutoscaler")) {
    if (h.obj.spec.scaleTargetRef.name !== d.metadata.name) err(h.file, "scaleTargetRef is not the Deployment");
    if (!(h.obj.spec.minReplicas >= 2)) err(h.file, "minReplicas must be >= 2");
  }
}

function probePolicy(where, o) {
  const spec = podSpecOf(o);
  const aff = JSON.stringify(spec.affinity || {}) + JSON.stringify(spec.nodeSelector || {});
  if (!aff.includes("nvidia.com/gpu")) err(where, "must be placed on nodes with nvidia.com/gpu (affinity or nodeSelector)");
  const c = spec.containers[0];
  const tokenFile = argValue(c, "--token-file") ?? (c.env || []).find((e) => e.name === "GPUSIZER_TOKEN_FILE")?.value;
  if (!tokenFile) err(where, "no --token-file (or GPUSIZER_TOKEN_FILE for the loop)");
  const mount = (c.volumeMounts || []).find((m) => tokenFile && tokenFile.startsWith(`${m.mountPath}/`));
  const vol = mount && (spec.volumes || []).find((v) => v.name === mount.name);
  if (!vol?.secret?.secretName) err(where, `the token file ${tokenFile} must be in a Secret volume`);
  const server = argValue(c, "--server") ?? (c.env || []).find((e) => e.name === "GPUSIZER_URL")?.value;
  if (!server) err(where, "no --server (or GPUSIZER_URL)");
}

// ---- main ------------------------------------------------------------------

async function main() {
  const dir = process.argv[2] || "deploy/k8s";
  const files = yamlFiles(dir).sort();
  const all = files.filter((f) => path.basename(f) !== "kustomization.yaml").flatMap(load);
  let schema = 0;
  let custom = 0;
  for (const { file, index, obj } of all) {
    const where = `${file}#${index} ${obj.kind}/${obj.metadata?.name}`;
    if (!obj.apiVersion || !obj.kind || !obj.metadata?.name) {
      err(where, "apiVersion, kind and metadata.name are required");
      continue;
    }
    if (obj.metadata.namespace !== undefined && obj.metadata.namespace !== "gpusizer" && obj.kind !== "Namespace")
      err(where, `namespace "${obj.metadata.namespace}" (expected gpusizer)`);
    const model = await schemaCheck(where, obj);
    if (model) {
      strictCheck(where, obj, model);
      schema++;
    } else if (customChecks[`${obj.apiVersion}/${obj.kind}`]) {
      customChecks[`${obj.apiVersion}/${obj.kind}`](where, obj);
      custom++;
    } else {
      err(where, `unknown kind ${obj.apiVersion}/${obj.kind}: no schema and no structural check`);
    }
    if (["Deployment", "DaemonSet", "Job", "CronJob", "StatefulSet"].includes(obj.kind)) podPolicy(where, obj);
    if (obj.kind === "Deployment" && obj.metadata.name === "gpusizerd") daemonPolicy(where, obj, all);
    if ((obj.kind === "DaemonSet" || obj.kind === "CronJob") && /probe/.test(obj.metadata.name)) probePolicy(where, obj);
    if (obj.kind === "Job" && /migrate/.test(obj.metadata.name)) {
      const c = obj.spec.template.spec.containers[0];
      if ((c.args || [])[0] !== "migrate") err(where, 'the migration Job must run "gpusizerd migrate"');
      if (obj.spec.template.spec.restartPolicy !== "Never") err(where, "restartPolicy must be Never");
    }
  }
  for (const need of ["Deployment", "Service", "PodDisruptionBudget", "Job"])
    if (!all.some((x) => x.obj.kind === need)) err(dir, `no ${need}`);
  if (!all.some((x) => /probe/.test(x.obj.metadata?.name || "") && ["DaemonSet", "CronJob"].includes(x.obj.kind)))
    err(dir, "no probe DaemonSet or CronJob");
  // kustomization.yaml: every listed resource exists.
  const kpath = path.join(dir, "kustomization.yaml");
  if (fs.existsSync(kpath)) {
    const k = YAML.parse(fs.readFileSync(kpath, "utf8"));
    for (const r of k.resources || []) if (!fs.existsSync(path.join(dir, r))) err(kpath, `resource ${r} does not exist`);
  }
  for (const n of notes) console.log(`note: ${n}`);
  for (const e of errors) console.log(`error: ${e}`);
  console.log(`k8s-validate: ${all.length} objects in ${files.length} files (${schema} schema+strict, ${custom} custom): ${errors.length} error(s)`);
  process.exit(errors.length ? 1 : 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
