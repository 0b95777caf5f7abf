// The Node.js server of the interop matrix (tests/interop/servers/node_server.py), built-in
// modules only. One process, four ports: `http` (h1), `https` (h1tls), `http2` over TLS
// with allowHTTP1 (h2 by ALPN), and `http2.createServer` (h2c, prior knowledge). Each serves
// /static/ from --root and the httpbin subset of tests/interop/servers/base.py under /app/.
//
// Usage: node server.js ROOT CERT KEY H1 H1TLS H2 H2C IDLE_MS RECYCLE
"use strict";

const crypto = require("crypto");
const fs = require("fs");
const http = require("http");
const http2 = require("http2");
const https = require("https");
const path = require("path");
const zlib = require("zlib");

const [root, certFile, keyFile, h1Port, tlsPort, h2Port, h2cPort, idleMs, recycle] =
  process.argv.slice(2);
const IDLE_MS = Number(idleMs);
const RECYCLE = Number(recycle);
// httpbin's own bounds: /delay at most 10 s, /bytes at most 100 KiB, /stream 100 lines.
const MAX_DELAY_S = 10;
const MAX_BYTES = 100 * 1024;
const MAX_STREAM_LINES = 100;
const TYPES = { ".txt": "text/plain", ".html": "text/html", ".bin": "application/octet-stream" };

function sendJSON(res, status, value, extraHeaders = {}) {
  const body = Buffer.from(JSON.stringify(value) + "\n");
  res.writeHead(status, { "content-type": "application/json", "content-length": body.length, ...extraHeaders });
  res.end(body);
}

function queryArgs(url) {
  const args = {};
  for (const [k, v] of url.searchParams) {
    args[k] = k in args ? [].concat(args[k], v) : v;
  }
  return args;
}

function describe(req, url) {
  const headers = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (!k.startsWith(":")) headers[k.replace(/(^|-)(\w)/g, (m) => m.toUpperCase())] = String(v);
  }
  return {
    args: queryArgs(url),
    headers,
    origin: req.socket.remoteAddress,
    url: url.href,
    method: req.method,
  };
}

function asText(buf, ctype) {
  const s = buf.toString("utf8");
  if (Buffer.from(s, "utf8").equals(buf)) return s;
  return `data:${ctype || "application/octet-stream"};base64,${buf.toString("base64")}`;
}

function parseMultipart(body, ctype) {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(ctype);
  const form = {};
  const files = {};
  if (!m) return { form, files };
  const delimiter = Buffer.from("--" + (m[1] || m[2]));
  let start = body.indexOf(delimiter);
  while (start !== -1) {
    const partStart = start + delimiter.length + 2; // skip CRLF
    const next = body.indexOf(delimiter, partStart);
    if (next === -1) break;
    const part = body.subarray(partStart, next - 2); // drop CRLF before the delimiter
    const split = part.indexOf("\r\n\r\n");
    const head = part.subarray(0, split).toString("latin1");
    const content = part.subarray(split + 4);
    const name = /name="([^"]*)"/i.exec(head);
    const filename = /filename="([^"]*)"/i.exec(head);
    const partType = /content-type:\s*([^\r\n]+)/i.exec(head);
    if (name && filename) files[name[1]] = asText(content, partType && partType[1]);
    else if (name) form[name[1]] = content.toString("utf8");
    start = next;
  }
  return { form, files };
}

function anything(req, res, url) {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const ctype = req.headers["content-type"] || "";
    let form = {};
    let files = {};
    let data = "";
    let json = null;
    if (ctype.startsWith("multipart/form-data")) {
      ({ form, files } = parseMultipart(body, ctype));
    } else if (ctype.startsWith("application/x-www-form-urlencoded")) {
      form = queryArgs(new URL("http://x/?" + body.toString("latin1")));
    } else {
      data = asText(body, ctype);
      try {
        json = JSON.parse(body.toString("utf8"));
      } catch {
        json = null;
      }
    }
    sendJSON(res, 200, { ...describe(req, url), form, files, data, json });
  });
}

function staticFile(req, res, name) {
  const file = path.join(root, "static", path.normalize("/" + name));
  fs.stat(file, (err, st) => {
    if (err || !st.isFile()) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found\n");
      return;
    }
    const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
    const headers = {
      "content-type": TYPES[path.extname(file)] || "application/octet-stream",
      etag,
      "last-modified": st.mtime.toUTCString(),
    };
    if (req.headers["if-none-match"] === etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    res.writeHead(200, { ...headers, "content-length": st.size });
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    fs.createReadStream(file).pipe(res);
  });
}

