// Pause and resume a sandbox, then save it as a snapshot and start a new
// sandbox from it.
//
//   export LIZARD_API_KEY=...
//   node pause_snapshot.mjs
//
// pause()/resume() are queued and return at once: waitForStatus() says when
// they are done (or throws with the reason they failed). While paused, the
// sandbox's lifetime clock stops and it is not billed for compute.
import { Sandbox } from '@lizard-build/sdk';

const sandbox = await Sandbox.create('interpreter', { timeoutMs: 300_000 });
let copy;
let saved;
try {
  await sandbox.fs.write('/tmp/state.txt', 'written before the pause\n');
  // A process that must survive the pause.
  await sandbox.process.exec('nohup sleep 600 >/dev/null 2>&1 </dev/null &');

  await sandbox.pause();
  await sandbox.waitForStatus('paused');
  console.log('status:', (await sandbox.getInfo()).status);
  await sandbox.resume();
  await sandbox.waitForStatus('running');
  console.log((await sandbox.fs.read('/tmp/state.txt')).trim());
  const pgrep = await sandbox.process.exec('pgrep -x sleep');
  console.log('sleep still running:', pgrep.exitCode === 0);

  // On the container runtime a snapshot holds files, not processes.
  // Names are unique in a project.
  saved = await sandbox.snapshot(`my-app-${Date.now()}`, { poolSize: 2 });
  await Sandbox.waitForSnapshot(saved.id);
  copy = await Sandbox.restore(saved.id);
  console.log('restored', copy.sandboxId, 'from', saved.id);
  console.log((await copy.fs.read('/tmp/state.txt')).trim());
} finally {
  await copy?.kill();
  await sandbox.kill();
  // Deleting a snapshot never affects the sandboxes restored from it.
  if (saved) await Sandbox.deleteSnapshot(saved.id);
}
