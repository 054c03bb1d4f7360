// node tests/blender/validate.mjs FILE.glb: the Khronos validator's counts as one JSON line.
import fs from 'node:fs';
import validator from 'gltf-validator';

const file = process.argv[2];
const r = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)), { maxIssues: 50 });
const errors = r.issues.messages.filter((m) => m.severity === 0).map((m) => `${m.code} ${m.pointer ?? ''}`);
console.log(JSON.stringify({ errors: r.issues.numErrors, warnings: r.issues.numWarnings, first: errors.slice(0, 5) }));
