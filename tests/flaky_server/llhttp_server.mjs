// A strict HTTP/1.1 server on Node's llhttp (no lenient flags), for the differential framing
// test: it answers every request it frames and keeps a log of them, which a second port hands
// over. Prints "<port> <control port>" once both listen.
import http from 'node:http';

let framed = [];
const strict = http.createServer({ maxHeaderSize: 65536, insecureHTTPParser: false, requireHostHeader: true },
  (req, res) => {
    framed.push({ method: req.method, url: req.url });
    req.resume();
    req.on('end', () => res.end('ok\n'));
  });
strict.keepAliveTimeout = 2000;
const control = http.createServer((req, res) => {
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(framed));
  if (req.method === 'POST') framed = [];
});
strict.listen(0, '127.0.0.1', () => control.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${strict.address().port} ${control.address().port}\n`);
}));
