// Loads a trace exported by `Profile::perfetto` with the Chrome DevTools trace engine (the code
// that turns trace events into the DevTools performance panel) and checks that what it builds
// matches the saved profile: every stored span on its thread, with its duration, nested under
// the span the profile says is its parent.
//   node perfetto_check.mjs TRACE.json PROFILE.json
import fs from 'node:fs';
import * as Trace from '@paulirish/trace_engine/models/trace/trace.js';

const [tracePath, profilePath] = process.argv.slice(2);
const events = JSON.parse(fs.readFileSync(tracePath, 'utf8')).traceEvents;
const profile = JSON.parse(fs.readFileSync(profilePath, 'utf8'));

const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const renderer = model.parsedTrace().data.Renderer;

let failures = 0;
const fail = (msg) => { console.error('FAIL: ' + msg); failures++; };

const proc = renderer.processes.get(profile.pid);
if (!proc) fail(`no process ${profile.pid} in the parsed trace`);

// What the engine built: per thread, every entry with its parent's name.
const built = new Map();  // tid -> [{name, ts, dur, parent}]
for (const [tid, thread] of proc ? proc.threads : []) {
  const list = [];
  const walk = (node, parent) => {
    list.push({name: node.entry.name, ts: node.entry.ts, dur: node.entry.dur, parent});
    for (const child of node.children) walk(child, node.entry.name);
  };
  for (const root of thread.tree ? thread.tree.roots : []) walk(root, null);
  built.set(tid, list);
}

const threadTid = new Map(profile.threads.map((t) => [t.index, t.tid]));
let checked = 0;
for (const [pathIndex, threadIndex, startNs, endNs] of profile.spans) {
  const path = profile.paths[pathIndex];
  const parts = path.split('/');
  const name = parts.at(-1);
  const parent = parts.length > 1 ? parts.at(-2) : null;
  const tid = threadTid.get(threadIndex);
  const entries = built.get(tid) ?? [];
  // The engine keeps microseconds; our timestamps are whole nanoseconds from the profile start.
  const ts = (startNs - profile.start_ns) / 1000;
  const dur = (endNs - startNs) / 1000;
  const match = entries.find((e) => e.name === name && Math.abs(e.ts - ts) < 0.002);
  if (!match) { fail(`${path} at ${ts} µs on thread ${tid}: not found`); continue; }
  if (Math.abs(match.dur - dur) > 0.002) fail(`${path}: duration ${match.dur} µs, profile says ${dur}`);
  if (match.parent !== parent) fail(`${path}: nested under ${match.parent}, profile says ${parent}`);
  checked++;
}
for (const [tid, entries] of built) {
  const expected = profile.spans.filter(([, t]) => threadTid.get(t) === tid).length;
  if (entries.length !== expected) fail(`thread ${tid}: ${entries.length} entries, profile has ${expected}`);
}
if (checked === 0) fail('no span checked');
console.log(`checked ${checked} spans on ${built.size} threads: ${failures ? failures + ' failures' : 'all match'}`);
process.exit(failures ? 1 : 0);