function app(req, res, url, route) {
  let m;
  if (route === "/anything" || route.startsWith("/anything/")) return anything(req, res, url);
  if (route === "/redirect-to") {
    const status = Number(url.searchParams.get("status_code") || 302);
    res.writeHead(status, { location: url.searchParams.get("url") });
    return res.end();
  }
  if (route === "/cookies/set") {
    const cookies = [...url.searchParams].map(([k, v]) => `${k}=${v}; Path=/`);
    res.writeHead(302, { location: "/cookies", "set-cookie": cookies });
    return res.end();
  }
  if (route === "/cookies") {
    const jar = {};
    for (const pair of (req.headers.cookie || "").split(/;\s*/)) {
      const eq = pair.indexOf("=");
      if (eq > 0) jar[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    return sendJSON(res, 200, { cookies: jar });
  }
  if ((m = /^\/status\/(\d+)$/.exec(route))) {
    res.writeHead(Number(m[1]));
    return res.end();
  }
  if ((m = /^\/delay\/([\d.]+)$/.exec(route))) {
    const timer = setTimeout(() => sendJSON(res, 200, describe(req, url)), Math.min(Number(m[1]), MAX_DELAY_S) * 1000);
    res.on("close", () => clearTimeout(timer));
    return;
  }
  if ((m = /^\/stream\/(\d+)$/.exec(route))) {
    res.writeHead(200, { "content-type": "application/json" });
    const n = Math.min(Number(m[1]), MAX_STREAM_LINES);
    for (let i = 0; i < n; i++) res.write(JSON.stringify({ ...describe(req, url), id: i }) + "\n");
    return res.end();
  }
  if (route === "/gzip") {
    const body = zlib.gzipSync(JSON.stringify({ ...describe(req, url), gzipped: true }) + "\n");
    res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": body.length });
    return res.end(body);
  }
  if ((m = /^\/etag\/(.+)$/.exec(route))) {
    const etag = `"${m[1]}"`;
    const sent = (req.headers["if-none-match"] || "").split(",").map((s) => s.trim());
    if (sent.includes(etag) || sent.includes(m[1]) || sent.includes("*")) {
      res.writeHead(304, { etag });
      return res.end();
    }
    return sendJSON(res, 200, describe(req, url), { etag });
  }
  if ((m = /^\/bytes\/(\d+)$/.exec(route))) {
    const body = crypto.randomBytes(Math.min(Number(m[1]), MAX_BYTES));
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
    return res.end(body);
  }
  res.writeHead(404, { "content-type": "text/plain" });
  res.end("not found\n");
}

function handler(scheme) {
  return (req, res) => {
    const url = new URL(req.url, `${scheme}://${req.headers.host || req.headers[":authority"]}`);
    const p = url.pathname;
    if (p.startsWith("/static/")) return staticFile(req, res, p.slice("/static/".length));
    return app(req, res, url, p.startsWith("/app/") ? p.slice("/app".length) : p);
  };
}

// HTTP/2 recycling: after RECYCLE streams, Http2Session.close() sends GOAWAY and ends the
// session once the streams already open are answered. Idle sessions close after IDLE_MS.
function h2Session(session) {
  let streams = 0;
  // Without these handlers an 'error' event (a client resetting the connection, a
  // protocol error) is thrown as an uncaught exception and the whole server exits, taking
  // every later check of the run with it. Log it and let the session or stream go.
  session.on("error", (err) => console.error(`h2 session error: ${err.code || ""} ${err.message}`));
  session.setTimeout(IDLE_MS, () => session.close());
  session.on("stream", (stream) => {
    stream.on("error", (err) => console.error(`h2 stream error: ${err.code || ""} ${err.message}`));
    streams += 1;
    if (RECYCLE > 0 && streams === RECYCLE) session.close();
  });
}

const tls = { cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) };
const servers = [
  [http.createServer(handler("http")), h1Port],
  [https.createServer(tls, handler("https")), tlsPort],
  [http2.createSecureServer({ ...tls, allowHTTP1: true }, handler("https")), h2Port],
  [http2.createServer(handler("http")), h2cPort],
];
for (const [server, port] of servers) {
  // HTTP/1.1 recycling and idle timeout: Node's own settings.
  server.keepAliveTimeout = IDLE_MS;
  if (RECYCLE > 0) server.maxRequestsPerSocket = RECYCLE;
  server.on("session", h2Session);
  server.on("sessionError", (err) => console.error(`sessionError: ${err.code || ""} ${err.message}`));
  server.listen(Number(port), "127.0.0.1");
}
