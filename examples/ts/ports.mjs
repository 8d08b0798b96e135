// Serve HTTP from a sandbox and reach it through an exposed port.
//
//   export LIZARD_API_KEY=...
//   node ports.mjs
//
// Ports are private: a request needs the access token (the `lizard_token`
// query parameter of `url`, the X-Lizard-Access-Token header, or the cookie a
// browser gets); without it the answer is 401.
import http from 'node:http';
import https from 'node:https';
import { Sandbox } from '@lizard-build/sdk';

// Browsers resolve every *.localhost name to the loopback address (the
// server's default domain); the system resolver may not, so do it here.
function loopback(hostname, opts, cb) {
  if (opts.all) cb(null, [{ address: '127.0.0.1', family: 4 }]);
  else cb(null, '127.0.0.1', 4);
}

// GET `path` on the exposed port behind `url` -> { status, body }.
function get(url, path, token) {
  const u = new URL(path, url);
  const headers = token ? { 'X-Lizard-Access-Token': token } : {};
  const lookup = u.hostname.endsWith('.localhost') ? loopback : undefined;
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    mod.get(u, { headers, lookup }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    }).on('error', reject);
  });
}

const sandbox = await Sandbox.create('interpreter', { timeoutMs: 120_000 });
try {
  await sandbox.fs.write('/tmp/index.html', 'hello from port 3000\n');
  await sandbox.process.exec(
    "nohup python -m http.server 3000 --bind 0.0.0.0 --directory /tmp >/tmp/http.log 2>&1 </dev/null &",
  );
  const { url, hostname, accessToken } = await sandbox.exposePort(3000);
  console.log(url); // open in a browser
  console.log(hostname);

  // The server needs a moment to start listening; until then the proxy
  // answers 502.
  const deadline = Date.now() + 30_000;
  let res;
  for (;;) {
    res = await get(url, '/index.html', accessToken);
    if (res.status !== 502 || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log(res.status, res.body.trim());

  const anonymous = await get(url, '/index.html');
  console.log('without a token:', anonymous.status);
} finally {
  await sandbox.kill();
}
