// node tests/openapi/responses.mjs DOC EXCHANGES: check answers the server
// gave against the OpenAPI document DOC. EXCHANGES has one exchange a line,
// "METHOD<TAB>PATH<TAB>STATUS<TAB>CONTENT-TYPE<TAB>BODY-FILE" (PATH as sent,
// without its query). For each, the operation is found as the server's
// router would (a literal segment before a {param}); its status must be one
// the document lists, the content type one of that response's, and a JSON
// body must validate against its schema (JSON Schema 2020-12, ajv). Prints
// one "ok - ..."/"not ok - ..." line per operation and status, then
// "N passed, M failed"; exits 1 on a failure.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const [docPath, exchangesPath] = process.argv.slice(2);
if (!docPath || !exchangesPath) {
  console.error("usage: node responses.mjs DOC EXCHANGES");
  process.exit(2);
}
const doc = JSON.parse(readFileSync(docPath, "utf8"));
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
// the document as one schema, so "#/components/schemas/X" resolves
const DOC_ID = "https://olivares.invalid/openapi.json";
ajv.addSchema({ ...doc, $id: DOC_ID }, DOC_ID);

const resolve = (obj) => {
  while (obj && obj.$ref) {
    obj = obj.$ref
      .replace(/^#\//, "")
      .split("/")
      .reduce((o, k) => o[k.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
  }
  return obj;
};
// the schema's refs point into the document: rewrite them to DOC_ID
const absolute = (s) =>
  JSON.parse(JSON.stringify(s), (k, v) => (k === "$ref" && v.startsWith("#") ? DOC_ID + v : v));

const templates = Object.keys(doc.paths).map((t) => ({ t, segs: t.split("/") }));
function findPath(path) {
  const segs = path.split("/");
  let best = null;
  for (const { t, segs: ts } of templates) {
    if (ts.length !== segs.length) continue;
    let literals = 0;
    const ok = ts.every((s, i) => {
      if (/^\{[^}]+\}$/.test(s)) return segs[i] !== "";
      if (s === segs[i]) return ++literals;
      return false;
    });
    if (ok && (!best || literals > best.literals)) best = { t, literals };
  }
  return best && best.t;
}

const results = new Map(); // "METHOD template STATUS" -> [failure...]
const count = new Map();
let failed = 0;
let passed = 0;
const lines = readFileSync(exchangesPath, "utf8").split("\n").filter(Boolean);
for (const line of lines) {
  const [method, path, status, ctype, bodyFile] = line.split("\t");
  const t = findPath(path);
  const key = `${method} ${t ?? path} ${status}`;
  const fails = results.get(key) ?? [];
  results.set(key, fails);
  count.set(key, (count.get(key) ?? 0) + 1);
  if (!t) {
    fails.push(`no path of the document matches ${path}`);
    continue;
  }
  const m = method === "HEAD" ? "get" : method.toLowerCase();
  const op = doc.paths[t][m];
  if (!op) {
    // the router's answer to a method a path does not have
    if (status !== "405") fails.push(`the document has no ${method} on ${t}`);
    else check(fails, resolve(doc.components.responses.MethodNotAllowed), ctype, bodyFile);
    continue;
  }
  const resp = resolve(op.responses[status] ?? op.responses.default);
  if (!resp) {
    fails.push(`status ${status} is not one of ${Object.keys(op.responses).join(", ")}`);
    continue;
  }
  if (method !== "HEAD") check(fails, resp, ctype, bodyFile);
}

// check FAILS RESP CTYPE BODYFILE: the answer's content type is one of the
// response's and a JSON body validates against its schema
function check(fails, resp, ctype, bodyFile) {
  const media = (ctype || "").split(";")[0].trim().toLowerCase();
  const content = resp.content ?? {};
  if (Object.keys(content).length === 0) return;
  if (!content[media]) {
    fails.push(`content type ${ctype} is not one of ${Object.keys(content).join(", ")}`);
    return;
  }
  if (media !== "application/json" || !content[media].schema) return;
  let body;
  try {
    body = JSON.parse(readFileSync(bodyFile, "utf8"));
  } catch (e) {
    fails.push(`the body is not JSON: ${e.message}`);
    return;
  }
  const validate = ajv.compile(absolute(content[media].schema));
  if (!validate(body)) {
    const errs = validate.errors
      .slice(0, 5)
      .map((e) => `${e.instancePath || "/"} ${e.message}${e.params && e.params.allowedValues ? " " + JSON.stringify(e.params.allowedValues) : ""}`);
    fails.push(`the body does not match the schema: ${errs.join("; ")}`);
  }
}
for (const [key, fails] of [...results].sort()) {
  const n = count.get(key);
  if (fails.length === 0) {
    passed++;
    console.log(`ok - ${key}: ${n} answer(s) match the document`);
  } else {
    failed++;
    console.log(`not ok - ${key}: ${[...new Set(fails)].slice(0, 3).join(" | ")}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
