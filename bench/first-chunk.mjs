// Time to first chunk of streamed chat completions, at a fixed concurrency, over keep-alive connections.
//   node bench/first-chunk.mjs <base-url-with-/v1> <requests> <concurrency> [bearer] [model] ["name: value|..."]
// Prints p50/p90/p99 of the time from sending a request to receiving its first SSE data line, and of
// the whole stream, in microseconds.
import http from 'node:http';

const [base, total = '2000', concurrency = '16', bearer = '', model = 'fake-model', extra = ''] = process.argv.slice(2);
const url = new URL(base.replace(/\/$/, '') + '/chat/completions');
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(concurrency) });
const headers = { 'content-type': 'application/json', 'x-engram-memory': 'off' };
if (bearer) headers.authorization = `Bearer ${bearer}`;
for (const pair of extra.split('|').filter(Boolean)) {
  const i = pair.indexOf(':');
  headers[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
}
const body = JSON.stringify({ model, max_tokens: 16, stream: true,
  messages: [{ role: 'user', content: 'Hello, how are you today?' }] });

function one() {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    let first = 0n;
    const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
      res.on('data', (data) => {
        if (first === 0n && data.includes('data:')) first = process.hrtime.bigint();
      });
      res.on('end', () => resolve([Number(first - started) / 1000, Number(process.hrtime.bigint() - started) / 1000]));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const firsts = [];
const wholes = [];
let sent = 0;
async function worker() {
  while (sent < Number(total)) {
    sent++;
    const [first, whole] = await one();
    firsts.push(first);
    wholes.push(whole);
  }
}
// Warm-up, not counted.
for (let i = 0; i < 200; i++) await one();
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p / 100))]);
};
console.log(`RESULT requests=${firsts.length} first_p50_us=${pct(firsts, 50)} first_p90_us=${pct(firsts, 90)} `
  + `first_p99_us=${pct(firsts, 99)} whole_p50_us=${pct(wholes, 50)} whole_p99_us=${pct(wholes, 99)}`);
agent.destroy();
