// The wfx demo agent for the Node sample: a scripted stand-in for an AI fix
// agent, named "demo-fixer" in .workflow/wfx.json. Each call applies the
// next fix of the sample project, so the loop shows more than one iteration.
'use strict';
const fs = require('fs');

const FIXES = [
  ['src/math.js', 'if (values[i] < best)', 'if (values[i] > best)',
    'max() keeps the larger value, not the smaller (src/math.js).'],
  ['src/strings.js', ".replace(' ', '-')", ".replace(/\\s+/g, '-')",
    'slugify() replaces every run of spaces, not only the first (src/strings.js).'],
];

const next = FIXES.find(([path, old]) => fs.readFileSync(path, 'utf8').includes(old));
if (next) {
  const [path, old, replacement, done] = next;
  fs.writeFileSync(path, fs.readFileSync(path, 'utf8').replace(old, () => replacement));
  console.log(`demo-fixer: ${done}`);
} else {
  console.log('demo-fixer: nothing left that I know how to fix.');
}
