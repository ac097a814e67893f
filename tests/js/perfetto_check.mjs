// Loads a trace exported by `Profile::perfetto` with the Chrome DevTools trace engine (the code
// that turns trace events into the DevTools performance panel) and checks that what it builds
// matches the saved profile: every stored span on its thread, with its duration, nested under
// the span the profile says is its parent; and every stack sample on its thread's CPU profile,
// with the profile's stack and time, drawn as a flame chart of calls.
//   node perfetto_check.mjs TRACE.json PROFILE.json
import fs from 'node:fs';
import * as Trace from '@paulirish/trace_engine/models/trace/trace.js';

const [tracePath, profilePath] = process.argv.slice(2);
const events = JSON.parse(fs.readFileSync(tracePath, 'utf8')).traceEvents;
const profile = JSON.parse(fs.readFileSync(profilePath, 'utf8'));

const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const data = model.parsedTrace().data;
const renderer = data.Renderer;

let failures = 0;
const fail = (msg) => { console.error('FAIL: ' + msg); failures++; };

const proc = renderer.processes.get(profile.pid);
if (!proc) fail(`no process ${profile.pid} in the parsed trace`);

// What the engine built: per thread, every entry with its parent's name.
const built = new Map();  // tid -> [{name, ts, dur, parent}]
for (const [tid, thread] of proc ? proc.threads : []) {
  const list = [];
  // Spans only: the flame chart's calls (ProfileCall entries) and the slice that holds them
  // are checked below.
  const walk = (node, parent) => {
    const call = node.entry.name === 'ProfileCall' || node.entry.cat === 'sample';
    if (!call) list.push({name: node.entry.name, ts: node.entry.ts, dur: node.entry.dur, parent});
    for (const child of node.children) walk(child, call ? parent : node.entry.name);
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

// Stack samples: per thread, the CPU profile the engine parsed, sample by sample.
let sampled = 0, calls = 0;
const bySampleThread = new Map();  // tid -> [[t_ns, stack]] by time
for (const [tNs, threadIndex, stack] of profile.samples ?? []) {
  const tid = threadTid.get(threadIndex) ?? threadIndex;
  if (!bySampleThread.has(tid)) bySampleThread.set(tid, []);
  bySampleThread.get(tid).push([tNs, stack]);
}
const cpuProfiles = data.Samples.profilesInProcess.get(profile.pid) ?? new Map();
for (const [tid, list] of bySampleThread) {
  list.sort((a, b) => a[0] - b[0]);
  const parsed = cpuProfiles.get(tid)?.parsedProfile;
  if (!parsed) { fail(`thread ${tid}: no CPU profile parsed`); continue; }
  if (parsed.samples.length !== list.length) {
    fail(`thread ${tid}: ${parsed.samples.length} samples parsed, profile has ${list.length}`);
    continue;
  }
  for (let i = 0; i < list.length; i++) {
    const [tNs, stack] = list[i];
    const want = profile.stacks[stack].slice().reverse().map((f) => profile.frames[f].function || '[unknown]');
    const got = [];
    for (let node = parsed.nodeById(parsed.samples[i]); node && node.parent; node = node.parent)
      got.unshift(node.functionName);
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      fail(`thread ${tid} sample ${i}: stack ${JSON.stringify(got)}, profile says ${JSON.stringify(want)}`);
      break;
    }
    // The engine keeps milliseconds here; ours are nanoseconds from the profile start.
    const ms = (tNs - profile.start_ns) / 1e6;
    if (Math.abs(parsed.timestamps[i] / 1000 - ms) > 0.002 && Math.abs(parsed.timestamps[i] - ms) > 0.002) {
      fail(`thread ${tid} sample ${i}: at ${parsed.timestamps[i]}, profile says ${ms} ms`);
      break;
    }
    sampled++;
  }
  // The flame chart: calls built from the samples on the thread's track.
  const thread = proc?.threads.get(tid);
  const names = new Set();
  const collect = (node) => {
    if (node.entry.name === 'ProfileCall') { calls++; names.add(node.entry.callFrame.functionName); }
    for (const child of node.children) collect(child);
  };
  for (const root of thread?.tree ? thread.tree.roots : []) collect(root);
  const leaves = new Set(list.map(([, stack]) => profile.frames[profile.stacks[stack][0]]?.function));
  if (![...leaves].some((leaf) => names.has(leaf))) fail(`thread ${tid}: no sampled leaf in its flame chart`);
}
if (checked + sampled === 0) fail('nothing checked');
console.log(`checked ${checked} spans on ${built.size} threads, ${sampled} stack samples on ` +
            `${bySampleThread.size} threads (${calls} calls in the flame chart): ` +
            `${failures ? failures + ' failures' : 'all match'}`);
process.exit(failures ? 1 : 0);
