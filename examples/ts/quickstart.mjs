// Quickstart: start an `interpreter` sandbox, run Python in it, write a file
// and run it, reconnect by id, and always kill the sandbox at the end.
//
//   export LIZARD_API_KEY=...           # lizard keys create my-laptop
//   export LIZARD_PROJECT_ID=proj_123   # optional: id, slug or name
//   node quickstart.mjs
import { Sandbox } from '@lizard-build/sdk';

// Without a project the sandbox goes to the API key's own project.
const projectId = process.env.LIZARD_PROJECT_ID;

const sandbox = await Sandbox.create('interpreter', {
  projectId, timeoutMs: 300_000,
});
try {
  // A string runs through /bin/sh -c. A non-zero exit code is a result,
  // not an exception: check exitCode yourself.
  let result = await sandbox.process.exec("python -c 'print(2 ** 10)'");
  console.log(result.stdout, result.stderr, result.exitCode);

  await sandbox.fs.write('/tmp/task.py', 'print(42)\n');
  result = await sandbox.process.exec('python /tmp/task.py');
  console.log(result.stdout);

  // Another process (or a later request) can get a handle from the id.
  const connected = await Sandbox.connect(sandbox.sandboxId);
  const info = await connected.getInfo();
  console.log(info.sandboxId, info.template, info.status, info.runtime);
} finally {
  await sandbox.kill();
}
