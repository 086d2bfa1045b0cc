// A complete arena bot in Node.js using only the standard library (http, crypto).
// Plays the first legal action. Run: ARENA_BOT_SECRET=... node minimal_bot.js 9005
const http = require("http");
const crypto = require("crypto");

const port = Number(process.argv[2] || 9005);
const secret = process.env.ARENA_BOT_SECRET || "";
const info = { apiversion: "1", name: "minimal-js", author: "you", version: "1",
               games: ["piranha-pedro", "piranha-pedro-ko", "piranha-pedro-ko-advanced", "pajarracos"] };

function signed(body, header) {
  if (!secret) return true;
  const expected = "sha256=" + crypto.createHmac("sha256", secret).update(body).digest("hex");
  return header !== undefined && header.length === expected.length &&
         crypto.timingSafeEqual(Buffer.from(header), Buffer.from(expected));
}

function reply(res, status, payload) {
  const body = JSON.stringify(payload);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    if (req.method === "GET") return reply(res, 200, info);
    if (!signed(body, req.headers["x-arena-signature"])) return reply(res, 401, { error: "bad signature" });
    const request = JSON.parse(body.toString("utf8"));
    if (req.url === "/act") return reply(res, 200, { action: request.legal_actions[0] });
    return reply(res, 200, { ok: true });   // /start and /end
  });
}).listen(port, "127.0.0.1", () => console.log(`minimal-js bot on http://127.0.0.1:${port}`));
