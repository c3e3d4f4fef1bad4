// The sandbox's Node.js child program (the counterpart of zygote.py's `run_candidate` for JavaScript).
// The zygote forks, installs the process filter (no new processes) and execs `node -e <this text>` with
// an empty environment; stdin carries `<token>\n<job JSON>`, fd 3 is the result channel.
//
// Trust: this script runs first and keeps the token, the result channel and its own realm's
// built-ins to itself. The candidate runs in a fresh `vm` context holding only the language's own
// built-ins (no process, require, Buffer, timers or console) with a function `counter` (the name the
// trusted build drew) that only increments, and no code generation from strings (eval and Function
// throw: code the trusted build never saw would run uncounted). Arguments are decoded inside that context before the
// candidate's code exists; results are walked from this realm with built-ins captured here before
// any candidate code ran, and only null, booleans, numbers, strings, arrays and plain objects pass.
// The vm context is not the security boundary (the kernel filter, the namespaces and node's
// permission model are); it keeps the result channel and the token out of the candidate's reach.
//
// Messages, each a frame (4-byte big-endian length + JSON): [token, "loaded", count|null],
// [token, "load", reason], [token, "result", [index, {"ok": wire} | {"exc": name}, count, null]],
// [token, "done", null]. Values use the plain-data wire format of rlvr/core/codec.py.
"use strict";
const fs = require("fs");
const vm = require("vm");

const writeSync = fs.writeSync;
const readSync = fs.readSync;
const isArray = Array.isArray;
const keysOf = Object.keys;
const protoOf = Object.getPrototypeOf;
const isInteger = Number.isInteger;
const isNaN_ = Number.isNaN;
const stringify = JSON.stringify;
const MAX_DEPTH = 64;
const exit = process.reallyExit ? process.reallyExit.bind(process) : process.exit.bind(process);

function readAll() {
  const chunks = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.alloc(1 << 16);
    let n;
    try {
      n = readSync(0, chunk, 0, chunk.length, null);
    } catch (error) {
      if (error.code === "EAGAIN") continue;
      throw error;
    }
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
    total += n;
  }
  const all = Buffer.concat(chunks, total);
  for (const chunk of chunks) chunk.fill(0);
  return all;
}

const raw = readAll();
const newline = raw.indexOf(10);
const token = raw.subarray(0, newline).toString("latin1");
let job = JSON.parse(raw.subarray(newline + 1).toString("utf8"));
raw.fill(0);

function send(kind, payload) {
  const body = Buffer.from(stringify([token, kind, payload]), "utf8");
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  const frame = Buffer.concat([head, body]);
  let offset = 0;
  while (offset < frame.length) offset += writeSync(3, frame, offset, frame.length - offset);
}

class NotPlain extends Error {}

function wire(value, depth, objectPrototype) {
  if (depth > MAX_DEPTH) throw new NotPlain("nested too deeply");
  if (value === null) return null;
  const kind = typeof value;
  if (kind === "boolean" || kind === "string") return value;
  if (kind === "number") {
    if (isNaN_(value)) return { f: "nan" };
    if (value === Infinity) return { f: "inf" };
    if (value === -Infinity) return { f: "-inf" };
    if (value === 0) return 0; // -0 too
    return value;
  }
  if (kind === "object") {
    if (isArray(value)) {
      const length = value.length;
      if (!isInteger(length) || length < 0 || length > 1 << 24) throw new NotPlain("bad array");
      const out = [];
      for (let i = 0; i < length; i++) out[i] = wire(value[i], depth + 1, objectPrototype);
      return out;
    }
    if (protoOf(value) !== objectPrototype) throw new NotPlain("not a plain object");
    const pairs = [];
    for (const key of keysOf(value)) pairs[pairs.length] = [key, wire(value[key], depth + 1, objectPrototype)];
    return { d: pairs };
  }
  throw new NotPlain(kind); // undefined, functions, symbols, bigints
}

