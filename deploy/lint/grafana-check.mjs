// grafana-check.mjs - structural check of the Grafana dashboard (no
// dependencies; Grafana itself cannot run here).
//
//   node deploy/lint/grafana-check.mjs DASHBOARD.json [RULES_OUT.yaml]
//
// Checks the JSON model (unique ids, 24-column grid without overlaps,
// every panel with targets and a datasource that is one of the dashboard's
// datasource variables, variables defined before use), that every metric
// a PromQL query names is one server/metrics.c exports (with the labels it
// has), and that every table a SQL query reads is created by migrations/.
// With RULES_OUT, writes every PromQL expression as a Prometheus recording
// rule (Grafana variables substituted) so that `promtool check rules` can
// parse them. Exit 1 on any error.
import fs from "node:fs";
import path from "node:path";

const [, , dashFile, rulesOut] = process.argv;
const top = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const errors = [];
const err = (where, msg) => errors.push(`${where}: ${msg}`);

const dash = JSON.parse(fs.readFileSync(dashFile, "utf8"));
for (const k of ["title", "uid", "schemaVersion", "panels", "templating"])
  if (dash[k] === undefined) err("dashboard", `missing "${k}"`);

// Metric names and labels exported by server/metrics.c.
const metricsSrc = fs.readFileSync(path.join(top, "server/metrics.c"), "utf8");
const metrics = new Set();
for (const m of metricsSrc.matchAll(/# TYPE (gpusizer_\w+) (\w+)/g)) {
  metrics.add(m[1]);
  if (m[2] === "histogram") ["_bucket", "_sum", "_count"].forEach((s) => metrics.add(m[1] + s));
}
const labels = new Set(["job", "instance", "le", "__name__"]);
for (const m of metricsSrc.matchAll(/(\w+)=\\"/g)) labels.add(m[1]);
metrics.add("up");

// Tables and views created by the migrations.
const tables = new Set();
for (const f of fs.readdirSync(path.join(top, "migrations")))
  for (const m of fs.readFileSync(path.join(top, "migrations", f), "utf8").matchAll(/CREATE (?:TABLE|VIEW) (?:IF NOT EXISTS )?(\w+)/gi))
    tables.add(m[1].toLowerCase());

// Variables.
const vars = new Map();
for (const v of dash.templating?.list || []) {
  if (vars.has(v.name)) err("templating", `variable "${v.name}" twice`);
  vars.set(v.name, v);
}
const dsVars = new Map([...vars.values()].filter((v) => v.type === "datasource").map((v) => [v.name, v.query]));

function checkDatasource(where, ds) {
  if (!ds || typeof ds !== "object") return err(where, "no datasource");
  const m = /^\$\{(\w+)\}$/.exec(ds.uid || "");
  if (!m || !dsVars.has(m[1])) return err(where, `datasource uid "${ds.uid}" is not a datasource variable`);
  if (dsVars.get(m[1]) !== ds.type) err(where, `datasource type ${ds.type} but variable ${m[1]} is ${dsVars.get(m[1])}`);
}

function checkVars(where, text) {
  for (const m of text.matchAll(/\$\{?(\w+)/g)) {
    const name = m[1];
    if (name.startsWith("__")) continue; // Grafana's own: $__interval, $__timeFilter...
    if (!vars.has(name)) err(where, `variable $${name} is not defined`);
  }
}

const promExprs = [];
function checkProm(where, expr) {
  checkVars(where, expr);
  const stripped = expr.replace(/"[^"]*"/g, '""');
  for (const m of stripped.matchAll(/\b([a-zA-Z_:][\w:]*)\b(?!\s*\()/g)) {
    const w = m[1];
    if (/^gpusizer_/.test(w) && !metrics.has(w)) err(where, `metric ${w} is not exported by server/metrics.c`);
  }
  for (const m of stripped.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g))
    for (const l of m[1].split(",").map((s) => s.trim()).filter(Boolean))
      if (!labels.has(l)) err(where, `label "${l}" is not one gpusizerd exports`);
  for (const m of stripped.matchAll(/\{([^}]*)\}/g))
    for (const l of m[1].split(",").map((s) => s.split(/[=!~]/)[0].trim()).filter(Boolean))
      if (!labels.has(l)) err(where, `label "${l}" is not one gpusizerd exports`);
  promExprs.push({ where, expr });
}

function checkSql(where, sql) {
  checkVars(where, sql);
  const ctes = new Set([...sql.matchAll(/(?:WITH|,)\s*(\w+)\s+AS\s*\(/gi)].map((m) => m[1].toLowerCase()));
  for (const m of sql.matchAll(/\b(?:FROM|JOIN)\s+(?!LATERAL\b)([a-z_]\w*)\b(?!\s*\()/gi)) {
    const t = m[1].toLowerCase();
    if (!tables.has(t) && !ctes.has(t)) err(where, `SQL reads "${t}", which no migration creates`);
  }
  if (/\bapi_tokens\b/i.test(sql)) err(where, "SQL must not read api_tokens");
}

// Panels, flattened out of rows.
const flat = [];
for (const p of dash.panels || []) {
  flat.push(p);
  for (const q of p.panels || []) flat.push(q);
}
const ids = new Set();
const cells = new Map();
const overlaps = new Set();
for (const p of flat) {
  const where = `panel ${p.id} "${p.title}"`;
  if (ids.has(p.id)) err(where, "duplicate id");
  ids.add(p.id);
  const g = p.gridPos || {};
  if (![g.x, g.y, g.w, g.h].every(Number.isInteger) || g.x < 0 || g.w < 1 || g.x + g.w > 24 || g.h < 1)
    err(where, `bad gridPos ${JSON.stringify(g)}`);
  else
    for (let y = g.y; y < g.y + g.h; y++)
      for (let x = g.x; x < g.x + g.w; x++) {
        const k = `${x},${y}`;
        if (cells.has(k) && !overlaps.has(`${p.id}/${cells.get(k)}`)) {
          overlaps.add(`${p.id}/${cells.get(k)}`);
          err(where, `overlaps panel ${cells.get(k)} (first at x,y ${k})`);
        }
        cells.set(k, p.id);
      }
  if (p.type === "row") continue;
  if (!p.title) err(where, "no title");
  checkDatasource(where, p.datasource);
  if (!Array.isArray(p.targets) || p.targets.length === 0) {
    err(where, "no targets");
    continue;
  }
  const refs = new Set();
  for (const t of p.targets) {
    if (!t.refId || refs.has(t.refId)) err(where, `refId "${t.refId}" missing or repeated`);
    refs.add(t.refId);
    checkDatasource(`${where} target ${t.refId}`, t.datasource);
    if (t.datasource?.type === "prometheus") {
      if (!t.expr) err(where, `target ${t.refId}: no expr`);
      else checkProm(`${where} target ${t.refId}`, t.expr);
    } else {
      if (!t.rawSql) err(where, `target ${t.refId}: no rawSql`);
      else checkSql(`${where} target ${t.refId}`, t.rawSql);
      if (!["table", "time_series"].includes(t.format)) err(where, `target ${t.refId}: format "${t.format}"`);
      if (t.format === "time_series" && !/AS\s+"?time"?|\$__timeGroupAlias/i.test(t.rawSql))
        err(where, `target ${t.refId}: a time series needs a time column`);
    }
  }
}
for (const v of vars.values()) {
  if (v.type !== "query") continue;
  checkDatasource(`variable ${v.name}`, v.datasource);
  const q = typeof v.query === "string" ? v.query : v.query?.query;
  if (!q) err(`variable ${v.name}`, "no query");
  else if (v.datasource?.type === "prometheus") {
    const m = /label_values\((\w+),\s*(\w+)\)/.exec(q);
    if (!m || !metrics.has(m[1])) err(`variable ${v.name}`, `query ${q} names no exported metric`);
  } else checkSql(`variable ${v.name}`, q);
}

if (rulesOut) {
  const rules = promExprs.map((e, i) => {
    const expr = e.expr.replace(/\$__rate_interval|\$__interval/g, "5m").replace(/\$\{?job\}?/g, ".*");
    return `      - record: gpusizer:dashboard_query_${i}\n        expr: ${JSON.stringify(expr)}\n`;
  });
  fs.writeFileSync(rulesOut, `groups:\n  - name: dashboard\n    rules:\n${rules.join("")}`);
}
for (const e of errors) console.log(`error: ${e}`);
console.log(`grafana-check: ${flat.length} panels, ${promExprs.length} PromQL and ` +
  `${flat.flatMap((p) => p.targets || []).filter((t) => t.rawSql).length} SQL queries, ` +
  `${vars.size} variables: ${errors.length} error(s)`);
process.exit(errors.length ? 1 : 0);
