// Validates a speedscope file against speedscope's published JSON schema, then checks what the
// schema cannot: every frame index in range, events that open and close in nesting order, at
// times that never go back, inside every profile's one shared time axis, and the expected
// functions.
//   node speedscope_check.mjs FILE FUNCTION...
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';

const [file, ...expected] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const schema = JSON.parse(fs.readFileSync(path.join(here, 'node_modules/speedscope/dist/release/file-format-schema.json')));
const doc = JSON.parse(fs.readFileSync(file));
const ajv = new Ajv({ strict: false, allErrors: true });
const validate = ajv.compile(schema);
if (!validate(doc)) {
  console.error('speedscope schema violations:', JSON.stringify(validate.errors, null, 2));
  process.exit(1);
}
const frames = doc.shared.frames;
let samples = 0;
const axis = doc.profiles.length ? [doc.profiles[0].startValue, doc.profiles[0].endValue] : [0, 0];
for (const p of doc.profiles) {
  if (p.type !== 'evented') throw new Error(`profile ${p.name}: type ${p.type}`);
  if (p.startValue !== axis[0] || p.endValue !== axis[1])
    throw new Error(`profile ${p.name}: its own time axis [${p.startValue}, ${p.endValue}]`);
  const open = [];
  let last = p.startValue;
  for (const e of p.events) {
    if (!Number.isInteger(e.frame) || e.frame < 0 || e.frame >= frames.length) throw new Error(`profile ${p.name}: frame index ${e.frame}`);
    if (e.at < last || e.at > p.endValue) throw new Error(`profile ${p.name}: event at ${e.at} after ${last}`);
    last = e.at;
    if (e.type === 'O') { open.push(e.frame); samples += 1; }
    else if (open.pop() !== e.frame) throw new Error(`profile ${p.name}: frame ${e.frame} closed out of order`);
  }
  if (open.length) throw new Error(`profile ${p.name}: ${open.length} frames never closed`);
}
if (doc.activeProfileIndex >= doc.profiles.length) throw new Error('activeProfileIndex out of range');
const names = new Set(frames.map((f) => f.name));
for (const fn of expected) if (!names.has(fn)) throw new Error(`no frame named ${fn}`);
if (samples === 0) throw new Error('no samples');
console.log(`speedscope file valid: ${doc.profiles.length} profiles, ${frames.length} frames, ${samples} frame openings`);
