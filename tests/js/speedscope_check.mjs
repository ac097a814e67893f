// Validates a speedscope file against speedscope's published JSON schema, then checks what the
// schema cannot: every frame index in range, a weight per sample, and the expected functions.
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
for (const p of doc.profiles) {
  if (p.type !== 'sampled') throw new Error(`profile ${p.name}: type ${p.type}`);
  if (p.samples.length !== p.weights.length) throw new Error(`profile ${p.name}: ${p.samples.length} samples, ${p.weights.length} weights`);
  for (const stack of p.samples)
    for (const i of stack)
      if (!Number.isInteger(i) || i < 0 || i >= frames.length) throw new Error(`profile ${p.name}: frame index ${i}`);
  samples += p.samples.length;
}
const names = new Set(frames.map((f) => f.name));
for (const fn of expected) if (!names.has(fn)) throw new Error(`no frame named ${fn}`);
if (samples === 0) throw new Error('no samples');
console.log(`speedscope file valid: ${doc.profiles.length} profiles, ${frames.length} frames, ${samples} samples`);
