// A parent that forks a Node child and waits for its answer (child_process.fork).
const { fork, spawnSync } = require('child_process');
const path = require('path');

const how = process.argv[2] || 'fork';
if (how === 'spawn') {
  // spawn of node with its output piped back, as a build script runs a tool
  const out = spawnSync(process.execPath, [path.join(__dirname, 'worker.js'), '7'],
                        { encoding: 'utf8' });
  console.log('parent got', out.stdout.trim());
} else {
  const child = fork(path.join(__dirname, 'worker.js'), ['7']);
  child.on('message', (m) => console.log('parent got', m));
  child.on('exit', (code) => console.log('parent done', code));
}
