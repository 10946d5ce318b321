// Console page loads in headless Chromium, driven over chromedriver's WebDriver HTTP API (no npm
// package, no browser download). For each page: navigate, wait until the page's script has drawn
// it, read the time since navigation began. Prints median and worst of N loads per page.
//   node bench/console-load.mjs BASE_URL EMAIL PASSWORD [loads per page, default 10]
const [base, email, password, loadsArg] = process.argv.slice(2);
const loads = Number(loadsArg || 10);
const driverPort = 9515 + Math.floor(Math.random() * 1000);
const { spawn } = await import('node:child_process');
const driver = spawn('chromedriver', [`--port=${driverPort}`], { stdio: 'ignore' });
const wd = `http://127.0.0.1:${driverPort}`;
const call = async (method, path, body) => {
  const response = await fetch(wd + path, {
    method, headers: { 'Content-Type': 'application/json' }, body: body && JSON.stringify(body),
  });
  const json = await response.json();
  if (json.value && json.value.error) throw new Error(`${path}: ${json.value.message}`);
  return json.value;
};
try {
  for (let i = 0; i < 50; i++) {
    try { await fetch(`${wd}/status`); break; } catch { await new Promise((r) => setTimeout(r, 100)); }
  }
  const session = await call('POST', '/session', { capabilities: { alwaysMatch: {
    'goog:chromeOptions': {
      binary: process.env.ENGRAM_CHROMIUM || '/usr/lib/chromium/chromium',
      args: ['--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--window-size=1280,1000'],
    },
  } } });
  const s = `/session/${session.sessionId}`;
  const script = (text) => call('POST', `${s}/execute/sync`, { script: text, args: [] });
  await call('POST', `${s}/url`, { url: `${base}/` });
  await script(`return fetch('/api/auth/login', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({email: ${JSON.stringify(email)}, password: ${JSON.stringify(password)}})}).then(r => r.status)`);
  const assistants = await script(`return fetch('/api/assistants').then(r => r.json())`);
  const pages = ['/console/assistants', '/console/memory', '/console/memory/candidates', '/console/reflection',
    '/console/usage', '/console/settings'];
  if (assistants.assistants.length) pages.splice(1, 0, `/console/assistants/${assistants.assistants[0]._id}`);
  for (const page of pages) {
    const times = [];
    for (let i = 0; i < loads + 1; i++) {
      await call('POST', `${s}/url`, { url: base + page });
      let settled = null;
      for (let tries = 0; tries < 200 && settled == null; tries++) {
        settled = await script(`const drawn = performance.getEntriesByName('engram:page-drawn')[0];
          return drawn ? drawn.startTime : null`);
      }
      if (i > 0) times.push(settled); // the first load warms the server and the browser's cache
    }
    if (process.env.TIMINGS) {
      // Where the last load's time went: each resource's start and end, since navigation began.
      const entries = await script(`return performance.getEntriesByType('resource').map(e =>
        [e.name.replace(location.origin, ''), Math.round(e.startTime), Math.round(e.responseEnd)])`);
      console.log(entries.map(([name, start, end]) => `  ${String(start).padStart(4)}-${String(end).padEnd(4)} ${name}`).join('\n'));
    }
    times.sort((a, b) => a - b);
    console.log(`${page.padEnd(48)} median ${times[Math.floor(times.length / 2)].toFixed(0)} ms, worst ${times.at(-1).toFixed(0)} ms`);
  }
  await call('DELETE', s);
} finally {
  driver.kill();
}