// No code from strings (eval, Function, new Function(...)): such code is never built by the trusted
// compiler, so it would run without op counters (uncounted work, a free perf score).
const context = vm.createContext(Object.create(null), { codeGeneration: { strings: false, wasm: false } });
// Built inside the context, before any candidate code: the counter (only `tick` is handed to the
// candidate) and the argument decoder (values created in the candidate's realm, never in ours).
const tools = vm.runInContext(
  `(() => {
    "use strict";
    let n = 0;
    const decode = (doc, depth) => {
      if (depth > ${MAX_DEPTH}) throw new Error("nested too deeply");
      if (doc === null || typeof doc !== "object") return doc;
      if (Array.isArray(doc)) { const out = []; for (let i = 0; i < doc.length; i++) out[i] = decode(doc[i], depth + 1); return out; }
      if ("f" in doc) return doc.f === "nan" ? NaN : doc.f === "inf" ? Infinity : doc.f === "-inf" ? -Infinity : Number(doc.f);
      if ("t" in doc) return decode(doc.t, depth + 1);
      if ("d" in doc) { const out = {}; for (const [k, v] of doc.d) out[String(k)] = decode(v, depth + 1); return out; }
      throw new Error("unsupported argument");
    };
    // node's host API is absent from this realm; reaching for it by name is reported (an operation of
    // rlvr.core.flags.DENIED_OPS) and reads as undefined, as it did before (\`typeof process\` stays
    // "undefined"). Plain booleans and string literals only: nothing a candidate can redefine is used.
    let importing = false, processing = false, networking = false;
    const mark = (op) => {
      if (op === "import") importing = true;
      else if (op === "process_control") processing = true;
      else networking = true;
    };
    for (const [name, op] of [["require", "import"], ["module", "import"], ["process", "process_control"],
                              ["fetch", "socket"], ["WebSocket", "socket"], ["XMLHttpRequest", "socket"],
                              ["EventSource", "socket"]]) {
      Object.defineProperty(globalThis, name, { get: () => { mark(op); return undefined; }, configurable: false });
    }
    return {
      refusals: () => (importing ? "import " : "") + (processing ? "process_control " : "") + (networking ? "socket " : ""),
      tick: () => { n++; },
      read: () => n,
      reset: () => { n = 0; },
      objectPrototype: Object.prototype,
      decodeAll: (text) => JSON.parse(text).map((args) => decode(args, 0)),
    };
  })()`,
  context,
);
const { tick, read, reset, objectPrototype, decodeAll, refusals } = tools;
const reported = new Set();
// [token, "denied", op] for every refusal not yet reported (the Python child's message, same names)
function reportRefusals() {
  const seen = refusals();
  if (typeof seen !== "string") return;
  for (const op of seen.split(" ")) {
    if (op && !reported.has(op)) {
      reported.add(op);
      send("denied", op);
    }
  }
}
const trace = job.trace === true;
const entry = String(job.entry);
const counter = String(job.counter || "__rlvr_unused_counter");
let calls;
try {
  calls = decodeAll(stringify(job.calls));
} catch (error) {
  send("load", "arguments could not be decoded");
  exit(0);
}
const source = String(job.source);
job = null;
if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(entry) || !/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(counter)) {
  send("load", "bad entry point name");
  exit(0);
}

let fn;
try {
  // the counter is a const binding: not even a direct eval that learnt its name can replace it. Strict
  // mode (as the type check reads every candidate: a module), so no `with (obj)` block can put an object
  // holding a no-op under the counter's name in front of that binding.
  const wrapper =
    `(function (tick) {\n"use strict";\nconst ${counter} = tick;\ntick = undefined;\n${source}\n` +
    `;return typeof ${entry} === "function" ? ${entry} : undefined;\n})`;
  const script = new vm.Script(wrapper, { filename: "candidate.js" });
  fn = script.runInContext(context)(tick);
} catch (error) {
  reportRefusals();
  send("load", "the program raised while loading");
  exit(0);
}
reportRefusals();
if (typeof fn !== "function") {
  send("load", "entry point not defined: " + entry.slice(0, 100));
  exit(0);
}
send("loaded", trace ? read() : null); // the module's own load-time work, charged like Python's
for (let index = 0; index < calls.length; index++) {
  reset();
  let result;
  try {
    const value = fn(...calls[index]);
    try {
      result = { ok: wire(value, 0, objectPrototype) };
    } catch (error) {
      result = { exc: error instanceof NotPlain ? "NotPlainData" : "Error" };
    }
    // read after the result is walked: getters and Proxy traps on the returned value are the
    // candidate's code too, and the work they do is counted like the rest
    reportRefusals();
    send("result", [index, result, trace ? read() : null, null]);
    continue;
  } catch (error) {
    result = { exc: "Error" }; // JavaScript has no exception types to match Python's; the thrown value is never read
  }
  reportRefusals();
  send("result", [index, result, trace ? read() : null, null]);
}
send("done", null);
exit(0);
