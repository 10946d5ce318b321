// A fake OpenAI-compatible upstream for the gateway benchmarks: answers at once, on loopback.
//   node bench/fake-upstream.mjs 9100 [failEvery]
// With failEvery N, every Nth request answers 503 (a deployment that fails a share of requests).
// POST /v1/traces: an OTLP/HTTP collector that takes every export and keeps nothing.
// POST /v1/chat/completions: a whole reply, or with "stream": true every chunk written at once
// (role, five words, finish, the usage chunk when stream_options.include_usage, [DONE]).
import http from 'node:http';

const port = Number(process.argv[2] ?? 9100);
const failEvery = Number(process.argv[3] ?? 0);
let served = 0;
const words = ['Hello', ' from', ' the', ' fake', ' upstream.'];

function chunk(id, model, delta, finish) {
  return `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1700000000, model,
    choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

http.createServer((req, res) => {
  let body = '';
  req.on('data', (data) => { body += data; });
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/v1/traces') {
      // An OTLP/HTTP collector that takes every export (gateway-ab.sh TRACES_B=on).
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
      return;
    }
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"not found","type":"invalid_request_error"}}');
      return;
    }
    if (failEvery > 0 && ++served % failEvery === 0) {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"overloaded","type":"server_error"}}');
      return;
    }
    const request = JSON.parse(body);
    const model = request.model ?? 'fake';
    const usage = { prompt_tokens: 12, completion_tokens: words.length, total_tokens: 12 + words.length };
    if (!request.stream) {
      const reply = JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion', created: 1700000000, model,
        choices: [{ index: 0, message: { role: 'assistant', content: words.join('') }, finish_reason: 'stop' }],
        usage });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
      res.end(reply);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let out = chunk('chatcmpl-fake', model, { role: 'assistant', content: '' }, null);
    for (const word of words) out += chunk('chatcmpl-fake', model, { content: word }, null);
    out += chunk('chatcmpl-fake', model, {}, 'stop');
    if (request.stream_options?.include_usage) {
      out += `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000,
        model, choices: [], usage })}\n\n`;
    }
    res.end(out + 'data: [DONE]\n\n');
  });
}).listen(port, '127.0.0.1', () => console.log(`fake upstream on http://127.0.0.1:${port}/v1`));
