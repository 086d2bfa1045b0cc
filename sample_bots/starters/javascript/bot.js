// A starter bot for the arena (protocol v1, docs/protocol.md) in Node.js, standard library only.
//
//   node bot.js --port 9005 --secret S      (or PORT and ARENA_BOT_SECRET in the environment)
//
// It answers every game with a uniformly random legal action. Edit chooseAction() to make it smarter.
"use strict";

const http = require("http");
const crypto = require("crypto");

const GAMES = ["piranha-pedro", "piranha-pedro-ko", "piranha-pedro-ko-advanced", "pajarracos"];
const MAX_BODY = 4 * 1024 * 1024;

function option(name, fallback) {
  const i = process.argv.indexOf("--" + name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const host = option("host", "127.0.0.1");
const port = Number(option("port", process.env.PORT || 9005));
const secret = option("secret", process.env.ARENA_BOT_SECRET || "");
const info = { apiversion: "1", name: "starter-js", author: "you", version: "1", games: GAMES };

// Your strategy: the request has "game", "decision", "view" (what your seat may see) and
// "legal_actions"; answer one of the legal actions, unchanged.
function chooseAction(request) {
  const legal = request.legal_actions;
  return legal[Math.floor(Math.random() * legal.length)];
}

// The last /act turn seen per match and seat: an older or repeated turn is stale (replayed).
const lastTurn = new Map();
// Matches that ended (the newest 4096): none of their turns is answered again.
const ended = new Set();
// What only each route's body carries. The signature covers the body, not the path: a captured /act or
// /start body posted to /end would otherwise make the bot forget a running match's turns.
const ROUTE_KEYS = { "/start": "time_controls", "/act": "legal_actions", "/end": "result" };

function bodyFitsRoute(route, request) {
  if (!secret || !(route in ROUTE_KEYS)) return true;
  if (request === null || typeof request !== "object" || !(ROUTE_KEYS[route] in request)) return false;
  return Object.entries(ROUTE_KEYS).every(([path, key]) => path === route || !(key in request));
}

function validSignature(body, header) {
  if (!secret) return true;
  const expected = Buffer.from("sha256=" + crypto.createHmac("sha256", secret).update(body).digest("hex"));
  const given = Buffer.from(String(header || ""));
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

function reply(res, status, payload) {
  const body = JSON.stringify(payload);
  // Headers and body leave in one write (writeHead + end(body)); Nagle is off (setNoDelay below).
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

function handle(req, res, body) {
  if (req.method === "GET" && req.url === "/") return reply(res, 200, info);
  if (req.method !== "POST") return reply(res, 404, { error: "not found" });
  if (!validSignature(body, req.headers["x-arena-signature"])) return reply(res, 401, { error: "bad signature" });
  let request;
  try {
    request = JSON.parse(body.toString("utf8"));
  } catch (e) {
    return reply(res, 400, { error: "body is not JSON" });
  }
  if (!bodyFitsRoute(req.url, request)) return reply(res, 400, { error: "the body is for another route" });
  if (req.url === "/act") {
    const key = request.match_id + "/" + request.seat;
    if (String(request.turn) !== req.headers["x-arena-turn"] || request.turn <= (lastTurn.get(key) || 0) ||
        (secret && ended.has(request.match_id))) {
      return reply(res, 409, { error: "stale or replayed turn" });
    }
    lastTurn.set(key, request.turn);
    return reply(res, 200, { action: chooseAction(request) });
  }
  if (req.url === "/end") {
    for (const key of lastTurn.keys()) if (key.startsWith(request.match_id + "/")) lastTurn.delete(key);
    ended.add(request.match_id);
    if (ended.size > 4096) ended.delete(ended.values().next().value);
    return reply(res, 200, { ok: true });
  }
  if (req.url === "/start") return reply(res, 200, { ok: true });
  return reply(res, 404, { error: "not found" });
}

const server = http.createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) return req.destroy();
    chunks.push(chunk);
  });
  req.on("end", () => {
    try {
      handle(req, res, Buffer.concat(chunks));
    } catch (e) {
      reply(res, 500, { error: String(e).slice(0, 200) });
    }
  });
});
server.keepAliveTimeout = 60000;  // the referee keeps one connection per seat for the whole match
server.on("connection", (socket) => socket.setNoDelay(true));
server.listen(port, host, () => {
  console.log(`starter-js bot listening on http://${host}:${port} (signatures ${secret ? "on" : "off"})`);
});
process.on("SIGTERM", () => process.exit(0));
